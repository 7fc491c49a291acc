"""The cache never changes a result.

A warm run must print exactly what ``--no-cache`` prints, whatever ran
before it, from whichever working directory, however the paths were spelled
(``.``, a file name, ``./x.py``, absolute, through a symbolic link).  The
issue this guards against: facts cached under one spelling of a file were
reused under another, so ``cslint check .`` followed by ``cslint check a.py``
said "All checks passed" on a file with a hazard, and whole-run results were
replayed with paths relative to another directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cslint.api import check_paths
from cslint.report import render

EARLY_EXIT = textwrap.dedent("""\
    import torch.distributed as dist


    def step(t):
        if dist.get_rank() == 0:
            return
        dist.all_reduce(t)
    """)


def _cslint(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cslint", *args], cwd=str(cwd), capture_output=True, text=True,
                          timeout=120)


def _summary(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# -- the reproductions of the issue, through the command line ---------------------


@pytest.fixture
def two_files(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(EARLY_EXIT)
    return tmp_path


def test_directory_then_one_file(two_files):
    assert _summary(_cslint(two_files, "check", ".")).startswith("Found 2 findings")
    single = _cslint(two_files, "check", "a.py")
    assert single.returncode == 1, single.stdout
    assert "a.py:7:5: CSL102" in single.stdout
    assert _cslint(two_files, "check", "./b.py").returncode == 1


def test_one_file_then_directory(two_files):
    assert _cslint(two_files, "check", "a.py").returncode == 1
    both = _cslint(two_files, "check", ".")
    assert _summary(both).startswith("Found 2 findings"), both.stdout


def test_another_working_directory_prints_its_own_paths(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.cslint]\n")  # one cache for every working directory
    (project / "a.py").write_text(EARLY_EXIT)
    assert _cslint(project, "check", ".").returncode == 1
    from_parent = _cslint(tmp_path, "check", "proj")
    assert "proj/a.py:7:5: CSL102" in from_parent.stdout, from_parent.stdout
    document = json.loads(_cslint(tmp_path, "check", "--format", "json", "proj").stdout)
    assert {finding["path"] for finding in document["findings"]} == {"proj/a.py"}
    assert all(link["path"] == "proj/a.py" for finding in document["findings"] for link in finding["chain"])


def test_baseline_holds_whatever_the_cache_saw(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.cslint]\n")
    (project / "a.py").write_text(EARLY_EXIT)
    assert _cslint(project, "check", "--write-baseline", "baseline.json", ".").returncode == 0
    again = _cslint(project, "check", "--baseline", "baseline.json", ".")
    assert again.returncode == 0, again.stdout
    from_parent = _cslint(tmp_path, "check", "--baseline", "proj/baseline.json", "proj")
    assert from_parent.returncode == 0, from_parent.stdout
    one_file = _cslint(project, "check", "--baseline", "baseline.json", "a.py")
    assert one_file.returncode == 0, one_file.stdout


# -- random sequences of runs against --no-cache ------------------------------------

HELPERS = textwrap.dedent("""\
    import torch.distributed as dist


    def sync_counts(tensor):
        dist.all_reduce(tensor)
        return tensor
    """)
CALLER = textwrap.dedent("""\
    import torch.distributed as dist

    from pkg.helpers import sync_counts


    def step(tensor):
        if dist.get_rank() {op} 0:
            sync_counts(tensor)
        return tensor
    """)
STATEFUL = textwrap.dedent("""\
    import torch.distributed as dist


    class Worker:
        def __init__(self):
            self.pending = []
            if dist.get_rank() == 0:
                self.pending.append(1)

        def drain(self, tensor):
            if not self.pending:
                return None
            dist.barrier()
            return tensor
    """)
SUPPRESSED = textwrap.dedent("""\
    import torch.distributed as dist


    def quiet(tensor):
        if dist.get_rank() == 0:
            dist.barrier()  # cslint: ignore[CSL101]
        dist.all_reduce(tensor)  # cslint: ignore[CSL101]
    """)
CLEAN = "def add(a, b):\n    return a + b\n"
BROKEN = "import torch.distributed as dist\n\ndef f(t:\n    dist.all_reduce(t)\n"

#: (path under the tree root, initial text, alternative text an edit swaps in)
FILES = (
    ("pkg/__init__.py", "", ""),
    ("pkg/helpers.py", HELPERS, HELPERS.replace("dist.all_reduce(tensor)", "pass")),
    ("pkg/a.py", EARLY_EXIT, EARLY_EXIT.replace("dist.get_rank() == 0", "False")),
    ("pkg/b.py", CALLER.format(op="=="), CALLER.format(op=">")),
    ("pkg/c.py", CLEAN, CALLER.format(op="!=")),
    ("pkg/broken.py", BROKEN, EARLY_EXIT),
    ("pkg/sub/__init__.py", "", ""),
    ("pkg/sub/d.py", STATEFUL, STATEFUL.replace("dist.get_rank() == 0", "True")),
    ("pkg/sub/e.py", SUPPRESSED, SUPPRESSED.replace("  # cslint: ignore[CSL101]", "")),
    ("top.py", CALLER.format(op="<"), CLEAN),
)
TARGETS = ("", "pkg", "pkg/sub", "pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/broken.py", "pkg/sub/d.py", "top.py")
SPELLINGS = ("relative", "dot-relative", "absolute", "symlink", "trailing-slash")
WORKING_DIRECTORIES = ("root", "pkg", "outside")

check_step = st.tuples(
    st.just("check"),
    st.lists(st.tuples(st.sampled_from(TARGETS), st.sampled_from(SPELLINGS)), min_size=1, max_size=3),
    st.sampled_from(WORKING_DIRECTORIES),
    st.booleans(),  # the tree root as --context, as the pre-commit hook does
)
edit_step = st.tuples(st.just("edit"), st.sampled_from([path for path, _, _ in FILES]))


def _make_tree(base: str, configured: bool) -> dict:
    root = os.path.join(base, "root")
    for path, text, _ in FILES:
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    if configured:  # an empty table: the defaults, and one cache at the root for every directory
        with open(os.path.join(root, "pyproject.toml"), "w", encoding="utf-8") as handle:
            handle.write("[tool.cslint]\n")
    os.makedirs(os.path.join(base, "outside"))
    os.symlink(os.path.join(root, "pkg"), os.path.join(base, "link"))
    return {"root": root, "pkg": os.path.join(root, "pkg"), "outside": os.path.join(base, "outside"),
            "link": os.path.join(base, "link")}


def _spell(target: str, spelling: str, places: dict, cwd: str) -> str:
    absolute = os.path.join(places["root"], target) if target else places["root"]
    if spelling == "symlink" and (target == "pkg" or target.startswith("pkg/")):
        absolute = os.path.join(places["link"], target[len("pkg/"):]) if target != "pkg" else places["link"]
    if spelling == "absolute":
        return absolute
    relative = os.path.relpath(absolute, cwd)
    if spelling == "dot-relative" and not relative.startswith(os.pardir):
        return os.path.join(os.curdir, relative)
    if spelling == "trailing-slash" and os.path.isdir(absolute):
        return relative.rstrip(os.sep) + os.sep
    return relative


@contextlib.contextmanager
def _working_directory(path: str):
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _report(paths: list, context, cache: bool) -> str:
    """What `cslint check --output-format json` prints for these paths here."""
    result = check_paths(paths, cache=cache, context=context, jobs=1)
    return render(result, "json", root=os.getcwd())


def _by_real_path(report: str, cwd: str) -> dict:
    """A report with every path resolved: the same analysis under any spelling."""
    document = json.loads(report)
    for finding in document["findings"]:
        finding["path"] = os.path.realpath(os.path.join(cwd, finding["path"]))
        for link in finding["chain"]:
            link["path"] = os.path.realpath(os.path.join(cwd, link["path"]))
    document["findings"].sort(key=lambda f: (f["path"], f["line"], f["column"], f["code"]))
    return document


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configured=st.booleans(), steps=st.lists(st.one_of(check_step, edit_step), min_size=2, max_size=7))
def test_warm_runs_print_what_cold_runs_print(configured, steps):
    with tempfile.TemporaryDirectory(prefix="cslint-cache-") as base:
        base = os.path.realpath(base)
        places = _make_tree(base, configured)
        alternatives = {path: (text, other) for path, text, other in FILES}
        current = {path: 0 for path in alternatives}
        for step in steps:
            if step[0] == "edit":
                path = step[1]
                current[path] ^= 1
                with open(os.path.join(places["root"], path), "w", encoding="utf-8") as handle:
                    handle.write(alternatives[path][current[path]])
                continue
            _, targets, where, with_context = step
            cwd = places[where]
            paths = [_spell(target, spelling, places, cwd) for target, spelling in targets]
            context = [os.path.relpath(places["root"], cwd)] if with_context else None
            with _working_directory(cwd):
                warm = _report(paths, context, cache=True)
                cold = _report(paths, context, cache=False)
                assert warm == cold, f"after {steps}: warm run of {paths} from {where} differs from --no-cache"
                canonical = [os.path.realpath(path) for path in paths]
                real_context = [places["root"]] if with_context else None
                plain = _report(canonical, real_context, cache=False)
            assert _by_real_path(warm, cwd) == _by_real_path(plain, cwd), \
                f"{paths} from {where} analyses differently from {canonical}"
