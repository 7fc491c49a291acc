"""A device made from this rank's index (``torch.device(f"cuda:{local_rank}")``)
is a device on every rank: never None, of one type, true.  The index is held
inside it, as a ``CamelCase`` library object holds what it was built with
(cslint/analysis/vocabulary.py PLACE_CLASSES), and read back by ``.index``.
So ``device or torch.device("cpu")`` and the communicators built on it in
another module do not differ in structure; a test of the index still does."""

import textwrap

from cslint.api import check_paths

_LIMITS = """
    class Limits:
        def __init__(self, group, device):
            self.group = group
            self.device = device
            self.limit = 64

        def fits(self, n):
            return n <= self.limit
"""

_COMM = """
    import torch
    import torch.distributed as dist


    class Base:
        def __init__(self, group, device=None):
            self.group = group
            self.device = device or torch.device("cpu")


    class Comm(Base):
        def __init__(self, group, device, use_limits):
            super().__init__(group, device)
            from pkg.limits import Limits

            self.limits = None
            if use_limits:
                self.limits = Limits(group=self.group, device=self.device)

        def all_reduce(self, t):
            limits = self.limits
            if limits is not None and limits.fits(t.numel()):
                return t
            dist.all_reduce(t, group=self.group)
            return t
"""


def _codes(tmp_path, extra: str) -> tuple:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "limits.py").write_text(textwrap.dedent(_LIMITS))
    source = textwrap.dedent(_COMM) + textwrap.dedent(extra)
    (package / "comm.py").write_text(source)
    found = sorted((f.code, f.line) for f in check_paths([str(package)], report="per-site").findings)
    return found, source.splitlines()


def _line(lines: list, text: str) -> int:
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_a_communicator_on_this_ranks_device_does_not_differ_in_structure(tmp_path):
    # VALID: whether `limits` exists and what it answers do not follow the device index
    found, _lines = _codes(tmp_path, """

        def build(group, use_limits):
            return Comm(group, torch.device(f"cuda:{dist.get_rank()}"), use_limits)
    """)
    assert found == []


def test_an_index_picked_one_way_on_some_ranks_still_makes_a_device(tmp_path):
    # VALID: the index is the local rank or the global one, by a test that differs between ranks;
    # a number either way, and a device is made of it on every rank
    found, _lines = _codes(tmp_path, """

        def build(group, use_limits):
            index = int(os.environ["LOCAL_RANK"]) if dist.get_rank() % 2 else dist.get_rank()
            return Comm(group, torch.device(f"cuda:{index}"), use_limits)
    """.replace("def build", "import os\n\n\ndef build", 1))
    assert found == []


def test_a_test_of_the_device_index_still_differs(tmp_path):
    # INVALID: rank 0's device index is 0, the others' are not
    found, lines = _codes(tmp_path, """

        def warm(group, t):
            device = torch.device(f"cuda:{dist.get_rank()}")
            if device.index == 0:
                dist.broadcast(t, src=0, group=group)
    """)
    assert ("CSL101", _line(lines, "dist.broadcast(")) in found


def test_a_rank_number_defaulted_by_or_still_differs(tmp_path):
    # INVALID: `rank or 1` is 1 on rank 0 and the rank elsewhere (a number's truth is its value)
    found, lines = _codes(tmp_path, """

        def warm(group, t):
            step = dist.get_rank() or 1
            if step > 1:
                dist.broadcast(t, src=0, group=group)
    """)
    assert ("CSL101", _line(lines, "dist.broadcast(")) in found
