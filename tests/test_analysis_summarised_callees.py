"""A helper whose result decides a collective, in a file no round parses
(issue 14: DeepSpeed's ``pg_utils.is_parallel(group)``).

A file with nothing that can reach a collective is not parsed by the
prefilter rounds, so a call of one of its functions ran none of the
program's: its result read every argument whole.  Guarding a collective
over an optional group with such a helper (``return group is not None and
get_world_size(group) > 1``) then made the guard as rank-local as the
group's identity -- which differs between the members of different groups
when each rank keeps the group it found itself in -- although the helper
reads only whether the group is there and its size.  Such a callee is now
summarised beside the callees whose exceptions decide a collective
(``engine/gather.py``, ``_deciding_callees``) and its call reads what its
returns make of its arguments (``ProgramReads._callee_returns``): a helper
handed this rank's id still makes its guard rank-local.  What such a helper
reads itself stays unknown, as before (reading it brought in 47 findings on
DeepSpeed through one configuration loader's ``os.path.exists``)."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

GROUPS = """
    import torch.distributed as dist


    def spans_several(group):
        return group is not None and dist.get_world_size(group) > 1


    def holds_first(ranks, me):
        return ranks[0] == me
"""

ENGINE = """
    import torch.distributed as dist

    from pkg.util import groups


    class Layout:
        def __init__(self, axes, table):
            self.axes = axes
            self.table = table

        def members(self, axis, index):
            position = self.axes.index(axis)
            return [self.table[key] for key in self.table.keys() if key[position] == index]

        def lists(self, axis):
            return [self.members(axis, index) for index in range(2)]


    class Mesh:
        def __init__(self, layout, parts):
            self.layout = layout
            self.me = dist.get_rank()
            self.shard_group = None
            for part in range(parts):
                ranks = sorted(self.layout.members("shard", part))
                group = dist.new_group(ranks=ranks)
                if self.me in ranks:
                    self.shard_group = group
            assert self.shard_group is not None
            for members in self.layout.lists("data"):
                group = dist.new_group(ranks=members)
                if self.me in members:
                    self.data_members = members

        def shard_group_of_rank(self):
            return self.shard_group


    class Trainer:
        def __init__(self, mesh=None):
            if mesh is None:
                self.model_parallel_group = None
            else:
                self.model_parallel_group = mesh.shard_group_of_rank()

        def reduce_norm(self, norm):
            if groups.spans_several(self.model_parallel_group):
                dist.all_reduce(norm, group=self.model_parallel_group)

        def reduce_norm_inline(self, norm):
            if self.model_parallel_group is not None and dist.get_world_size(self.model_parallel_group) > 1:
                dist.all_reduce(norm, group=self.model_parallel_group)

        def report(self, ranks):
            if groups.holds_first(ranks, dist.get_rank()):
                dist.barrier()


    def build(axes, table):
        return Trainer(Mesh(Layout(axes, table), 2))
"""


def _findings(tmp_path) -> list:
    root = tmp_path / "pkg"
    (root / "util").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "util" / "__init__.py").write_text("")
    (root / "util" / "groups.py").write_text(textwrap.dedent(GROUPS))
    (root / "engine.py").write_text(textwrap.dedent(ENGINE))
    result = check_paths([str(root)])
    lines = textwrap.dedent(ENGINE).splitlines()
    return sorted((f.code, lines[f.line - 1].strip()) for f in result.findings)


def test_a_helper_reading_only_whether_the_group_is_there_and_its_size_agrees(tmp_path):
    # VALID: the helper reads the group's None-ness and size, as the inline
    # test does; the group's identity (which members) is not read
    found = _findings(tmp_path)
    assert ("CSL101", "dist.all_reduce(norm, group=self.model_parallel_group)") not in found


def test_a_helper_handed_this_ranks_id_is_reported(tmp_path):
    # INVALID: the helper compares the rank it is handed, so the barrier runs on one rank alone
    assert _findings(tmp_path) == [("CSL101", "dist.barrier()")]
