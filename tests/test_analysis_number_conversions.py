"""A builtin conversion to a number (``int(x)``, ``float(x)``, ``complex(x)``)
makes a number whatever it converts, or raises: no structure of what it
converts -- whether a poll came back None or an enum member, a container's
length -- is a structure of the result, only its value (issue 14,
uniform-after-collective-not-recognised; ``vocabulary.NUMBER_CONVERSIONS``).

The shape: each rank polls its senders, a poll's state read from a
wall-clock timeout that hands back None or a state; the polls, one per
sender, are converted with ``int()`` and agreed over the TP and then the CP
group by a helper that hands the list back unreduced where it is empty, then
relayed down the stages.  Past the nesting limit the second agreement's
argument holds the first draw's whole value, and its structure is what the
helper's early exit reads: were the polls' None-ness a structure of the list,
the draws would leak into every caller of the agreed result.  A list whose
length a rank-local test decides still differs, and so does the converted
number itself."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings]


_POLLED = """
    import time
    from typing import List, Optional

    import torch
    import torch.distributed as dist


    class Sender:
        def __init__(self, timeout):
            self.timeout = timeout
            self.start = time.time()
            self.state = 1

        def _timed_out(self) -> Optional[int]:
            if time.time() - self.start < self.timeout:
                return None
            return 0

        def poll(self) -> int:
            status = self.state
            late = self._timed_out()
            if late is not None:
                status = late
            return status


    def agree(flags: List[int], group) -> List[int]:
        if not flags or dist.get_world_size(group) == 1:
            return flags
        t = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=group)
        return t.tolist()


    def draw(pollers) -> List[int]:
        return [int(p.poll()) for p in pollers]


    def reduce_polls(polls: List[int], group) -> List[int]:
        return agree(flags=polls, group=group)


    def relay(polls, stage_group, stage, stages, pending: List):
        if stages <= 1:
            return polls
        for work in pending:
            work.wait()
        pending.clear()
        data = polls
        if stage > 0:
            data = stage_group.recv_object(src=stage - 1)
        if stage + 1 < stages:
            pending.extend(stage_group.send_object(data, dst=stage + 1))
        return data


    def poll_all(pollers, tp, cp, stage_group, stage, stages, pending):
        polls: List[int] = []
        if stage == 0:
            polls = draw(pollers)
            polls = reduce_polls(polls, tp)
            polls = reduce_polls(polls, cp)
        polls = relay(polls, stage_group, stage, stages, pending)
        return polls


    class Queue:
        def __init__(self, tp, cp, stage_group, stage, stages):
            self.tp, self.cp = tp, cp
            self.stage_group, self.stage, self.stages = stage_group, stage, stages
            self.pending = []
            self.queue = []

        def pop_ready(self):
            if not self.queue:
                return []
            polls = poll_all(self.queue, self.tp, self.cp, self.stage_group, self.stage, self.stages, self.pending)
            ready, waiting = [], []
            for sender, poll in zip(self.queue, polls):
                if poll == 0:
                    ready.append(sender)
                else:
                    waiting.append(sender)
            self.queue = waiting
            return ready

        def step(self):
            ready = self.pop_ready()
            if ready:
                dist.barrier(group=self.tp)
"""


def test_polls_converted_to_numbers_and_agreed_stay_agreed_through_the_empty_exit():
    # VALID: one poll per sender on every rank; what each poll is (None or a state before `int()`) decides
    # its number, never the list's length, so neither the helper's `not flags` exit, the queue the agreed
    # polls keep, nor the barrier its truth decides differs
    assert _codes(_POLLED) == []


def test_polls_whose_count_a_rank_local_test_decides_still_differ():
    # INVALID: a filter on the polls' values decides how many there are: the list's length is rank-local
    source = _POLLED.replace("return [int(p.poll()) for p in pollers]",
                             "return [int(p.poll()) for p in pollers if p.poll() != 0]")
    assert _codes(source) == [("CSL102", 32), ("CSL102", 78), ("CSL101", 91)]


def test_a_converted_number_still_differs_in_its_value():
    # INVALID: the number is the poll's own value, which the wall clock decides
    source = _POLLED + textwrap.indent(textwrap.dedent("""
        def poll_one(self, sender):
            if int(sender.poll()) == 0:
                dist.barrier(group=self.tp)
    """), "        ")
    assert _codes(source) == [("CSL101", 95)]
