"""A bound method called through a local (issue 12; funcaliases.local_alias_calls).

``take = linker.take; taken = take(n)`` runs ``linker.take(n)``: the call of
the local used to run nothing the analysis knew, so the method's rank-local
result was lost.  A local every binding of which is a bound method (an
attribute of a name, either arm of an ``IfExp``, ``getattr(obj, "name")``)
now stands for each of those calls with the call's own arguments.  Kept as
before: a local bound to anything else too, an object rebound between the
alias and the call (a loop target, a parameter bound again), a name looked up
by a value (``getattr(obj, name)``), a module table of methods."""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_source

_HEAD = """
    import os

    import torch
    import torch.distributed as dist


    def agreed(n, group):
        t = torch.tensor([n])
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=group)
        return int(t.item())


    class Linker:
        def __init__(self):
            self.results = [os.path.exists(f"/tmp/p.{i}") for i in range(8)]

        def take(self, n):
            return [self.results[i] for i in range(n)]

        def count(self, n):
            return n


    class Steady:
        def take(self, n):
            return n > 0


"""


def _findings(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted((f.code, f.line) for f in check_source(source, report="per-site").findings)


def _hang_line(body: str) -> int:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return next(n for n, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# hang"))


REPORTED = {
    "a_plain_alias": """
        def step(linker: Linker, count, group):
            take = linker.take
            taken = take(agreed(count, group))
            if taken:
                dist.barrier(group=group)  # hang
    """,
    "either_arm_of_an_ifexp": """
        def step(linker: Linker, steady: Steady, count, group):
            take = steady.take if os.environ.get("STEADY") else linker.take
            taken = take(agreed(count, group))
            if taken:
                dist.barrier(group=group)  # hang
    """,
    "bound_again_under_a_test": """
        def step(linker: Linker, steady: Steady, count, group):
            take = steady.take
            if os.environ.get("LINKED"):
                take = linker.take
            taken = take(agreed(count, group))
            if taken:
                dist.barrier(group=group)  # hang
    """,
    "getattr_of_a_constant_name": """
        def step(linker: Linker, count, group):
            take = getattr(linker, "take")
            if take(agreed(count, group)):
                dist.barrier(group=group)  # hang
    """,
    # the object is a local the function builds (bound once): the alias is the method of that object
    "of_an_object_built_here": """
        def step(count, group):
            linker = Linker()
            take = linker.take
            if take(agreed(count, group)):
                dist.barrier(group=group)  # hang
    """,
    "through_a_field": """
        class Runner:
            def __init__(self):
                self.linker = Linker()

            def step(self, count, group):
                take = self.linker.take
                if take(agreed(count, group)):
                    dist.barrier(group=group)  # hang
    """,
}


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_bound_method_called_through_a_local_hands_back_its_result(name):
    assert ("CSL101", _hang_line(REPORTED[name])) in _findings(REPORTED[name])


SILENT = {
    "a_method_returning_what_it_is_given": """
        def step(linker: Linker, count, group):
            take = linker.count
            if take(agreed(count, group)):
                dist.barrier(group=group)
    """,
    "both_arms_steady": """
        def step(steady: Steady, other: Steady, count, group):
            take = steady.take if os.environ.get("A") else other.take
            if take(agreed(count, group)):
                dist.barrier(group=group)
    """,
    # a local alias of another function's object: the alias binds nothing of Linker
    "an_alias_of_a_steady_object": """
        def step(steady: Steady, count, group):
            take = steady.take
            if take(agreed(count, group)):
                dist.barrier(group=group)
    """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_an_alias_of_a_method_with_an_agreed_result_is_silent(name):
    assert [f for f in _findings(SILENT[name]) if f[0] in ("CSL101", "CSL102", "CSL103")] == []


GAPS = {
    "getattr_of_a_name_held_in_a_value": """
        def step(linker: Linker, count, group):
            take = getattr(linker, os.environ.get("TAKE", "take"))
            if take(agreed(count, group)):
                dist.barrier(group=group)  # hang
    """,
    "a_module_table_of_methods": """
        TAKERS = {"all": Linker.take}


        def step(linker: Linker, count, group):
            if TAKERS[os.environ.get("TAKE", "all")](linker, agreed(count, group)):
                dist.barrier(group=group)  # hang
    """,
}


@pytest.mark.xfail(strict=True, reason="a method named by a value, or held in a module table, is not resolved")
@pytest.mark.parametrize("name", sorted(GAPS))
def test_a_method_chosen_by_a_value_hands_back_its_result(name):
    assert ("CSL101", _hang_line(GAPS[name])) in _findings(GAPS[name])
