"""Which files get CSL001, as the README states it.

Every file named on the command line is parsed.  In a directory every
``.py`` file is read (unreadable, binary and oversized files are CSL001),
and the files that could hold a collective -- those the prefilter selects:
a collective call site, or a call of a function found to issue one -- are
parsed, so their syntax and encoding errors are CSL001.  A file that cannot
reach a collective is not parsed (``bench/syntax_coverage.py`` measures
what parsing all of them would cost), and its syntax error is not reported.
"""

from __future__ import annotations

import os
import textwrap

from cslint.api import check_paths
from cslint.config import Settings

FILES = {
    "helpers.py": "import torch.distributed as dist\n\n\ndef sync_counts(tensor):\n    dist.all_reduce(tensor)\n",
    # could hold a collective: parsed, so CSL001
    "broken_collective.py": "import torch.distributed as dist\n\ndef f(t:\n    dist.all_reduce(t)\n",
    "broken_wrapper_call.py": "from helpers import sync_counts\n\ndef f(t:\n    sync_counts(t)\n",
    "broken_module_wrapper.py": "import helpers\n\ndef f(t:\n    helpers.sync_counts(t)\n",
    "newer_syntax.py": "import torch.distributed as dist\n\ntype Alias[T] = list[T]\ndist.barrier()\n",
    # cannot reach a collective: not parsed, not reported
    "broken_plain.py": "def f(t:\n    return t\n",
}
LATIN1 = "import torch.distributed as dist\n\n\ndef f(t):\n    x = '\u00e9'\n    dist.barrier()\n"
EXPECTED = {"broken_collective.py", "broken_wrapper_call.py", "broken_module_wrapper.py", "newer_syntax.py",
            "undeclared_latin1.py", "binary.py", "oversized.py"}


def _tree(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "undeclared_latin1.py").write_bytes(LATIN1.encode("latin-1"))
    (tmp_path / "binary.py").write_bytes(b"x = 1\n\x00\x01\x02\n")
    (tmp_path / "oversized.py").write_text("x = 1\n" * 200)
    return tmp_path


def _csl001(result) -> dict:
    return {f.path.rsplit("/", 1)[-1]: f.message for f in result.findings if f.code == "CSL001"}


def test_a_directory_reports_every_file_that_could_hold_a_collective(tmp_path):
    tree = _tree(tmp_path)
    settings = Settings(max_file_size=1000)
    found = _csl001(check_paths([str(tree)], settings=settings, cache=False))
    assert set(found) == EXPECTED
    assert "syntax error" in found["broken_wrapper_call.py"]
    assert "newer than the running Python" in found["newer_syntax.py"] or "syntax error" in found["newer_syntax.py"]
    assert "not valid UTF-8 and no coding declaration" in found["undeclared_latin1.py"]
    assert "NUL bytes" in found["binary.py"]
    assert "max-file-size" in found["oversized.py"]


def test_a_named_file_is_always_parsed(tmp_path):
    tree = _tree(tmp_path)
    found = _csl001(check_paths([str(tree / "broken_plain.py")], cache=False))
    assert set(found) == {"broken_plain.py"}
    # and named beside its directory, once
    both = _csl001(check_paths([str(tree), str(tree / "broken_plain.py")], settings=Settings(max_file_size=1000),
                               cache=False))
    assert set(both) == EXPECTED


def test_a_broken_wrapper_hides_nothing_it_could_reach(tmp_path):
    """A file whose own wrapper does not parse is reported; its callers, for
    which no wrapper is then known, are not parsed for it but hold no
    collective of their own."""
    (tmp_path / "helpers.py").write_text("import torch.distributed as dist\n\ndef sync(t:\n    dist.all_reduce(t)\n")
    (tmp_path / "caller.py").write_text(textwrap.dedent("""\
        from helpers import sync


        def step(t, rank):
            if rank == 0:
                sync(t)
        """))
    found = _csl001(check_paths([str(tmp_path)], cache=False))
    assert set(found) == {"helpers.py"}


SAME_NAMED_WORKER = textwrap.dedent("""\
    import torch.distributed as dist


    def step(t):
        if dist.get_rank() == 0:
            return
        dist.all_reduce(t)
    """)


def test_files_the_package_structure_names_alike_are_each_analysed(tmp_path):
    """``a/worker.py`` and ``b/worker.py`` with no ``__init__.py`` are both the
    module ``worker`` to the package structure; each keeps its own functions
    and its own finding, in a run over both and in a run with a third file of
    that name at the top."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "worker.py").write_text(SAME_NAMED_WORKER)
    both = check_paths([str(tmp_path)], settings=Settings(), cache=False)
    assert sorted(f.path.split("/")[-2] for f in both.findings if f.code == "CSL102") == ["a", "b"]

    (tmp_path / "worker.py").write_text(SAME_NAMED_WORKER)
    three = check_paths([str(tmp_path)], settings=Settings(), cache=False)
    assert len([f for f in three.findings if f.code == "CSL102"]) == 3
    assert len({f.path for f in three.findings}) == 3


REDUCING_WORKER = textwrap.dedent("""\
    import torch.distributed as dist

    def reduce_all(t):
        dist.all_reduce(t)
    """)

IDLE_WORKER = textwrap.dedent("""\
    def reduce_all(t):
        return t
    """)


def _caller(import_line: str, call: str) -> str:
    return textwrap.dedent(f"""\
        import torch.distributed as dist
        {import_line}

        def step(t):
            if dist.get_rank() == 0:
                {call}
        """)


def test_a_settled_file_imports_its_own_sibling(tmp_path):
    """Two script folders, each with a ``worker`` module and a caller that
    imports it by its plain name (Python finds the caller's own sibling).
    Only ``a``'s worker reaches a collective, so only ``a``'s caller is a
    hazard: in a run over both folders, and in a run over ``a`` alone."""
    for folder, worker in (("a", REDUCING_WORKER), ("b", IDLE_WORKER)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "worker.py").write_text(worker)
        (tmp_path / folder / "main.py").write_text(_caller("import worker", "worker.reduce_all(t)"))
        (tmp_path / folder / "other.py").write_text(_caller("from worker import reduce_all", "reduce_all(t)"))
    both = check_paths([str(tmp_path)], settings=Settings(), cache=False)
    flagged = sorted(os.path.relpath(f.path, tmp_path) for f in both.findings if f.code == "CSL101")
    assert flagged == ["a/main.py", "a/other.py"]
    alone = check_paths([str(tmp_path / "a")], settings=Settings(), cache=False)
    assert sorted(os.path.basename(f.path) for f in alone.findings if f.code == "CSL101") == ["main.py", "other.py"]


def test_a_settled_package_is_imported_from_its_own_root(tmp_path):
    """The same with a package of the same name in each folder: ``from
    pkg.util import reduce_all`` in ``a/run.py`` names ``a``'s package."""
    for folder, worker in (("a", IDLE_WORKER), ("b", REDUCING_WORKER)):
        (tmp_path / folder / "pkg").mkdir(parents=True)
        (tmp_path / folder / "pkg" / "__init__.py").write_text("")
        (tmp_path / folder / "pkg" / "util.py").write_text(worker)
        (tmp_path / folder / "run.py").write_text(_caller("from pkg.util import reduce_all", "reduce_all(t)"))
    both = check_paths([str(tmp_path)], settings=Settings(), cache=False)
    flagged = sorted(os.path.relpath(f.path, tmp_path) for f in both.findings if f.code == "CSL101")
    assert flagged == ["b/run.py"]
