"""Each element of a tuple a method returns when it is called through what a
receiver holds (issue 14): ``rows, count, meta = self.splitter.split(batch)``,
where the field ``splitter`` holds an object of a class of another module of
the tree, binds ``meta`` to what the method's last elements hold (an object
built on every rank, never None) and ``rows`` to the first (this rank's rows);
the whole-tree pass finds the method by the receiver and reads its returns
by position where every one writes out a tuple of that length, else the
whole result, as for a function imported by name."""

import textwrap

from cslint.api import check_paths


SPLITTING = """
    import torch.distributed as dist


    class SplitInfo:
        def __init__(self, widths, count):
            self.widths = widths
            self.count = count


    class Splitter:
        def __init__(self, size):
            self.size = size
            self.rank = dist.get_rank()

        def split(self, batch):
            mine = [row for i, row in enumerate(batch) if i % self.size == self.rank]
            widths = [len(batch) // self.size] * self.size
            return mine, len(mine), SplitInfo(widths, len(mine))

        def split_loosely(self, batch):
            mine = [row for i, row in enumerate(batch) if i % self.size == self.rank]
            if not mine:
                return None
            return mine, len(mine), SplitInfo([], 0)


    def exchange(t, info):
        dist.all_to_all_single(t, t, output_split_sizes=info.widths)
"""

RUNNER = """
    import torch.distributed as dist

    from pkg.splitting import Splitter


    class Runner:
        def __init__(self, size, split):
            self.splitter: Splitter | None = None
            if split:
                self.splitter = Splitter(size)

        def sample(self, batch, t):
            info = None
            if self.splitter is not None:
                batch, count, info = self.splitter.split(batch)
            if info is not None:
                dist.all_gather([t], t)     # 18: an object on every rank that splits
            if batch:
                dist.all_reduce(t)          # 20: this rank's rows

        def sample_loosely(self, batch, t):
            info = None
            if self.splitter is not None:
                batch, count, info = self.splitter.split_loosely(batch)
            if info is not None:
                dist.all_gather([t], t)     # 27: one return is None: the whole result
"""


def _lines(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "splitting.py").write_text(textwrap.dedent(SPLITTING))
    (package / "runner.py").write_text(textwrap.dedent(RUNNER))
    result = check_paths([str(tmp_path)], report="per-site")
    return sorted(f.line for f in result.findings if f.path.endswith("runner.py"))


def test_a_method_called_through_a_field_hands_back_its_tuple_element_by_element(tmp_path):
    lines = _lines(tmp_path)
    assert 18 not in lines
    assert 20 in lines


def test_a_method_returning_other_shapes_hands_back_its_whole_result(tmp_path):
    assert 27 in _lines(tmp_path)
