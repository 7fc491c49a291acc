"""A size-named name is a group's size only where what it holds is one
(issues 12 and 14, ``cslint.analysis.sizereads``).  ``dp_size =
len(own_requests)`` holds this rank's own count whatever it is called: a
test of it against 1 is an ordinary test of a rank-local value, not a test
of whether a group has one rank, and ``world_size > 1`` of such a local does
not hold in every world of several ranks.  Names and fields that hold a
size read from a size source keep their reading."""

import textwrap

from cslint.api import check_paths

_OWN_COUNT = "len([r for r in reqs if r.owner == dist.get_rank()])"


def _lines(tmp_path, source: str) -> list:
    path = tmp_path / "sizes.py"
    path.write_text(textwrap.dedent(source))
    return sorted(f.line for f in check_paths([str(path)], report="per-site").findings)


_FOLD = """
    import torch
    import torch.distributed as dist


    def step(reqs, x):
        world_size = SOURCE
        if world_size > 1:
            dist.all_reduce(x)
        return x
"""


def test_a_world_size_local_holding_this_ranks_own_count_does_not_fold(tmp_path):
    assert _lines(tmp_path, _FOLD.replace("SOURCE", _OWN_COUNT)) == [9]


def test_a_world_size_local_unpacked_from_a_call_does_not_fold(tmp_path):
    source = _FOLD.replace("world_size = SOURCE", "world_size, _ = divmod(" + _OWN_COUNT + ", 2)")
    assert _lines(tmp_path, source) == [9]


def test_a_world_size_local_read_from_the_world_still_folds(tmp_path):
    # in a world of several ranks ``world_size > 1`` holds: the collective runs on every rank
    assert _lines(tmp_path, _FOLD.replace("SOURCE", "dist.get_world_size()")) == []
    assert _lines(tmp_path, _FOLD.replace("SOURCE", 'int(os.environ.get("WORLD_SIZE", 1))')
                  .replace("import torch\n", "import os\n    import torch\n", 1)) == []


_BOUND = """
    import torch
    import torch.distributed as dist
    from sglang.srt.distributed import get_dp_group


    class Scheduler:
        def __init__(self, reqs):
            dp_size = SOURCE
            if dp_size == 1:
                self.loop = self._loop_one
            else:
                self.loop = self._loop_many

        def _loop_one(self):
            if dist.get_rank() % 2:
                dist.all_reduce(torch.zeros(1), group=get_dp_group().device_group)

        def _loop_many(self):
            dist.barrier()

        def run(self):
            self.loop()
"""


def test_a_method_bound_where_a_size_named_count_is_one_may_run_on_several_ranks(tmp_path):
    # the ranks with one request of their own each run ``_loop_one``: many of them, and they part ways
    assert _lines(tmp_path, _BOUND.replace("SOURCE", _OWN_COUNT)) == [17]


def test_a_method_bound_where_the_groups_size_is_one_runs_where_it_has_one_rank(tmp_path):
    assert _lines(tmp_path, _BOUND.replace("SOURCE", "get_dp_group().world_size")) == []


_FIELD = """
    import torch
    import torch.distributed as dist


    class Worker:
        def __init__(self, reqs, group):
            self.num_tp_ranks = SOURCE

        def step(self, group):
            if self.num_tp_ranks > 1:
                dist.all_reduce(torch.zeros(1), group=group)
"""


def test_a_size_named_field_set_to_this_ranks_own_count_is_read_by_what_it_holds(tmp_path):
    assert _lines(tmp_path, _FIELD.replace("SOURCE", _OWN_COUNT)) == [12]


def test_a_size_named_field_set_to_a_groups_size_stays_uniform(tmp_path):
    assert _lines(tmp_path, _FIELD.replace("SOURCE", "dist.get_world_size(group)")) == []
