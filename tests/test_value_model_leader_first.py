"""One rank does some local work first and the others repeat it after a
barrier (``if rank == 0: local = fetch(p) else: local = None; barrier();
if rank != 0: local = fetch(p)``): past the second test every rank holds
what the call returns (``analysis/complements.py``).  Tests that are not
complements, a test operand or an argument changed between them, another
call, an ``else`` on the second test or a rebinding in between still
differ."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_STORE = """
    import json
    import os

    import torch.distributed as dist


    def fetch(path):
        local = os.path.join("/cache", path)
        if not os.path.exists(local):
            os.makedirs(local)
        return local


    def read_scale(local):
        with open(os.path.join(local, "config.json")) as f:
            return json.load(f)["scale"]


    class Store:
        def __init__(self):
            self.scales = {}

        def load(self, path, name, rank):
            if rank == 0:
                local = fetch(path)
            else:
                local = None
            dist.barrier()
            {between}
            if {second}:
                local = fetch({argument})
            {after}
            self.scales[name] = read_scale(local)

        def apply(self, t, name):
            self.load("store", name, dist.get_rank())
            if self.scales[name] > 1:
                dist.all_reduce(t)
"""


def _store(between="pass", second="rank != 0", argument="path", after="pass"):
    return _STORE.replace("{between}", between).replace("{second}", second).replace(
        "{argument}", argument).replace("{after}", after)


def test_the_others_after_the_leader_hold_what_the_call_returns():
    assert _codes(_store()) == []


def test_a_negated_test_is_a_complement_too():
    assert _codes(_store(second="not rank == 0")) == []


def test_tests_that_are_not_complements_still_differ():
    assert _codes(_store(second="rank != 1")) == [("CSL101", 39)]


def test_a_test_operand_changed_in_between_still_differs():
    assert _codes(_store(between="rank = rank + 1")) == [("CSL101", 39)]


def test_another_argument_still_differs():
    assert _codes(_store(argument="name")) == [("CSL101", 39)]


def test_a_name_rebound_in_between_still_differs():
    assert _codes(_store(between="local = None")) == [("CSL101", 39)]


def test_an_argument_rebound_in_between_still_differs():
    assert _codes(_store(between="path = str(rank)")) == [("CSL101", 39)]


def test_an_else_on_the_second_test_still_differs():
    assert _codes(_store(after="else:\n                local = None")) == [("CSL101", 40)]


def test_a_call_the_rank_reaches_still_differs():
    source = _store().replace("local = fetch(path)", "local = fetch(path + str(rank))")
    assert _codes(source) == [("CSL101", 39)]


def test_the_leader_binding_none_still_differs():
    source = _store().replace("local = fetch(path)\n            else:\n                local = None",
                              "local = None\n            else:\n                local = fetch(path)", 1)
    assert _codes(source) == [("CSL101", 39)]


def test_a_name_an_import_rebinds_in_between_still_differs():
    # an import binds as an assignment does: the test's operand, the call's argument or the name itself
    for between in ("from .ranks import rank", "from .paths import path", "import path", "from . import local"):
        assert _codes(_store(between=between)) == [("CSL101", 39)], between
