"""A local name every binding of which is None or a call of a function that
hands back None wherever the world has several ranks (``store =
self.store_for(key)`` under a rank-decided test) is None on every rank of
such a world, whichever binding a rank ran last; in a world of one nothing
differs.  So no test deciding which binding ran reaches the name, nor a
parameter a caller binds to it, nor a local tested from it (``use =
store is not None and merge``; ``analysis/complements.py``,
``names_none_wherever_several_ranks``).  Another value bound to the name,
a callee that still hands back a store where several ranks run, or a
collective the callee issues before its exit still differ."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_CACHE = """
    import os

    import torch.distributed as dist


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
                return None
            {before}if {several}:
                return None
            return Store(key)

        def merge(self, layer, store):
            mapped = store.get("w")
            if mapped is None:
                return
            layer.install(mapped)

        def apply_layers(self, layer, merge_weights, store=None):
            use_store = store is not None and merge_weights
            if use_store:
                self.merge(layer, store)

        def apply(self, layer, key, merge_weights):
            store = {first}
            if dist.get_rank() == 0:
                store = self.store_for(key, merge_weights)
            {use}
"""

_THROUGH_LOCAL = """use_store = store is not None and merge_weights
            if use_store:
                self.merge(layer, store)"""

_THROUGH_PARAMETER = "self.apply_layers(layer, merge_weights, store=store)"


def _cache(use=_THROUGH_LOCAL, first="None", several="dist.get_world_size() > 1", before=""):
    return (_CACHE.replace("{use}", use).replace("{first}", first).replace("{several}", several)
            .replace("{before}", before))


def test_a_local_tested_from_the_name_decides_nothing():
    assert _codes(_cache()) == []


def test_a_parameter_the_caller_binds_to_the_name_decides_nothing():
    assert _codes(_cache(use=_THROUGH_PARAMETER)) == []


def test_another_value_bound_to_the_name_still_differs():
    assert _codes(_cache(first="Store(key)")) == [("CSL101", 25)]
    assert _codes(_cache(use=_THROUGH_PARAMETER, first="Store(key)")) == [("CSL101", 25)]


def test_a_callee_that_hands_back_a_store_where_several_ranks_run_still_differs():
    assert _codes(_cache(several="dist.get_world_size() > 2")) == [("CSL101", 25)]


def test_a_collective_before_the_callees_exit_still_runs_only_on_some_ranks():
    found = _codes(_cache(before="dist.barrier()\n            "))
    assert ("CSL101", 51) in found  # ``store = self.store_for(...)`` under the rank test
