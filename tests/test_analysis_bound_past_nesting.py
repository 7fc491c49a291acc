"""Past the nesting limit of call results a call keeps its arguments bound to
its callee's parameters, each flattened (``results.AtomBuilder.call``, issue
14): an argument the callee does not return (a batch's random token ids,
which a size test never reads) stays out of its result, where it used to
spill into it and reach every reader.  The flattened arguments keep two
levels of calls bound in turn (``results.BOUND_LEVELS``), so polls agreed
over one group and then another, then relayed, stay agreed over both; the
raw draws lifted out of the inner agreement read as agreed over the outer
group only.  A callee that does read the argument, and polls agreed over
the wrong group, are still found."""

import textwrap

from cslint.api import check_paths

SIZER = """
    import numpy as np
    import torch.distributed as dist


    def padded(size):
        return max(size, 1)


    def bucket(size):
        return padded(size) // 8


    def make_key(bucketed, label):
        return (bucketed, label)


    def label_of(size):
        return "wide" if size > 64 else "narrow"


    class Backend:
        def __init__(self, limit):
            self.limit = limit

        def fits(self, ids, key):
            return key[0] <= self.limit

        def fits_tokens(self, ids, key):
            return key[0] <= self.limit and ids[:1] != b"x"


    class Runner:
        def __init__(self, group, limit):
            self.group = group
            self.backend = Backend(limit)

        def can_replay(self, ids, size):
            key = make_key(bucket(padded(size)), label_of(size))
            return self.backend.fits(ids, key)

        def can_replay_tokens(self, ids, size):
            key = make_key(bucket(padded(size)), label_of(size))
            return self.backend.fits_tokens(ids, key)

        def run(self, ids, size, tensor):
            if self.can_replay(ids, size):
                dist.all_reduce(tensor, group=self.group)                  # VALID: the size alone decides
            if self.can_replay_tokens(ids, size):
                dist.all_reduce(tensor, group=self.group)                  # INVALID: the random ids decide


    def profile(group, tensor):
        runner = Runner(group, 8)
        ids = np.random.randint(0, 100, size=16).tobytes()
        runner.run(ids, 16, tensor)
"""

POLLS = """
    import time
    from typing import List, Optional

    import torch
    import torch.distributed as dist


    class Sender:
        def __init__(self, timeout):
            self.timeout = timeout
            self.start = time.time()
            self.state = 1

        def _expired(self) -> Optional[int]:
            if time.time() - self.start < self.timeout:
                return None
            return 0

        def poll(self) -> int:
            status = self.state
            late = self._expired()
            if late is not None:
                status = late
            return status


    def agree_tp(flags: List[int], tp_group) -> List[int]:
        if not flags or dist.get_world_size(tp_group) == 1:
            return flags
        t = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=tp_group)
        return t.tolist()


    def agree_cp(flags: List[int], cp_group) -> List[int]:
        if not flags or dist.get_world_size(cp_group) == 1:
            return flags
        t = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=cp_group)
        return t.tolist()


    def draw(pollers) -> List[int]:
        return [p.poll() for p in pollers]


    def relay(polls, stage_group, stage, stages):
        if stages <= 1:
            return polls
        data = polls
        if stage > 0:
            data = stage_group.recv_object(src=stage - 1)
        if stage + 1 < stages:
            stage_group.send_object(data, dst=stage + 1)
        return data


    def poll_both(pollers, tp, cp, stage_group, stage, stages):
        polls: List[int] = []
        if stage == 0:
            polls = draw(pollers)
            polls = agree_tp(polls, tp)
            polls = agree_cp(polls, cp)
        return relay(polls, stage_group, stage, stages)


    def poll_cp_only(pollers, tp, cp, stage_group, stage, stages):
        polls: List[int] = []
        if stage == 0:
            polls = draw(pollers)
            polls = agree_cp(polls, cp)
            polls = agree_cp(polls, cp)
        return relay(polls, stage_group, stage, stages)


    class Queue:
        def __init__(self, tp, cp, stage_group, stage, stages):
            self.tp, self.cp = tp, cp
            self.stage_group, self.stage, self.stages = stage_group, stage, stages
            self.queue = [Sender(5.0)]

        def ready_both(self):
            polls = poll_both(self.queue, self.tp, self.cp, self.stage_group, self.stage, self.stages)
            return [s for s, poll in zip(self.queue, polls) if poll == 0]

        def ready_cp_only(self):
            polls = poll_cp_only(self.queue, self.tp, self.cp, self.stage_group, self.stage, self.stages)
            return [s for s, poll in zip(self.queue, polls) if poll == 0]

        def step(self):
            if self.ready_both():
                dist.barrier(group=self.tp)                                # VALID: agreed over tp, then cp
            if self.ready_cp_only():
                dist.barrier(group=self.tp)                                # INVALID: agreed over cp only
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _check(tmp_path, name, text):
    source = textwrap.dedent(text)
    (tmp_path / name).write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    marked = set(_marked(source, "VALID")) | set(_marked(source, "INVALID"))
    assert _marked(source, "VALID") and _marked(source, "INVALID")
    return sorted({f.line for f in findings if f.path.endswith(name)} & marked), _marked(source, "INVALID")


def test_an_argument_the_callee_never_returns_stays_out_past_the_nesting_limit(tmp_path):
    flagged, expected = _check(tmp_path, "sizer.py", SIZER)
    assert flagged == expected


def test_two_agreements_inside_a_relayed_call_both_count(tmp_path):
    flagged, expected = _check(tmp_path, "polls.py", POLLS)
    assert flagged == expected
