"""A name an ``if`` arm binds, read in that arm, holds what its value reads
alone: every rank reading it there took the arm (issue 14 §2.4, a value a
wrapper's broadcast made uniform, bound under a test of this rank's own
cache).  Past the arm -- the statement after the ``if``, a loop's way round,
a ``continue``, a ``break``, a handler -- the name still carries the test."""

import textwrap

from cslint.api import check_source

INSIDE = """
    import torch
    import torch.distributed as dist

    _chosen = {}


    class Picker:
        def __init__(self, group, rank):
            self.group = group
            self.rank = rank

        def _share(self, value):
            values = [value]
            dist.broadcast_object_list(values, group=self.group, group_src=0)
            return values[0]

        def _measure(self):
            return self._share(None)

        def pick(self, records, name):
            key = (torch.cuda.current_device(), name)
            choice = _chosen.get(key)
            if choice is None:
                choice = self._share(records.get(name) if self.rank == 0 else None)
                if not choice:                       # read by ranks that all missed their cache
                    choice = self._measure()
                _chosen[key] = choice
            return choice

        def pick_after(self, records, name):
            key = (torch.cuda.current_device(), name)
            choice = _chosen.get(key)
            if choice is None:
                choice = self._share(records.get(name) if self.rank == 0 else None)
            if not choice:                           # reported: a rank that hit its cache reads it too
                choice = self._measure()
            return choice
"""


def _guards(source):
    report = check_source(textwrap.dedent(source))
    return sorted((f.line, f.condition) for f in report.findings)


def test_a_name_read_in_the_arm_that_bound_it_is_decided_by_its_value():
    # the measuring call inside the arm is decided by the cache test alone (one
    # finding, at the broadcast it shares a guard with); past the arm the
    # broadcast result meets the cached value
    assert _guards(INSIDE) == [(25, "choice is None"), (35, "choice is None"), (37, "not choice")]


PAST = """
    import torch.distributed as dist


    def after_arm(t):
        x = 0
        if dist.get_rank() == 0:
            x = 1
        if x:
            dist.all_reduce(t)          # reported: x read past the arm


    def back_edge(t):
        x = 0
        for _ in range(3):
            if x:
                dist.all_reduce(t)      # reported: an earlier pass's arm bound x
            if dist.get_rank() == 0:
                x = 1


    def via_continue(t, items):
        x = 0
        for item in items:
            if x:
                dist.all_reduce(t)      # reported: the arm went round by continue
            if dist.get_rank() == 0:
                x = item
                continue


    def via_break(t, items):
        x = 0
        for item in items:
            if dist.get_rank() == 0:
                x = item
                break
        if x:
            dist.all_reduce(t)          # reported: the arm left the loop


    def elements(t):
        out = []
        if dist.get_rank() == 0:
            y = out.pop() if out else 1
            out = [y]
        if out:
            dist.all_reduce(t)          # reported: the arm's binding of the list


    def loop_after(t, items):
        pending = list(items)
        if dist.get_rank() == 0:
            pending = []
        for _ in pending:
            dist.all_reduce(t)          # reported: the loop counts what the arm bound

"""


def test_the_test_reaches_every_way_out_of_the_arm():
    lines = sorted(f.line for f in check_source(textwrap.dedent(PAST), report="per-site").findings)
    assert lines == [10, 17, 26, 39, 48, 56]


# Rank 0 computes the value and broadcasts it, the others receive it: both
# arms end by binding the name to the broadcast's element, so the test
# choosing the arm no longer reaches it.  The earlier binding in the root's
# arm (its own computation, replaced before any way out) must not bring the
# test back on the way out of that arm.
REPLACED = """
    import torch.distributed as dist


    def compute():
        return open("x").read()


    def shared(t, group):
        result = None
        if dist.get_rank(group) == 0:
            result = compute()
            box = [result]
            dist.broadcast_object_list(box, src=0, group=group)
            result = box[0]
        else:
            box = [None]
            dist.broadcast_object_list(box, src=0, group=group)
            result = box[0]
        if result:
            dist.all_reduce(t, group=group)   # every rank holds the broadcast value
"""


def test_a_name_an_arm_binds_alike_past_a_plain_binding_takes_no_gate():
    assert check_source(textwrap.dedent(REPLACED)).findings == []
