"""A module-level function a block defines (issue 12; facts.alternative_definitions).

``if HAVE_X: def probe(): ... else: def probe(): ...`` binds ``probe`` to one
of the two definitions, whichever arm ran; a call of ``probe()`` may run
either.  Such a name was no module function at all (``ModuleContext.
module_functions`` holds the top level's only), so the call ran nothing the
analysis knew and its rank-local result was lost; and where the top level
defines the name too, the last definition shadowed the others, whose own
collectives went unread.  Each definition a later top-level definition does
not rebind is now a function of its own (its key apart, ``@line``), and a call
of the name, in the module or through an import, runs each of them."""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_paths, check_source

_HEAD = """
    import os

    import torch.distributed as dist


"""


def _findings(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted((f.code, f.line) for f in check_source(source, report="per-site").findings)


def _hang_line(body: str) -> int:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return next(n for n, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# hang"))


REPORTED = {
    "the_if_arm_probes": """
        if os.environ.get("FAST"):
            def probe():
                return os.path.exists("/tmp/fast")
        else:
            def probe():
                return True


        def step(group):
            if probe():
                dist.barrier(group=group)  # hang
    """,
    "the_else_arm_probes": """
        if os.environ.get("FAST"):
            def probe():
                return True
        else:
            def probe():
                return os.path.exists("/tmp/slow")


        def step(group):
            if probe():
                dist.barrier(group=group)  # hang
    """,
    # a top-level definition a later block may replace: either may run
    "replaced_under_a_test": """
        def probe():
            return True


        if os.environ.get("OVERRIDE"):
            def probe():
                return os.path.exists("/tmp/override")


        def step(group):
            if probe():
                dist.barrier(group=group)  # hang
    """,
    # and the other way round: the top-level one probes, the block's does not
    "the_replaced_one_probes": """
        def probe():
            return os.path.exists("/tmp/plain")


        if os.environ.get("OVERRIDE"):
            def probe():
                return True


        def step(group):
            if probe():
                dist.barrier(group=group)  # hang
    """,
    "try_and_except": """
        try:
            import fastprobe  # noqa: F401

            def probe():
                return True
        except ImportError:
            def probe():
                return os.path.exists("/tmp/fallback")


        def step(group):
            if probe():
                dist.barrier(group=group)  # hang
    """,
    # the collective inside the definition that does not keep the plain key is read too
    "a_collective_in_the_first_arm": """
        if os.environ.get("FAST"):
            def sync(group):
                if os.path.exists("/tmp/flag"):
                    dist.barrier(group=group)  # hang
        else:
            def sync(group):
                pass


        def step(group):
            sync(group)
    """,
    "reached_through_the_first_arm": """
        if os.environ.get("FAST"):
            def sync(group):
                dist.barrier(group=group)
        else:
            def sync(group):
                pass


        def step(group):
            if dist.get_rank() == 0:
                sync(group)  # hang
    """,
    # a parameter of the module function's name hides it: what the caller hands in runs (a file probe here)
    "a_parameter_hides_the_block_defined_name": """
        if os.environ.get("FAST"):
            def ready(path):
                return True
        else:
            def ready(path):
                return True


        def step(ready, group):
            if ready(f"/tmp/ckpt_{dist.get_rank()}"):
                dist.barrier(group=group)  # hang


        def run(group):
            step(os.path.exists, group)
    """,
    "a_parameter_hides_the_top_level_name": """
        def ready(path):
            return True


        def step(ready, group):
            if ready(f"/tmp/ckpt_{dist.get_rank()}"):
                dist.barrier(group=group)  # hang


        def run(group):
            step(os.path.exists, group)
    """,
    # a later assignment rebinds the name to a probe of its own: the definitions no longer run
    "assigned_a_probe_after_the_block": """
        if os.environ.get("FAST"):
            def ready(path):
                return True
        else:
            def ready(path):
                return True

        ready = os.path.exists


        def step(group):
            if ready(f"/tmp/ckpt_{dist.get_rank()}"):
                dist.barrier(group=group)  # hang
    """,
}


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_each_definition_of_a_name_a_block_defines_may_run(name):
    assert ("CSL101", _hang_line(REPORTED[name])) in _findings(REPORTED[name])


SILENT = {
    "neither_arm_probes": """
        if os.environ.get("FAST"):
            def probe():
                return True
        else:
            def probe():
                return False


        def step(group):
            if probe():
                dist.barrier(group=group)
    """,
    # a later assignment rebinds the name to an agreed function: the probing definition no longer runs
    "assigned_an_agreed_function_after_the_block": """
        def _agreed():
            return True


        if os.environ.get("FAST"):
            def probe():
                return os.path.exists("/tmp/fast")
        else:
            def probe():
                return True

        probe = _agreed


        def step(group):
            if probe():
                dist.barrier(group=group)
    """,
    # a later top-level definition rebinds the name whatever the block did
    "rebound_at_the_top_level_after": """
        if os.environ.get("DEBUG"):
            def probe():
                return os.path.exists("/tmp/debug")


        def probe():
            return True


        def step(group):
            if probe():
                dist.barrier(group=group)
    """,
    # a function of another name defined under the same test
    "another_name": """
        if os.environ.get("FAST"):
            def probe_fast():
                return os.path.exists("/tmp/fast")

            def probe():
                return True
        else:
            def probe():
                return False


        def step(group):
            if probe():
                dist.barrier(group=group)
    """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_definition_that_cannot_run_is_not_read(name):
    assert [f for f in _findings(SILENT[name]) if f[0] in ("CSL101", "CSL102", "CSL103")] == []


_PROBES = """
    import os

    import torch.distributed as dist

    if os.environ.get("FAST"):
        def probe():
            return os.path.exists("/tmp/fast")

        def steady():
            return True
    else:
        def probe():
            return True

        def steady():
            return False


    def settle(group):
        dist.barrier(group=group)
"""

_APP = """
    import torch.distributed as dist

    from pkg.probes import probe, steady


    def step(group):
        if probe():
            dist.barrier(group=group)


    def calm(group):
        if steady():
            dist.barrier(group=group)
"""


def _app_findings(tmp_path, probes: str) -> list:
    for name, text in {"pkg/__init__.py": "", "pkg/probes.py": probes, "pkg/app.py": _APP}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    found = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in found)


def _step_line() -> int:
    return next(n for n, line in enumerate(textwrap.dedent(_APP).splitlines(), 1) if "dist.barrier" in line)


def test_a_call_from_another_module_runs_each_definition(tmp_path):
    assert _app_findings(tmp_path, _PROBES) == [("CSL101", "app.py", _step_line())]


@pytest.mark.xfail(strict=True, reason="a module with no collective is read for a callee only where a line starts "
                                       "with its definition (engine.gather._top_definition): one a block defines is "
                                       "indented")
def test_a_call_into_a_collective_free_module_runs_each_definition(tmp_path):
    probes = _PROBES.replace("    import torch.distributed as dist\n", "")
    probes = probes[: probes.index("    def settle(group):")]
    assert _app_findings(tmp_path, probes) == [("CSL101", "app.py", _step_line())]
