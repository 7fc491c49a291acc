"""A function attached to an object at run time (issue 14, recall; analysis/attached.py): a partitioner equips
each parameter it converts with a closure over itself, ``param.gather_all = gather_all``, or with one of its own
bound methods, ``weight.fetch_shards = self.fetch_shards``, and a context manager later gathers through
``self.params[0].gather_all(...)`` on a parameter list nothing types.  Such a call may run any function attached
under that name, so the collective the closure reaches counts in the manager's ``__enter__``, and a rank-local
early exit before a block entering it skips it; the manager's name also spreads to files that enter it.  A name
a builtin container or scalar defines as a method (``text.partition(":")``) is never followed that way, and a
test every rank agrees on stays quiet."""

import textwrap

from cslint.api import check_paths, check_source


def _codes(source):
    return [(f.code, f.line, f.function) for f in check_source(textwrap.dedent(source)).findings]


_PARTITIONER = """
    import glob
    import os

    import torch.distributed as dist


    class Partitioner:
        def __init__(self, group):
            self.group = group

        def convert(self, param):
            def gather_all(param_list=None):
                if param_list is None:
                    param_list = [param]
                return self._gather(param_list)

            def partition(param_list=None):
                return self._gather(param_list or [param])

            param.gather_all = gather_all
            param.partition = partition

        def _gather(self, param_list):
            for p in param_list:
                dist.all_gather_into_tensor(p, p, group=self.group)


    class Gathered:
        def __init__(self, params):
            self.params = list(params)

        def __enter__(self):
            self.params[0].gather_all(param_list=self.params)
            return self

        def __exit__(self, *exc):
            return False
"""


def test_invalid_a_local_file_check_returns_before_a_block_gathering_through_an_attached_closure():
    assert _codes(_PARTITIONER + """

    def load(folder, params):
        if not glob.glob(os.path.join(folder, "*.pt")):
            return None
        with Gathered(params):
            total = len(params)
        return total
    """) == [("CSL102", 44, "load")]


def test_valid_an_agreed_test_before_the_block():
    assert _codes(_PARTITIONER + """

    def load(params, world_size):
        if world_size < 2:
            return None
        with Gathered(params):
            total = len(params)
        return total
    """) == []


def test_valid_a_name_builtin_types_define_is_not_followed_to_an_attached_function():
    assert _codes(_PARTITIONER + """

    def split_key(folder, key):
        if not glob.glob(os.path.join(folder, "*.pt")):
            return None
        head, _, tail = key.partition(":")
        return head, tail
    """) == []


_LAYER = """
    import torch.distributed as dist


    class ShardedLinear:
        def __init__(self, weight, group):
            self.weight = weight
            self.group = group
            weight.fetch_shards = self.fetch_shards

        def fetch_shards(self, params_list):
            for p in params_list:
                dist.all_gather_into_tensor(p, p, group=self.group)


    class GatherLayerParams:
        def __init__(self, params):
            self.params = list(params)

        def __enter__(self):
            self.params[0].fetch_shards(self.params)
            return self

        def __exit__(self, *exc):
            return False
"""

_LOADER = """
    import os

    from .layers import GatherLayerParams


    def restore(folder, params):
        if not os.path.exists(os.path.join(folder, "latest")):
            return None
        with GatherLayerParams(params):
            total = len(params)
        return total
"""


def test_invalid_a_bound_method_attached_in_another_file_is_reached_through_the_managers_name(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text(textwrap.dedent(_LAYER))
    (package / "loader.py").write_text(textwrap.dedent(_LOADER))
    found = sorted((f.path.rsplit("/", 1)[-1], f.line, f.code) for f in check_paths([str(package)]).findings)
    assert found == [("loader.py", 10, "CSL102")]
