"""Bad input: each case gets a clear message, a distinct exit status, and nothing written."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_patch_helpers import EXECUTOR, copy_fixture, snapshot

from tensorrt_llm_patch.__main__ import (
    EXIT_MISSING,
    EXIT_NOT_INSTALLED,
    EXIT_NOT_TRTLLM,
    EXIT_NOT_WRITABLE,
    EXIT_OK,
    EXIT_USAGE,
    main,
)
from tensorrt_llm_patch.apply import PatchError, apply_tree
from tensorrt_llm_patch.locate import LocateError, find_installed

DISTINCT = {EXIT_MISSING, EXIT_NOT_INSTALLED, EXIT_NOT_TRTLLM, EXIT_NOT_WRITABLE, EXIT_USAGE}


def test_exit_statuses_are_distinct():
    from tensorrt_llm_patch import __main__ as cli

    codes = [v for k, v in vars(cli).items() if k.startswith("EXIT_")]
    assert len(codes) == len(set(codes))
    assert len(DISTINCT) == 5


def test_missing_path(tmp_path, capsys):
    assert main(["apply", "--tree", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == EXIT_MISSING
    assert "no such file or directory" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_not_a_tensorrt_llm_tree(tmp_path, capsys):
    other = tmp_path / "other"
    (other / "vllm").mkdir(parents=True)
    (other / "vllm" / "engine.py").write_text("x = 1\n")
    assert main(["apply", "--tree", str(other), "--out", str(tmp_path / "out")]) == EXIT_NOT_TRTLLM
    assert "not a TensorRT-LLM tree" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    # A file where a tree is expected.
    assert main(["apply", "--tree", str(other / "vllm" / "engine.py"), "--write"]) == EXIT_NOT_TRTLLM


def _make_read_only(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    root.chmod(root.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(root: Path) -> None:
    root.chmod(root.stat().st_mode | stat.S_IWUSR)
    for path in root.rglob("*"):
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_read_only_tree_with_write(tmp_path, capsys):
    tree = copy_fixture(tmp_path / "tree")
    before = snapshot(tree)
    _make_read_only(tree / "tensorrt_llm")
    try:
        assert main(["apply", "--tree", str(tree), "--write"]) == EXIT_NOT_WRITABLE
        assert "read-only" in capsys.readouterr().err
        assert snapshot(tree) == before
        assert not (tree / ".tensorrt_llm_patch").exists()
    finally:
        _make_writable(tree / "tensorrt_llm")


def test_read_only_file_blocks_the_whole_write(tmp_path):
    tree = copy_fixture(tmp_path / "tree")
    before = snapshot(tree)
    target = tree / EXECUTOR
    target.chmod(0o444)
    try:
        with pytest.raises(PatchError) as info:
            apply_tree(tree, write=True)
        assert info.value.kind == "not-writable"
        assert snapshot(tree) == before  # not even the other changed files
    finally:
        target.chmod(0o644)


def test_out_dir_not_empty_or_under_read_only_parent(tmp_path, capsys):
    tree = copy_fixture(tmp_path / "tree")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine\n")
    assert main(["apply", "--tree", str(tree), "--out", str(busy)]) == EXIT_NOT_WRITABLE
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert main(["apply", "--tree", str(tree), "--out", str(locked / "out")]) == EXIT_NOT_WRITABLE
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)

    inside = tree / "patched"
    assert main(["apply", "--tree", str(tree), "--out", str(inside)]) == EXIT_NOT_WRITABLE
    assert not inside.exists()


def test_installed_without_package(monkeypatch, capsys):
    with pytest.raises(LocateError) as info:
        find_installed()
    assert info.value.kind == "not-installed"
    assert main(["apply", "--installed", "--write"]) == EXIT_NOT_INSTALLED
    assert "no installed" in capsys.readouterr().err


def test_installed_package_is_found_without_importing_it(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    copy_fixture(tmp_path / "src")
    (tmp_path / "src" / "tensorrt_llm").rename(site / "tensorrt_llm")
    # Importing would fail loudly: proof that locating does not import.
    (site / "tensorrt_llm" / "__init__.py").write_text("raise ImportError('needs GPUs')\n")
    info = site / "tensorrt_llm-0.99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorrt_llm\nVersion: 0.99.0\n")
    (info / "RECORD").write_text("")
    out = tmp_path / "out"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(site)!r})
        from tensorrt_llm_patch.__main__ import main
        code = main(["apply", "--installed", "--out", {str(out)!r}])
        assert "tensorrt_llm" not in sys.modules, "the package was imported"
        sys.exit(code)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(site)})
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "0.99.0.dev0+fixture" in (out / "report.md").read_text()
    assert (out / EXECUTOR).is_file()


def test_usage_errors(tmp_path, capsys):
    tree = copy_fixture(tmp_path / "tree")
    assert main(["apply", "--tree", str(tree), "--out", str(tmp_path / "o"), "--write"]) == EXIT_USAGE
    assert main(["apply", "--tree", str(tree)]) == EXIT_USAGE
    assert main(["apply", "--tree", str(tree), "--write", "--full-copy"]) == EXIT_USAGE
    assert main(["apply", "--tree", str(tree), "--write", "--strategy", "bogus"]) == EXIT_USAGE
    assert main([]) == EXIT_USAGE
    assert main(["verify"]) == EXIT_USAGE
    capsys.readouterr()
    assert not (tmp_path / "o").exists()


def test_a_failed_in_place_replace_is_rolled_back(tmp_path, monkeypatch):
    import tensorrt_llm_patch.apply as apply_module

    tree = copy_fixture(tmp_path / "tree")
    before = snapshot(tree)
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src, dst):
        calls["n"] += 1
        if calls["n"] == 2:  # after the first backup landed, before the patched file does
            raise OSError(5, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(apply_module.os, "replace", flaky_replace)
    with pytest.raises(PatchError) as info:
        apply_tree(tree, write=True)
    monkeypatch.setattr(apply_module.os, "replace", real_replace)
    assert info.value.kind == "not-writable" and "restored" in str(info.value)
    assert snapshot(tree) == before
