"""Bad input gives a CSL001 finding or a clear FileError, never a traceback."""

import os
import sys

import pytest

from cslint.api import check_paths
from cslint.config import Settings


def _check(paths, **kw):
    return check_paths([str(p) for p in paths], settings=kw.pop("settings", Settings()), **kw)


def _csl001(result):
    return [f for f in result.findings if f.code == "CSL001"]


def test_syntax_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch.distributed as dist\nif dist.get_rank() == 0\n    dist.barrier()\n")
    (finding,) = _csl001(_check([bad]))
    assert finding.line == 2 and "syntax error" in finding.message


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="needs an interpreter older than the syntax")
def test_syntax_newer_than_the_interpreter(tmp_path):
    newer = tmp_path / "newer.py"
    newer.write_text("type Vector = list[float]\n")
    (finding,) = _csl001(_check([newer]))
    assert "newer" in finding.message


def test_non_utf8_source(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"x = '\xe9t\xe9'\n")
    (finding,) = _csl001(_check([latin]))
    assert "decode" in finding.message or "UTF-8" in finding.message


def test_declared_encoding_is_honoured(tmp_path):
    latin = tmp_path / "latin_ok.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9t\xe9'\n")
    assert _check([latin]).findings == []


def test_binary_file(tmp_path):
    blob = tmp_path / "blob.py"
    blob.write_bytes(b"\x00\x01\x02barrier\x00")
    (finding,) = _csl001(_check([blob]))
    assert "NUL" in finding.message


def test_file_larger_than_the_limit(tmp_path):
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * 1000)
    settings = Settings(max_file_size=100)
    (finding,) = _csl001(_check([big], settings=settings))
    assert "max-file-size" in finding.message


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path):
    locked = tmp_path / "locked.py"
    locked.write_text("x = 1\n")
    locked.chmod(0)
    try:
        (finding,) = _csl001(_check([locked]))
        assert "cannot read" in finding.message
    finally:
        locked.chmod(0o644)


def test_symlink_loop_and_broken_link(tmp_path):
    loop = tmp_path / "loop.py"
    os.symlink(loop, loop)
    broken = tmp_path / "broken.py"
    os.symlink(tmp_path / "missing.py", broken)
    result = _check([loop, broken])
    messages = {os.path.basename(e.path): e.message for e in result.errors}
    assert "symbolic link loop" in messages["loop.py"]
    assert "link" in messages["broken.py"]


def test_directory_symlink_cycle_is_walked_once(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("import torch.distributed as dist\nif dist.get_rank():\n    dist.barrier()\n")
    os.symlink(pkg, pkg / "again")
    result = _check([pkg])
    assert result.files == 1 and [f.code for f in result.findings] == ["CSL101"]


def test_empty_directory_and_missing_path(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _check([empty, tmp_path / "nope"])
    messages = sorted(e.message for e in result.errors)
    assert messages == ["no Python files found in directory", "no such file or directory"]
    assert result.files == 0


def test_deeply_nested_source_does_not_crash(tmp_path):
    deep = tmp_path / "deep.py"
    deep.write_text("import torch.distributed as dist\nx = " + "(" * 300 + "1" + ")" * 300 + "\n")
    result = _check([deep])
    assert all(f.code in ("CSL001",) for f in result.findings)
