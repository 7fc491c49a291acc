"""A queue of entries whose contents are rank-local (a wall-clock stamp, a
poll result) but whose entries every rank adds and drops alike: its own
structure (truth, length) is kept apart from its elements through the reads
and writes such a queue goes through (issue 14, object-taint-spread):

- ``bool(x)`` is ``x``'s truth: of a container, whether it is empty;
- ``for a, b in zip(xs, ys)`` binds each name to the elements of its own
  argument (nested in ``enumerate`` too, and in a comprehension); the loop
  runs as many times as the arguments' own structures say;
- ``self.xs = kept``, with ``kept`` a local filled by element stores, hands
  the field both parts as the walks kept them apart;
- past the nesting limit, a call of a function of the file that reaches a
  collective keeps its arguments bound, so polls agreed by one helper and
  relayed by another stay agreed.

A rank-local test deciding which entries are kept still makes the length
rank-local."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_QUEUE = """
    import time
    import torch
    import torch.distributed as dist


    class Releases:
        def __init__(self, group):
            self.group = group
            self.pending = []

        def defer(self, req):
            start = time.monotonic()
            self.pending.append((req, start, start + 5.0))
"""


def test_bool_of_a_field_queue_reads_its_own_structure():
    # VALID: every rank appends one stamped entry per deferred request
    assert _codes(_QUEUE + """
        def has_pending(self):
            return bool(self.pending)

        def step(self, t):
            if self.has_pending():
                dist.all_reduce(t, group=self.group)
    """) == []


def test_bool_of_a_rank_local_number_is_still_its_value():
    # INVALID: the truth of a number read from the wall clock
    assert _codes(_QUEUE + """
        def late(self):
            return bool(time.monotonic() > 100.0)

        def step(self, t):
            if self.late():
                dist.all_reduce(t, group=self.group)
    """) == [("CSL101", 21)]


def test_bool_of_a_queue_filled_under_a_wall_clock_test_differs():
    # INVALID: entries are added only where this rank's clock says so
    assert _codes(_QUEUE + """
        def maybe_defer(self, req):
            if time.monotonic() > 100.0:
                self.pending.append(req)

        def has_pending(self):
            return bool(self.pending)

        def step(self, t):
            if self.has_pending():
                dist.all_reduce(t, group=self.group)
    """) == [("CSL101", 25)]


_RESOLVE_AGREED = """
        def resolve(self):
            now = time.monotonic()
            ready = torch.tensor([1 if now >= deadline else 0 for _, _, deadline in self.pending])
            dist.all_reduce(ready, group=self.group, op=dist.ReduceOp.MIN)
            kept = []
            for entry, ok in zip(self.pending, ready.tolist()):
                if not ok:
                    kept.append(entry)
            self.pending = kept
"""

_STEP = """
        def step(self, t):
            if self.pending:
                dist.all_reduce(t, group=self.group)
"""


def test_zip_binds_each_name_to_its_own_argument():
    # VALID: the entries kept are those the group agreed on; their stamps are contents
    assert _codes(_QUEUE + _RESOLVE_AGREED + _STEP) == []


def test_zip_inside_enumerate_binds_each_name_to_its_own_argument():
    # VALID: the same, through enumerate(zip(...)) and a nested target
    assert _codes(_QUEUE + _RESOLVE_AGREED.replace(
        "for entry, ok in zip(self.pending, ready.tolist()):",
        "for i, (entry, ok) in enumerate(zip(self.pending, ready.tolist())):") + _STEP) == []


def test_zip_in_a_comprehension_binds_each_name_to_its_own_argument():
    # VALID: the kept entries are picked by the agreed flags in a comprehension
    assert _codes(_QUEUE + """
        def resolve(self):
            now = time.monotonic()
            ready = torch.tensor([1 if now >= deadline else 0 for _, _, deadline in self.pending])
            dist.all_reduce(ready, group=self.group, op=dist.ReduceOp.MIN)
            ready = ready.tolist()
            self.pending = [entry for entry, ok in zip(self.pending, ready) if not ok]
    """ + _STEP) == []


def test_zip_with_a_rank_local_flag_list_still_differs():
    # INVALID: the flags zipped with the entries are this rank's own clock tests
    assert _codes(_QUEUE + """
        def resolve(self):
            now = time.monotonic()
            ready = [now >= deadline for _, _, deadline in self.pending]
            kept = []
            for entry, ok in zip(self.pending, ready):
                if not ok:
                    kept.append(entry)
            self.pending = kept
    """ + _STEP) == [("CSL101", 27)]


def test_the_entry_zipped_in_still_carries_its_own_stamp():
    # INVALID: the kept entries are chosen by each entry's own wall-clock deadline
    assert _codes(_QUEUE + """
        def resolve(self, flags):
            now = time.monotonic()
            kept = []
            for entry, flag in zip(self.pending, flags):
                if entry[2] > now:
                    kept.append(entry)
            self.pending = kept
    """ + _STEP) == [("CSL101", 26)]



_SHAPED = """
    import time
    import torch
    import torch.distributed as dist


    class Releases:
        def __init__(self, group):
            self.group = group
            self.pending = []

        def defer(self, req, deadline):
            self.pending.append(req if time.monotonic() < deadline else None)

        def resolve(self, agreed):
            kept = []
            for entry in self.pending:
                if agreed:
                    kept.append(entry)
            self.pending = KEPT
"""


def test_a_field_set_to_a_local_list_keeps_its_length_apart():
    # VALID: each entry's None-ness follows the clock, but entries are kept by an agreed flag
    assert _codes(_SHAPED.replace("KEPT", "kept") + _STEP) == []


def test_a_field_set_to_a_local_list_filtered_by_its_elements_differs():
    # INVALID: the list kept is filtered by the entries' clock-decided None-ness
    assert _codes(_SHAPED.replace("if agreed:", "if entry is not None:").replace("KEPT", "kept") + _STEP) \
        == [("CSL101", 24)]


_RELAYED = """
    import random
    from typing import List

    import torch
    import torch.distributed as dist


    def agree(flags: List[int], group) -> List[int]:
        if not flags or dist.get_world_size(group) == 1:
            return flags
        t = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=group)
        return t.tolist()


    def draw(pollers) -> List[int]:
        return [int(0) if random.random() < 0.1 else int(x.poll()) for x in pollers]


    def reduce_polls(polls: List[int], group) -> List[int]:
        return agree(polls, group)


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


    def step(pollers, tp, cp, stage_group, stage, stages, pending):
        polls = poll_all(pollers, tp, cp, stage_group, stage, stages, pending)
        for x, poll in zip(pollers, polls):
            if poll == 0:
                dist.barrier(group=tp)
"""


def test_a_call_of_a_helper_reaching_a_collective_keeps_its_arguments_bound_past_the_nesting_limit():
    # VALID: the drawn polls are agreed twice, then relayed down the stages by a helper that
    # reaches a collective itself; past the nesting limit its call keeps its arguments bound,
    # so the agreed polls stay agreed instead of spilling the draws into the result
    assert _codes(_RELAYED) == []


def test_polls_relayed_without_agreement_still_differ():
    # INVALID: the same relay of draws no rank agreed on
    assert _codes(_RELAYED.replace("polls = reduce_polls(polls, tp)", "polls = relay(polls, tp, 0, 1, [])")
                  .replace("polls = reduce_polls(polls, cp)", "polls = relay(polls, cp, 0, 1, [])")) \
        == [("CSL101", 53)]


def test_a_zip_loop_runs_as_its_arguments_say():
    # INVALID: one argument's length is this rank's clock reading
    assert _codes(_QUEUE + """
        def sync(self, xs):
            for x, tick in zip(xs, range(int(time.monotonic()))):
                dist.all_reduce(x, group=self.group)
    """) == [("CSL103", 18)]


def test_a_zip_loop_over_agreed_lengths_is_uniform():
    # VALID: both arguments' lengths are the same on every rank, whatever the entries hold
    assert _codes(_QUEUE + """
        def sync(self, xs):
            for entry, x in zip(self.pending, range(len(self.pending))):
                dist.all_reduce(torch.zeros(1), group=self.group)
    """) == []
