"""A list or tuple written out in a call keeps its elements apart at a
parameter read by a constant position (cslint/analysis/positions.py): the
callee's ``buffers[0].element_size()`` reads the first element alone, whose
kind is alike on every rank (a rank's own slice of alike data), though the
second differs in every way.  Each valid shape is paired with one whose read
element, or whose parameter, really differs per rank."""

import textwrap

from cslint.api import check_paths, check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


_OPTIMIZER = """
    import torch.distributed as dist


    class Optimizer:
        def __init__(self, flat, group):
            self.group = group
            self.state = {}
            rank = dist.get_rank(group=group)
            self.partition = flat.narrow(0, rank * 16, 16)

        def gather_parts(self, flat_buffers, group):
            world_size = dist.get_world_size(group=group)
            per_element = flat_buffers[0].element_size()
            chunk = max(1, (1 << 20) // (world_size * len(flat_buffers) * per_element))
            for start in range(0, 4096, chunk):
                dist.all_reduce(flat_buffers[0], group=group)

        def step(self):
            local = self.partition
            momentum = self.state.get(dist.get_rank())
            if momentum is None:
                self.gather_parts([local], self.group)
            else:
                self.gather_parts({call}, self.group)
"""


def test_the_element_read_by_position_is_the_one_passed_there():
    assert _lines(_OPTIMIZER.replace("{call}", "[local, momentum]")) == []
    assert _lines(_OPTIMIZER.replace("{call}", "(local, momentum)")) == []
    assert _lines(_OPTIMIZER.replace("self.gather_parts({call}, self.group)",
                                     "self.gather_parts(group=self.group, flat_buffers=[local, momentum])")) == []


def test_the_other_element_there_or_the_whole_list_still_differs():
    assert _lines(_OPTIMIZER.replace("{call}", "[momentum, local]")) == [25]
    assert _lines(_OPTIMIZER.replace("self.gather_parts({call}, self.group)",
                                     "both = [local, momentum]\n                self.gather_parts(both, self.group)")) == [26]


def test_a_parameter_whose_elements_may_move_is_read_whole():
    for moved in ("flat_buffers.reverse()", "flat_buffers = flat_buffers[::-1]", "flat_buffers[0] = flat_buffers[1]"):
        source = _OPTIMIZER.replace("{call}", "[local, momentum]").replace(
            "world_size = dist.get_world_size(group=group)",
            f"world_size = dist.get_world_size(group=group)\n            {moved}")
        assert _lines(source) == [26], moved


def test_the_position_reaches_a_callee_of_another_file(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "gather.py").write_text(textwrap.dedent("""
        import torch.distributed as dist


        def gather_parts(flat_buffers, group):
            per_element = flat_buffers[0].element_size()
            for start in range(0, 4096, per_element):
                dist.all_reduce(flat_buffers[0], group=group)
    """))
    (package / "optimizer.py").write_text(textwrap.dedent("""
        import torch.distributed as dist

        from pkg.gather import gather_parts


        class Optimizer:
            def __init__(self, flat, group):
                self.group = group
                self.state = {}
                rank = dist.get_rank(group=group)
                self.partition = flat.narrow(0, rank * 16, 16)

            def step(self):
                local = self.partition
                momentum = self.state.get(dist.get_rank())
                gather_parts([local, momentum], self.group)

            def step_other(self):
                momentum = self.state.get(dist.get_rank())
                gather_parts([momentum, self.partition], self.group)
    """))
    found = check_paths([str(tmp_path)], report="per-site").findings
    assert sorted((f.path.rsplit("/", 1)[-1], f.line) for f in found) == [("optimizer.py", 21)]
