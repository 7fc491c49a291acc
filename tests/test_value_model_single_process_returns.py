"""A function that hands back None wherever the world has several ranks
(``if not enabled: return None; if dist.get_world_size() > 1: return None;
return Store(key)``) hands a caller nothing that differs, whatever test
chose its ``return`` (``analysis/complements.py``,
``none_wherever_several_ranks``): a rank-decided ``enabled`` no longer makes
``store is not None`` differ.  A size test of another group, a return of
another value before the exit, or no exit at all still differ."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_CACHE = """
    import os

    import torch.distributed as dist
    from helpers import comm


    class Store:
        def __init__(self, key):
            self.key = key

        def get(self, name):
            path = os.path.join("/cache", self.key, name)
            return path if os.path.exists(path) else None


    class Layer:
        def __init__(self):
            self.merged = False

        def install(self, mapped):
            self.merged = True

        def forward(self, t):
            if not self.merged:
                dist.all_reduce(t)


    class Pipeline:
        def store_for(self, key, enabled):
            if not enabled:
                return {early}
            if {several}:
                return None
            return Store(key)

        def merge(self, layer, store):
            mapped = store.get("w")
            if mapped is None:
                return
            layer.install(mapped)

        def apply(self, layer, key, rank):
            store = self.store_for(key, rank == 0)
            if store is not None:
                self.merge(layer, store)
"""


def _cache(early="None", several="dist.is_initialized() and dist.get_world_size() > 1"):
    return _CACHE.replace("{early}", early).replace("{several}", several)


def test_none_wherever_the_world_has_several_ranks_decides_nothing():
    assert _codes(_cache()) == []


def test_the_world_size_test_alone_decides_nothing_either():
    assert _codes(_cache(several="dist.get_world_size() != 1")) == []


def test_any_job_test_of_the_presets_may_stand_beside_it():
    # ``dist.is_available()`` is one of the torch preset's job tests, as is ``is_initialized()``
    assert _codes(_cache(several="dist.is_available() and dist.get_world_size() > 1")) == []


def test_deepspeeds_facade_asks_the_same_size():
    # deepspeed.comm keeps torch.distributed's signatures: its get_world_size() is the whole job's size
    source = _cache(several="dist.is_initialized() and dist.get_world_size() > 1")
    assert _codes(source.replace("import torch.distributed as dist", "import deepspeed.comm as dist")) == []


def test_a_world_size_call_the_presets_do_not_name_still_differs():
    assert _codes(_cache(several="comm.get_world_size() > 1")) == [("CSL101", 26)]


def test_the_size_of_another_group_still_differs():
    assert _codes(_cache(several="comm.get_world_size() > 1")) == [("CSL101", 26)]


def test_another_value_returned_before_the_exit_still_differs():
    assert _codes(_cache(early="Store(key)")) == [("CSL101", 26)]


def test_a_test_that_holds_in_a_world_of_one_still_differs():
    assert _codes(_cache(several="dist.get_world_size() > 2")) == [("CSL101", 26)]
