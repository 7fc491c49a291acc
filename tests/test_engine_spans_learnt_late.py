"""The group spans a tree's own getters define are known once the first
prefilter round has read the last file, while the workers already extract the
files chosen before (issue 12: reading overlaps extraction again).  A file
extracted before the spans came that asked the span of a word they change is
extracted again, so its facts are those of an extraction that knew them from
the start; the others keep theirs."""

import textwrap

from cslint.api import check_paths
from cslint.config import Settings
from cslint.engine.workers import BATCH, PARALLEL_THRESHOLD, ParseJob, RunContext, Workers

from test_analysis_group_getters import _SUBGROUP_GETTER

_LEARNT = (("dp_tp", frozenset({"tp"})),)

# this rank's place in the group the tree's getter names differs along what
# that group spans
_ASKS_DP_TP = b"""
import torch.distributed as dist
from .parallel import get_dp_tp_group


def poll(flag):
    if dist.get_rank(group=get_dp_tp_group()) == 0:
        dist.barrier()
"""

_ASKS_NOTHING = b"""
import torch.distributed as dist


def poll(flag):
    if flag:
        dist.barrier()
"""


def _job(name: str, data: bytes) -> ParseJob:
    return ParseJob(f"/pkg/{name}.py", data, Settings(), f"pkg.{name}", frozenset())


def _rank_dims(facts) -> list:
    """What the rank id deciding the barrier of ``poll`` differs along."""
    barrier = facts.functions[0].variants[None].sites[0]
    return [sorted(dims) for cond in barrier.conds for atom in cond.atoms for _mode, dims in atom.dims]


def _jobs() -> list:
    return [_job("asks", _ASKS_DP_TP)] + [_job(f"quiet{i}", _ASKS_NOTHING) for i in range(BATCH)]


def test_files_extracted_before_the_spans_were_learnt_are_extracted_again_where_they_asked_one():
    context = RunContext.of(["torch_distributed"])
    with Workers(1, 1, RunContext.of(["torch_distributed"], _LEARNT)) as here:
        here.learn_spans(_LEARNT)
        known_from_the_start = here.map(_jobs())
    with Workers(1, 1, context) as here:
        here.learn_spans(())
        never_learnt = here.map(_jobs())
    # the file that asks reads the span the getter defines ({tp}, not {dp, tp})
    assert known_from_the_start[:1] != never_learnt[:1]
    assert known_from_the_start[1:] == never_learnt[1:]

    with Workers(2, PARALLEL_THRESHOLD, context) as workers:
        assert workers.pool is not None

        def jobs():
            yield from _jobs()  # a whole batch: sent to a worker before the spans are known
            workers.learn_spans(_LEARNT)
            yield _job("after", _ASKS_DP_TP)

        late = workers.map(jobs())
        assert workers.context.knowledge.world.span("dp_tp") == frozenset({"tp"})
    assert late[:-1] == known_from_the_start
    # (a job sent after the spans were learnt is extracted with them at once)
    assert _rank_dims(late[-1]) == _rank_dims(known_from_the_start[0]) == [["tp"]]
    assert _rank_dims(never_learnt[0]) == [["dp", "tp"]]


# this rank's place in the TP ranks of its DP rank is alike over DP, so only
# the second barrier is reported (the facts hold what the rank id differs along)
_POLLS = """
    import torch.distributed as dist

    from .zz_parallel import get_dp_group, get_dp_tp_group


    def poll():
        if dist.get_rank(group=get_dp_tp_group().cpu_group) == 0:
            dist.barrier(group=get_dp_group().cpu_group)
        if dist.get_rank(group=get_dp_tp_group().cpu_group) == 0:
            dist.barrier(group=get_dp_tp_group().cpu_group)     # reported
"""


def test_a_tree_whose_getter_file_is_read_last_lints_alike_with_workers_and_without(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    # files enough for the workers, read before the getters' module (the last in the walk's order)
    for i in range(PARALLEL_THRESHOLD):
        (package / f"a{i:02d}.py").write_text(textwrap.dedent(_POLLS))
    (package / "zz_parallel.py").write_text(textwrap.dedent(_SUBGROUP_GETTER))

    def lines(jobs):
        return sorted((f.path.rsplit("/", 1)[-1], f.line)
                      for f in check_paths([str(package)], report="per-site", jobs=jobs, cache=False).findings)

    alone = lines(1)
    assert alone == [(f"a{i:02d}.py", 11) for i in range(PARALLEL_THRESHOLD)]
    assert lines(2) == alone
