"""Rank-local values lost on their way into a decision, found by review and
pinned before they are modelled (issue 12): each strict xfail is a real
hazard cslint passes today, beside a control of the same shape it reports.

- A helper of a module that holds no collective of its own, called with
  arguments, hands back none of the rank sources it reads itself
  (``is_first_rank(group)`` in ``pkg/utils.py``); the same helper in the
  caller's module is read.
- (Modelled since: closedover.py, tests/test_analysis_closed_over_locals.py.)
  A nested function lost what an enclosing local holds when the local comes
  from local work (``flag = os.path.exists(p)``); one holding the rank id
  was read by its name.
- A method of a class in a module with no collective hands back nothing
  rank-local (``Linker().take(3)`` of per-rank probes); a function of the
  same module is read."""

import textwrap

import pytest

from cslint.api import check_paths


def _findings(tmp_path, files: dict) -> list:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    found = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in found)


def _barrier(text: str, function: str) -> int:
    """The line of the first barrier in ``function`` of ``text`` as the test writes it out."""
    lines = textwrap.dedent(text).splitlines()
    start = next(n for n, line in enumerate(lines) if line.lstrip().startswith(f"def {function}("))
    return next(n for n in range(start, len(lines)) if "dist.barrier" in lines[n]) + 1


_STEP = """
    import torch.distributed as dist
    from pkg.utils import is_first_rank


    def save(x, group):
        if is_first_rank(group):
            dist.barrier(group)
"""

_UTILS = """
    import torch.distributed as dist


    def is_first_rank(group):
        return dist.get_rank(group) == 0
"""


@pytest.mark.xfail(strict=True, reason="a helper of a module with no collective, called with arguments, hands back "
                                       "none of the rank sources it reads itself (reads._callee_returns)")
def test_a_rank_test_in_a_helper_of_a_collective_free_module_differs(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/step.py": _STEP, "pkg/utils.py": _UTILS}
    assert _findings(tmp_path, files) == [("CSL101", "step.py", _barrier(_STEP, "save"))]


def test_the_same_helper_in_the_caller_s_module_differs(tmp_path):
    step = _UTILS + _STEP.replace("from pkg.utils import is_first_rank\n", "")
    assert _findings(tmp_path, {"pkg/__init__.py": "", "pkg/step.py": step}) == [("CSL101", "step.py", _barrier(step, "save"))]


_CLOSURES = """
    import os

    import torch.distributed as dist


    def by_local_work(group, path):
        flag = os.path.exists(path)

        def later():
            if flag:
                dist.barrier(group=group)
        later()


    def by_rank(group):
        rank = dist.get_rank()

        def later():
            if rank == 0:
                dist.barrier(group=group)
        later()
"""


def test_a_closure_over_a_local_work_flag_differs(tmp_path):
    assert ("CSL101", "app.py", _barrier(_CLOSURES, "by_local_work")) in _findings(tmp_path, {"app.py": _CLOSURES})


def test_a_closure_over_the_rank_differs(tmp_path):
    assert ("CSL101", "app.py", _barrier(_CLOSURES, "by_rank")) in _findings(tmp_path, {"app.py": _CLOSURES})


_LINKER = """
    import os


    class Linker:
        def take(self, n):
            return [os.path.exists(f"/tmp/p.{i}") for i in range(n)]


    def probe():
        return os.path.exists("/tmp/probe")
"""

_APP = """
    import torch.distributed as dist

    from pkg.linker import Linker, probe


    def via_method(group):
        linker = Linker()
        if any(linker.take(3)):
            dist.barrier(group=group)


    def via_function(group):
        if probe():
            dist.barrier(group=group)
"""


@pytest.mark.xfail(strict=True, reason="a method of a class in a module with no collective hands back nothing "
                                       "rank-local")
def test_a_method_of_a_collective_free_module_hands_back_its_probes(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/linker.py": _LINKER, "pkg/app.py": _APP}
    assert ("CSL101", "app.py", _barrier(_APP, "via_method")) in _findings(tmp_path, files)


def test_a_function_of_a_collective_free_module_hands_back_its_probe(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/linker.py": _LINKER, "pkg/app.py": _APP}
    assert ("CSL101", "app.py", _barrier(_APP, "via_function")) in _findings(tmp_path, files)
