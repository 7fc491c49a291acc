"""A ``with X(...):`` block runs ``X.__enter__`` and ``X.__exit__`` (issue 14, recall): where ``X`` is a class of
the tree whose ``__enter__`` or ``__exit__`` reaches a collective, a rank-local early exit before the block skips
that collective on some ranks only.  A block after a test every rank agrees on, a context manager of a library and
one whose methods issue nothing stay quiet."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line, f.function) for f in check_source(textwrap.dedent(source)).findings]


_GATHERED = """
    import glob
    import os

    import torch.distributed as dist


    class Gathered:
        def __init__(self, params, group=None):
            self.params = params
            self.group = group

        def __enter__(self):
            for p in self.params:
                dist.all_gather_into_tensor(p, p, group=self.group)
            return self

        def __exit__(self, *exc):
            return False


    class Released:
        def __init__(self, params, group=None):
            self.params = params
            self.group = group

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            dist.barrier(group=self.group)
            return False
"""


def test_invalid_a_local_file_check_returns_before_a_gathering_block():
    assert _codes(_GATHERED + """

    def load(folder, params, group):
        found = glob.glob(os.path.join(folder, "*.pt"))
        if not found:
            return None
        with Gathered(params, group=group) as gathered:
            total = len(gathered.params)
        return total
    """) == [("CSL102", 39, "load")]


def test_invalid_the_exit_reaches_the_collective():
    assert _codes(_GATHERED + """

    def save(folder, params, group):
        if not os.path.exists(folder):
            return None
        with Released(params, group=group):
            total = len(params)
        return total
    """) == [("CSL102", 38, "save")]


def test_valid_an_agreed_test_before_the_block():
    assert _codes(_GATHERED + """

    def load(params, group, world_size):
        if world_size < 2:
            return None
        with Gathered(params, group=group):
            total = len(params)
        return total
    """) == []


def test_valid_a_library_context_manager_or_one_that_issues_nothing():
    assert _codes(_GATHERED + """

    class Quiet:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False


    def load(folder, params, group):
        if not glob.glob(os.path.join(folder, "*.pt")):
            return None
        with open(folder) as handle, Quiet():
            total = len(handle.read())
        return total
    """) == []


def test_invalid_an_explicit_exit_call_on_a_local_of_the_class():
    assert _codes(_GATHERED + """

    def release(folder, params, group):
        held = Released(params, group=group)
        if not os.path.exists(folder):
            return None
        held.__exit__(None, None, None)
        return held
    """) == [("CSL102", 39, "release")]
