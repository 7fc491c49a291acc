"""A module function of another file reached under a rank test (issue 14).

A function that issues a collective itself spreads to the other files of
the run as a wrapper name (``engine/gather.py``, ``wrapper_names``); one
whose name is too short or too common to spread alone spreads with its
module (``typedcalls.module_entry``), and a caller's call counts only where
it goes through that module (``calls_module_wrapper``), an argument-free
call (``groups.sync()``) as well as one with arguments: the function scan
keeps the two apart (``bare_calls``, ``calls_by_statement``).

A function that only reaches a collective through a helper of its own file
(``def make_group(): return _plain_group()``) is deep in its file, where
chains are followed, but does not spread: its callers in other files are
summarised and the collective is lost (the strict xfails below).
"""

from __future__ import annotations

import textwrap

import pytest
from package_findings import package_findings, write_package

GROUPS = """
    import torch.distributed as dist

    _GROUP = None


    def barrier_all():
        dist.barrier()


    def dispatch_sync():
        barrier_all()


    def plain_group():
        return dist.new_group([0, 1])


    def make_group():
        return plain_group()


    def memo_group():
        global _GROUP
        if _GROUP is None:
            _GROUP = dist.new_group([0, 1])
        return _GROUP


    def memo_getter():
        return memo_group()


    def sync(group=None):
        dist.barrier(group=group)
"""

CALLER = """
    import torch.distributed as dist
    {imports}


    def run():
        if dist.get_rank() == 0:
            {call}
"""

#: the line of the call in CALLER, as written to disk
CALL_LINE = 8


def _reported(tmp_path, imports: str, call: str) -> list:
    write_package(tmp_path, "pkg", {"groups.py": GROUPS,
                                    "caller.py": CALLER.format(imports=imports, call=call)})
    return sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in package_findings(tmp_path))


def _through_module_and_by_name(function: str, arguments: str = "") -> list:
    return [("from . import groups", f"groups.{function}({arguments})"),
            (f"from .groups import {function}", f"{function}({arguments})")]


@pytest.mark.parametrize("function", ["barrier_all", "plain_group", "memo_group"])
@pytest.mark.parametrize("how", [0, 1])
def test_a_function_issuing_the_collective_itself_is_reached_from_another_module(tmp_path, function, how):
    imports, call = _through_module_and_by_name(function)[how]
    assert _reported(tmp_path, imports, call) == [("caller.py", "CSL101", CALL_LINE)]


def test_a_short_named_module_function_is_reached_through_its_module(tmp_path):
    imports, call = _through_module_and_by_name("sync", "None")[0]
    assert _reported(tmp_path, imports, call) == [("caller.py", "CSL101", CALL_LINE)]


def test_an_argument_free_call_of_a_short_named_module_function_is_reached(tmp_path):
    imports, call = _through_module_and_by_name("sync")[0]
    assert _reported(tmp_path, imports, call) == [("caller.py", "CSL101", CALL_LINE)]


@pytest.mark.parametrize("function", ["dispatch_sync", "make_group", "memo_getter"])
def test_a_two_level_chain_in_one_file_is_reached(tmp_path, function):
    source = GROUPS + CALLER.format(imports="", call=f"{function}()")
    write_package(tmp_path, "pkg", {"together.py": source})
    found = package_findings(tmp_path)
    assert [(f.code, f.line) for f in found] == [("CSL101", textwrap.dedent(GROUPS).count("\n") + CALL_LINE)]


@pytest.mark.xfail(strict=True, reason="only a function issuing a collective itself spreads to other files "
                                       "(engine/gather.py wrapper_names: site.collective); one reaching it "
                                       "through a helper of its own file is deep there only, so the caller "
                                       "in another module stays summarised")
@pytest.mark.parametrize("function", ["dispatch_sync", "make_group", "memo_getter"])
@pytest.mark.parametrize("how", [0, 1])
def test_a_two_level_chain_across_modules_is_reached(tmp_path, function, how):
    imports, call = _through_module_and_by_name(function)[how]
    assert _reported(tmp_path, imports, call) == [("caller.py", "CSL101", CALL_LINE)]

