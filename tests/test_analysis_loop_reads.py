"""What a loop binds and reads in its own body (cslint/analysis/arms.py
ArmReads.read_only_in_body): a rank reading it in its k-th pass took the
loop's test as often as every other rank reading it in its k-th pass, so how
often the loop runs does not make it differ there; after the loop, in its
``else`` and in a later pass of a loop around it, it still does."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source)).findings)


HANDLE = """
    import torch.distributed as dist


    class Relay:
        def handle(self, item):
            if item is not None:
                dist.barrier()
"""


def test_what_the_body_binds_and_reads_does_not_differ_by_the_trip_count():
    # VALID for the callee's test: every rank that calls handle() got an item
    # from the queue in this pass; the loop itself repeats a collective a
    # rank-local number of times (CSL103 at the call)
    assert _codes(HANDLE + """
        def drain(self):
            count = dist.get_rank()
            done = 0
            while done < count:
                item = self.queue.get()
                self.handle(item)
                done += 1
    """) == [("CSL103", 15)]


def test_the_other_arm_of_an_if_holding_the_loop_binds_for_itself():
    assert _codes(HANDLE + """
        def drain(self, items):
            count = dist.get_rank()
            if self.relays:
                done = 0
                while done < count:
                    item = self.queue.get()
                    self.handle(item)
                    done += 1
            else:
                item = items.pop()
                print(item)
    """) == [("CSL103", 16)]


def test_what_the_body_binds_still_differs_after_the_loop():
    # INVALID: a rank that ran no pass hands on None
    assert ("CSL101", 8) in _codes(HANDLE + """
        def drain(self):
            count = dist.get_rank()
            item = None
            done = 0
            while done < count:
                item = self.queue.get()
                done += 1
            self.handle(item)
    """)


def test_what_the_body_binds_still_differs_in_a_later_pass_of_a_loop_around_it():
    # INVALID: the first pass of the inner loop in a later step reads what the
    # previous step's passes left, which a rank that ran none never bound
    assert ("CSL101", 8) in _codes(HANDLE + """
        def drain(self, steps):
            count = dist.get_rank()
            for step in range(steps):
                done = 0
                while done < count:
                    if step:
                        self.handle(item)
                    item = self.queue.get()
                    done += 1
    """)


LEFT_LOOP_TARGET = """
    import torch.distributed as dist


    def step(t, batches):
        chunk = [0] * dist.get_rank()
        for chunk in batches:
            print(chunk)
        for piece in chunk:
            dist.all_reduce(t)


    def step_counted(t, batches):
        chunk = [0] * dist.get_rank()
        for chunk in batches:
            print(chunk)
        n = len(chunk)
        for i in range(n):
            dist.all_reduce(t)
"""


def test_a_loop_iterating_the_target_of_a_loop_left_before_it_reads_what_the_target_held_before():
    # with no batches the first loop binds nothing and ``chunk`` is still this
    # rank's own list: the second loop's trip count reads it along the first
    # loop's way out (edges.restored), as the statements after the loop do
    assert _codes(LEFT_LOOP_TARGET) == [("CSL103", 10), ("CSL103", 19)]
