"""A module function of another file reached under a rank test (issue 14).

A function that issues a collective itself spreads to the other files of
the run as a wrapper name (``engine/gather.py``, ``wrapper_names``); one
whose name is too short or too common to spread alone spreads with its
module (``typedcalls.module_entry``), and a caller's call counts only where
it goes through that module (``calls_module_wrapper``), an argument-free
call (``groups.sync()``) as well as one with arguments: the function scan
keeps the two apart (``bare_calls``, ``calls_by_statement``).

A module-level function that only reaches a collective through helpers of
its own file (``def make_group(): return _plain_group()``, or on some paths
only, ``if flag: barrier_all()``) spreads with its module as well
(``gather._module_functions_calling``, at any depth inside the file),
whatever its name: a caller in another file calling it through that module
or by a name imported from it is analysed in depth.
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


    def maybe_sync(flag):
        if flag:
            barrier_all()
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


@pytest.mark.parametrize("function", ["dispatch_sync", "make_group", "memo_getter"])
@pytest.mark.parametrize("how", [0, 1])
def test_a_two_level_chain_across_modules_is_reached(tmp_path, function, how):
    imports, call = _through_module_and_by_name(function)[how]
    assert _reported(tmp_path, imports, call) == [("caller.py", "CSL101", CALL_LINE)]



OTHER = """
    def plain_group():
        return [0, 1]


    def make_group():
        return plain_group()
"""


CALLS_BOTH = """
    import torch.distributed as dist
    {imports}


    def run():
        if dist.get_rank() == 0:
            {other}
            {groups}
"""


@pytest.mark.parametrize("how", [0, 1])
def test_a_function_of_that_name_in_another_module_is_not_followed(tmp_path, how):
    # INVALID for the spread: ``other.make_group`` calls a helper of its own
    # file that issues nothing; the spread entry is ``pkg.groups.make_group``,
    # which a call reaches only through ``groups`` (its module or a name
    # imported from it); the call of ``groups.dispatch_sync`` next to it is
    # still reported
    imports = ["from . import groups, other", "from .groups import dispatch_sync; from .other import make_group"]
    other = ["other.make_group()", "make_group()"]
    groups = ["groups.dispatch_sync()", "dispatch_sync()"]
    caller = CALLS_BOTH.format(imports=imports[how], other=other[how], groups=groups[how])
    write_package(tmp_path, "pkg", {"groups.py": GROUPS, "other.py": OTHER, "caller.py": caller})
    found = sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in package_findings(tmp_path))
    assert found == [("caller.py", "CSL101", CALL_LINE + 1)]


@pytest.mark.parametrize("how", [0, 1])
def test_a_chain_across_modules_through_a_conditional_call_is_reached(tmp_path, how):
    imports, call = _through_module_and_by_name("maybe_sync", "True")[how]
    assert _reported(tmp_path, imports, call) == [("caller.py", "CSL101", CALL_LINE)]


UNGUARDED = """
    import torch.distributed as dist
    {imports}


    def run(flag):
        {call}
"""


@pytest.mark.parametrize("how", [0, 1])
def test_a_conditional_chain_every_rank_runs_alike_is_clean(tmp_path, how):
    # VALID: the caller runs ``maybe_sync`` on every rank, with a flag every
    # rank is handed alike; the spread makes it deep, not divergent
    imports, call = _through_module_and_by_name("maybe_sync", "flag")[how]
    write_package(tmp_path, "pkg", {"groups.py": GROUPS,
                                    "caller.py": UNGUARDED.format(imports=imports, call=call)})
    assert package_findings(tmp_path) == []


SETUP = """
    import json
    import os

    import torch.distributed as dist


    def discover_peers():
        dist.barrier()


    def load_config(config):
        if os.path.exists(config):
            with open(config, "r") as handle:
                return json.load(handle)
        return json.loads(config)


    def initialize(config, discover=False):
        if discover:
            discover_peers()
        return load_config(config)
"""

TRAINER = """
    import torch.distributed as dist
    from .setup import initialize


    def train(tensor, config):
        settings = initialize(config)
        if settings.get("sync"):
            dist.all_reduce(tensor)


    def train_own(tensor):
        settings = initialize(f"/tmp/config_{dist.get_rank()}.json")
        if settings.get("sync"):                          # INVALID: a configuration named by this rank's id
            dist.all_reduce(tensor)
"""


def test_a_spread_set_up_reading_its_configuration_file_leaves_the_settings_alike(tmp_path):
    # VALID: ``initialize`` spreads (it reaches ``discover_peers`` on some
    # paths) and returns what a configuration file it is handed holds: the
    # same on every rank, so a test of the settings decides nothing that
    # differs (DeepSpeed's initialize and its config loader had this shape)
    write_package(tmp_path, "pkg", {"setup.py": SETUP, "trainer.py": TRAINER})
    found = sorted((f.path.rsplit("/", 1)[-1], f.function) for f in package_findings(tmp_path))
    assert found == [("trainer.py", "train_own")]


POLLS = """
    import torch
    import torch.distributed as dist


    def reduce_flags(flags, group):
        flags = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(flags, op=dist.ReduceOp.MIN, group=group)
        return flags.tolist()


    def min_polls(polls, group):
        return reduce_flags(polls, group)


    def poll_and_reduce(senders, group):
        return min_polls([sender.poll() for sender in senders], group)


    def poll_over_both(senders, tp_group, cp_group):
        polls = poll_and_reduce(senders, tp_group)
        return min_polls(polls, cp_group)
"""

HANDSHAKES = """
    import time

    from {imports}


    class Handshakes:
        def __init__(self, tp_group, cp_group):
            self.pending = []
            self.tp_group = tp_group
            self.cp_group = cp_group

        def add(self, request):
            if time.monotonic() > request.deadline:
                return
            self.pending.append(request)

        def pop_ready(self):
            if len(self.pending) == 0:
                return []
            polls = {call}(self.pending, self.tp_group, self.cp_group)
            return [request for request, poll in zip(self.pending, polls) if poll]

        def pop_all_ready(self):
            polls = {call}(self.pending, self.tp_group, self.cp_group)
            return [request for request, poll in zip(self.pending, polls) if poll]
"""


@pytest.mark.parametrize("how", [0, 1])
def test_a_chain_three_calls_deep_in_its_module_is_reached_from_another_module(tmp_path, how):
    # INVALID: ``pop_ready`` leaves early where this rank's own queue of
    # handshakes is empty (filled only where its clock had not passed the
    # deadline), skipping the poll reduced over both groups; ``poll_over_both``
    # reaches the all-reduce through two helpers of its own module, so it
    # spreads with that module as ``min_polls`` does (``pop_all_ready``, which
    # every rank runs alike, stays clean)
    imports, call = [("pkg import polls", "polls.poll_over_both"),
                     ("pkg.polls import poll_over_both", "poll_over_both")][how]
    write_package(tmp_path, "pkg", {"polls.py": POLLS,
                                    "handshakes.py": HANDSHAKES.format(imports=imports, call=call)})
    found = sorted((f.path.rsplit("/", 1)[-1], f.code, f.line, f.function) for f in package_findings(tmp_path))
    assert found == [("handshakes.py", "CSL102", 21, "Handshakes.pop_ready")]


IDS = """
    import torch.distributed as dist


    def my_rank():
        return dist.get_rank()


    def world():
        return dist.get_world_size()
"""

GATED = """
    import torch.distributed as dist
    {imports}


    def run():
        if {rank}() > 0:
            dist.barrier()                                          # INVALID: this rank's id, read in another module
        if {world}() > 1:
            dist.barrier()
"""


@pytest.mark.parametrize("how", [0, 1])
def test_an_argument_free_helper_of_another_module_returning_the_rank_is_read(tmp_path, how):
    # the helper issues no collective, so no round parses its file; it is
    # read for what it returns (gather._deciding_callees), and what it reads
    # itself (the rank id) comes back with its result; the world size next
    # to it is the same on every rank
    imports, rank, world = [("from . import ids", "ids.my_rank", "ids.world"),
                            ("from .ids import my_rank, world", "my_rank", "world")][how]
    write_package(tmp_path, "pkg", {"ids.py": IDS, "caller.py": GATED.format(imports=imports, rank=rank, world=world)})
    assert sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in package_findings(tmp_path)) \
        == [("caller.py", "CSL101", 8)]


HELPERS = """
    import torch.distributed as dist


    def _rank_of_job():
        return dist.get_rank()


    def _size_of_job():
        return dist.get_world_size()


    def my_rank():
        return _rank_of_job()


    def world():
        return _size_of_job()


    def coords():
        return dist.get_rank(), dist.get_world_size()


    class State:
        def __init__(self):
            self.leader = dist.get_rank() == 0
            self.several = dist.get_world_size() > 1
"""

HELPER_GATES = """
    import torch.distributed as dist
    from . import ids


    def through_own_helper():
        if ids.my_rank() > 0:
            dist.barrier()                                          # INVALID: the rank, from the helper's helper
        if ids.world() > 1:
            dist.barrier()


    def unpacked():
        rank, size = ids.coords()
        if rank > 0:
            dist.barrier()                                          # INVALID: the tuple's rank element
        if size > 1:
            dist.barrier()


    def indexed():
        if ids.coords()[0] > 0:
            dist.barrier()                                          # INVALID: the tuple's rank element
        if ids.coords()[1] > 1:
            dist.barrier()


    def built_bare():
        if ids.State().leader:
            dist.barrier()                                          # INVALID: a field the constructor set from the rank
        if ids.State().several:
            dist.barrier()
"""


def test_what_an_argument_free_call_of_another_module_brings_is_read_through_helpers_tuples_and_classes(tmp_path):
    # the module issues no collective, so no round parses it: a helper calling
    # another helper of its file (facts._with_own_helpers), one element of a
    # tuple it returns (ProgramReads._callee_returns) and a class built with
    # no arguments (gather._constructed_calls) are read for what they hand
    # back; the world size beside the rank stays the same on every rank
    write_package(tmp_path, "pkg", {"ids.py": HELPERS, "caller.py": HELPER_GATES})
    source = textwrap.dedent(HELPER_GATES).splitlines()
    invalid = sorted(i for i, line in enumerate(source, 1) if "# INVALID" in line)
    found = sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in package_findings(tmp_path))
    assert found == [("caller.py", "CSL101", line) for line in invalid]
