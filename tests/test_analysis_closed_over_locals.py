"""A nested function's read of a local of the function it is defined in
(issue 12; closedover.py).

Python reads a free name when the closure runs (late binding): a closure
called later, handed to a helper that calls it, or bound again after the
``def`` sees whatever the enclosing function bound there last.  Such a read
used to hold nothing (only a local named like a rank was read, by its name),
so ``flag = os.path.exists(p); def later(): if flag: dist.barrier()`` was
clean.  Each REPORTED case is a real hazard; each SILENT one a near-miss
whose closure reads nothing that differs (an agreed value, a name of its own,
a constant, an enclosing parameter every caller passes alike)."""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_source

_HEAD = """
    import os

    import torch
    import torch.distributed as dist


    def agreed(flag, group):
        t = torch.tensor([int(flag)])
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=group)
        return bool(t.item())


    def run_later(callback):
        callback()


    def probe(path):
        return os.path.exists(path)


"""


def _findings(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted((f.code, f.line) for f in check_source(source, report="per-site").findings)


def _hang_line(body: str) -> int:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return next(n for n, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# hang"))


REPORTED = {
    "called_later": """
        def step(group, path):
            flag = os.path.exists(path)

            def later():
                if flag:
                    dist.barrier(group=group)  # hang
            later()
    """,
    "handed_to_a_helper": """
        def step(group, path):
            flag = os.path.exists(path)

            def later():
                if flag:
                    dist.barrier(group=group)  # hang
            run_later(later)
    """,
    # late binding: the value bound after the ``def`` is the one the call reads
    "bound_again_after_the_def": """
        def step(group, path):
            flag = True

            def later():
                if flag:
                    dist.barrier(group=group)  # hang
            flag = os.path.exists(path)
            later()
    """,
    # implicit flow: the local set only where the probe holds
    "set_under_a_test": """
        def step(group, path):
            flag = False
            if os.path.exists(path):
                flag = True

            def later():
                if flag:
                    dist.barrier(group=group)  # hang
            later()
    """,
    "two_levels_down": """
        def step(group, path):
            flag = os.path.exists(path)

            def outer():
                def inner():
                    if flag:
                        dist.barrier(group=group)  # hang
                inner()
            outer()
    """,
    # the closure hands the local back; the enclosing function tests the call
    "returned_by_the_closure": """
        def step(group, path):
            flag = os.path.exists(path)

            def ready():
                return flag
            if ready():
                dist.barrier(group=group)  # hang
    """,
    "declared_nonlocal": """
        def step(group, path):
            flag = os.path.exists(path)

            def later():
                nonlocal flag
                if flag:
                    dist.barrier(group=group)  # hang
                flag = False
            later()
    """,
    # a helper of the module called with the enclosing function's parameter: its own probe
    "a_helper_s_result": """
        def step(group, path):
            flag = probe(path)

            def later():
                if flag:
                    dist.barrier(group=group)  # hang
            later()
    """,
    # an enclosing parameter named like a rank: its rank-id source reaches the closure through the local
    "made_from_a_rank_parameter": """
        def step(group, rank):
            first = rank == 0

            def later():
                if first:
                    dist.barrier(group=group)  # hang
            later()
    """,
    "in_a_method": """
        class Saver:
            def __init__(self, group):
                self.group = group

            def save(self, path):
                ready = os.path.exists(path)

                def later():
                    if ready:
                        dist.barrier(group=self.group)  # hang
                later()
    """,
    "bound_in_a_loop": """
        def step(group, paths):
            for path in paths:
                ok = os.path.exists(path)

                def later():
                    if ok:
                        dist.barrier(group=group)  # hang
                later()
    """,
    # `global` in the closure: it reads the module's rank-local probe, not the agreed local of the same name
    "a_module_probe_the_closure_declares_global": """
        FLAG = os.path.exists("/tmp/ready")


        def step(group):
            FLAG = True

            def later():
                global FLAG
                if FLAG:
                    dist.barrier(group=group)  # hang
            later()
            return FLAG
    """,
    # `global` in the enclosing function: every function nested in it reads the module's name too
    "a_module_probe_the_enclosing_function_declares_global": """
        FLAG = os.path.exists("/tmp/ready")


        def step(group):
            global FLAG

            def later():
                if FLAG:
                    dist.barrier(group=group)  # hang
            later()
    """,
}


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_closure_over_a_rank_local_local_differs(name):
    assert ("CSL101", _hang_line(REPORTED[name])) in _findings(REPORTED[name])


SILENT = {
    "an_agreed_local": """
        def step(group, path):
            flag = agreed(os.path.exists(path), group)

            def later():
                if flag:
                    dist.barrier(group=group)
            later()
    """,
    # the closure's own parameter hides the enclosing local
    "its_own_parameter": """
        def step(group, path):
            flag = os.path.exists(path)

            def later(flag):
                if flag:
                    dist.barrier(group=group)
            later(True)
    """,
    # the closure binds the name itself
    "its_own_local": """
        def step(group, path):
            flag = os.path.exists(path)

            def later():
                flag = True
                if flag:
                    dist.barrier(group=group)
            later()
    """,
    "a_constant": """
        def step(group, path):
            flag = True

            def later():
                if flag:
                    dist.barrier(group=group)
            later()
    """,
    # another local of the enclosing function differs; the one read does not
    "another_local_differs": """
        def step(group, path):
            exists = os.path.exists(path)
            size = 4

            def later():
                if size > 2:
                    dist.barrier(group=group)
            print(exists)
            later()
    """,
    # an enclosing parameter copied to a local: what the callers pass, alike here
    "a_parameter_copied": """
        def step(group, flag):
            mine = flag

            def later():
                if mine:
                    dist.barrier(group=group)
            later()


        def run(group):
            step(group, True)
    """,
    # `global` in the closure: it reads the module's agreed flag, not the enclosing rank-local local
    "the_closure_declares_an_agreed_module_flag_global": """
        FLAG = True


        def step(group, path):
            FLAG = os.path.exists(path)

            def later():
                global FLAG
                if FLAG:
                    dist.barrier(group=group)
            later()
            return FLAG
    """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_closure_over_a_uniform_local_is_silent(name):
    assert [f for f in _findings(SILENT[name]) if f[0] in ("CSL101", "CSL102", "CSL103")] == []


GAPS = {
    # a lambda's result: the call of a local bound to a lambda reads nothing of its body
    "a_lambda_s_result": """
        def step(group, path):
            flag = os.path.exists(path)
            ready = lambda: flag
            if ready():
                dist.barrier(group=group)  # hang
    """,
    # a collective inside a lambda's body is no site
    "a_collective_in_a_lambda": """
        def step(group, path):
            flag = os.path.exists(path)
            run = lambda: dist.barrier(group=group) if flag else None  # hang
            run()
    """,
    # a nonlocal write of a closure, read back by the enclosing function after the call
    "a_nonlocal_write_read_back": """
        def step(group, path):
            flag = False

            def check():
                nonlocal flag
                flag = os.path.exists(path)
            check()
            if flag:
                dist.barrier(group=group)  # hang
    """,
    # a sibling closure's nonlocal write, read by another closure
    "a_sibling_s_nonlocal_write": """
        def step(group, path):
            flag = False

            def check():
                nonlocal flag
                flag = os.path.exists(path)

            def later():
                if flag:
                    dist.barrier(group=group)  # hang
            check()
            later()
    """,
}


@pytest.mark.xfail(strict=True, reason="lambdas are not functions of their own, and a closure's nonlocal write is "
                                       "not read back by the enclosing function (closedover.py)")
@pytest.mark.parametrize("name", sorted(GAPS))
def test_a_gap_of_the_closure_model(name):
    assert ("CSL101", _hang_line(GAPS[name])) in _findings(GAPS[name])
