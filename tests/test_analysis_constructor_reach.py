"""A constructor call reaches what its ``__init__`` reaches.

``Cls(...)`` under a rank test runs ``Cls.__init__`` on some ranks only.  A
collective that ``__init__`` issues itself is found, and so is one it
reaches through a helper (a function of the file, a method of its own
class): a deep ``__init__`` makes calls written with its class's name deep
(``syntax.called_as``).  A subclass with no constructor of its own runs
the one it inherits, so a call of it issues what its base's ``__init__``
issues: in the base's file, in the subclass's file, and in a file that
only imports the subclass (``gather.inherited_wrapper_names``)."""

import textwrap

from package_findings import package_findings, write_package

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _line_of(source, text):
    """The 1-based line of ``text`` in the dedented ``source``."""
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


_HEAD = """
    import torch.distributed as dist


    def setup(group):
        dist.barrier(group=group)

"""


def test_a_collective_the_constructor_issues_itself_is_found():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            dist.barrier(group=group)


    def build():
        if dist.get_rank() == 0:
            return Exchange(None)  # the call
    """
    assert _lines(source) == [_line_of(source, "# the call")]


def test_a_constructor_called_by_name_reaches_its_helpers():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            setup(group)


    def build(ex):
        if dist.get_rank() == 0:
            Exchange.__init__(ex, None)  # the call
    """
    assert _lines(source) == [_line_of(source, "# the call")]


def test_a_constructor_call_reaches_its_helpers():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            setup(group)


    def build():
        if dist.get_rank() == 0:
            return Exchange(None)  # the call
    """
    assert _lines(source) == [_line_of(source, "# the call")]


def test_a_constructor_call_reaches_its_own_methods():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            self.start(group)

        def start(self, group):
            dist.barrier(group=group)


    def build():
        if dist.get_rank() == 0:
            return Exchange(None)  # the call
    """
    assert _lines(source) == [_line_of(source, "# the call")]


def test_a_subclass_inherits_its_bases_constructor_collective():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            dist.barrier(group=group)


    class TensorExchange(Exchange):
        pass


    def build():
        if dist.get_rank() == 0:
            return TensorExchange(None)  # the call
    """
    assert _lines(source) == [_line_of(source, "# the call")]


def test_a_subclass_of_a_subclass_inherits_the_same_collective():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            setup(group)


    class TensorExchange(Exchange):
        pass


    class PinnedTensorExchange(TensorExchange):
        \"\"\"Pinned host buffers.\"\"\"


    def build():
        if dist.get_rank() == 0:
            return PinnedTensorExchange(None)  # the call
    """
    assert _lines(source) == [_line_of(source, "# the call")]


def test_a_subclass_with_its_own_constructor_does_not_inherit_the_collective():
    source = _HEAD + """
    class Exchange:
        def __init__(self, group):
            dist.barrier(group=group)


    class LocalExchange(Exchange):
        def __init__(self, group):
            self.group = group


    def build():
        if dist.get_rank() == 0:
            return LocalExchange(None)
    """
    assert _lines(source) == []


_BASE = """
import torch.distributed as dist


class Exchange:
    def __init__(self, group):
        dist.barrier(group=group)
"""

_SUBCLASS = """
from .base import Exchange


class TensorExchange(Exchange):
    pass
"""

_CALLER = """
import torch.distributed as dist

from .sub import TensorExchange


def build():
    if dist.get_rank() == 0:
        return TensorExchange(None)  # the call
"""


def test_a_file_that_imports_the_subclass_reaches_the_inherited_collective(tmp_path):
    """Base, subclass and caller in three files: the subclass's name spreads
    to other files as its base's does (a constructor that issues directly)."""
    write_package(tmp_path, "pkg", {"base.py": _BASE, "sub.py": _SUBCLASS, "caller.py": _CALLER})
    findings = package_findings(tmp_path)
    found = sorted((f.path.rsplit("/", 1)[-1], f.line) for f in findings)
    assert found == [("caller.py", _CALLER.splitlines().index(next(
        line for line in _CALLER.splitlines() if "# the call" in line)) + 1)]
