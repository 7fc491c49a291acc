"""A unanimity test over a gather of this rank's own value is uniform over
the gather's group (issue 14, cause 4): ``all(v == mine for v in gathered)``
is true on every rank or on none, and ``mine is not None and all(...)`` too."""

import textwrap

from cslint.api import check_source

SHAPES = """
    import json

    import torch.distributed as dist


    def _fingerprint(path):
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        return len(data)


    def _all_match(path, group):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        return mine is not None and all(f == mine for f in gathered)


    def load(path, t, group):
        if not _all_match(path, group):
            return False
        dist.all_reduce(t, group=group)      # every rank returned alike: all files matched or none did
        return True


    def _mine_only(path, group):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        return mine is not None and any(f == mine for f in gathered)


    def load_any(path, t, group):
        if not _mine_only(path, group):
            return False
        dist.all_reduce(t, group=group)      # reported: `any` with this rank's own file differs
        return True


    def _other_value(path, group, other):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        return other is not None and all(f == mine for f in gathered)


    def load_other(path, t, group):
        if not _other_value(path, group, _fingerprint(path + ".b")):
            return False
        dist.all_reduce(t, group=group)      # reported: the other test reads another rank-local value
        return True


    def _gathered_another(path, group):
        mine = _fingerprint(path)
        theirs = _fingerprint(path + ".b")
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, theirs, group=group)
        return all(f == mine for f in gathered)


    def load_another(path, t, group):
        if not _gathered_another(path, group):
            return False
        dist.all_reduce(t, group=group)      # reported: the list holds another value than the one compared
        return True
"""


def test_a_unanimity_test_over_a_gather_of_the_own_value_is_uniform():
    lines = sorted(f.line for f in check_source(textwrap.dedent(SHAPES), report="per-site").findings)
    # INVALID: 26 (all files matched everywhere or nowhere); VALID: 40, 54, 69
    assert lines == [40, 54, 69]


# The negation written out: ``any(f != mine for f in gathered)`` is true on
# every rank where some rank read another fingerprint and false on all of
# them where none did; ``or``-ed to a test of ``mine`` alone it still decides.
# ``all(f != mine ...)`` is no unanimity test (false wherever a rank compares
# its own entry), and ``any(f == mine ...)`` is not read as one either.
NEGATED = """
    import json

    import torch.distributed as dist


    def _fingerprint(path):
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        return len(data)


    def load(path, t, group):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        if any(f != mine for f in gathered):
            return False
        dist.all_reduce(t, group=group)      # every rank left or none did
        return True


    def load_or(path, t, group):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        if mine is None or any(f != mine for f in gathered):
            return False
        dist.all_reduce(t, group=group)      # where the ranks differ, every rank left
        return True


    def load_and(path, t, group):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        if mine is None and any(f != mine for f in gathered):
            return False
        dist.all_reduce(t, group=group)      # reported: `and` lets this rank's own None decide
        return True


    def load_all_differ(path, t, group):
        mine = _fingerprint(path)
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
        if all(f != mine for f in gathered):
            return False
        dist.all_reduce(t, group=group)      # reported: not a unanimity test
        return True
"""


def test_any_unequal_over_a_gather_of_the_own_value_is_uniform():
    lines = sorted(f.line for f in check_source(textwrap.dedent(NEGATED), report="per-site").findings)
    # INVALID: 22 (any differs: all left or none), 32 (or-ed to a test of mine); VALID: 42, 52
    assert lines == [42, 52]


# -- a membership test on a gathered list, returned in a tuple and unpacked --------------------

GATHERED_MEMBERSHIP = """
    class Engine:
        def __init__(self, dist, enable_attention_dp):
            self.dist = dist
            self.enable_attention_dp = enable_attention_dp
            self.active_requests = []
            if self.dist.pp_size > 1:
                self.run = self._run_staged
            else:
                self.run = self._run_flat

        def _ready(self, batch):
            if self.enable_attention_dp:
                counts = self.dist.tp_allgather_int64([batch.count])[:, 0].tolist()
                ready = 0 not in counts
                ready_here = batch.count > 0
            else:
                ready = ready_here = batch.count > 0
            return ready, ready_here

        def _own_only(self, batch):
            if self.enable_attention_dp:
                self.dist.tp_allgather_int64([batch.count])
                ready = 0 not in [batch.count]
            else:
                ready = batch.count > 0
            return ready, batch.count > 0

        def _answer(self, batch):
            if self.enable_attention_dp:
                self.dist.allgather([batch])

        def _run_flat(self):
            batch = self.active_requests[0]
            ready, _ = self._ready(batch)
            if ready:
                self._answer(batch)             # line 37: the gathered verdict, and one stage
            ready, _ = self._own_only(batch)
            if ready:
                self._answer(batch)             # line 40: reported: only this rank's own count

        def _run_staged(self):
            batch = self.active_requests[0]
            ready, _ = self._ready(batch)
            if ready:
                self._answer(batch)             # line 46: reported: agreed over TP, not between stages
            if ready:
                self.dist.tp_allgather([batch])  # line 48: agreed over the gather's own group
"""


def test_a_count_missing_from_a_gathered_list_is_uniform_over_the_gather_group():
    # `0 not in gathered[:, 0].tolist()`, returned in a tuple and unpacked by the caller, reads
    # the gather's result: uniform over TP, and over the world where the stages are one rank
    lines = sorted(f.line for f in check_source(textwrap.dedent(GATHERED_MEMBERSHIP), report="per-site",
                                                presets=["tensorrt_llm"]).findings)
    assert lines == [40, 46]
