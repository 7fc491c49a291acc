"""Where `tensorrt_llm_patch` reads a tree's TensorRT-LLM version from, one test per source.

The sources, in order: the package's version file, `git describe` of a checkout (only when the tree
is the top of its own work tree), the installed distribution's metadata (a `*.dist-info` beside the
package, or an editable install of the checkout), then `__init__.py` / `pyproject.toml`.  The
version reaches report.json and report.md.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensorrt_llm_patch.apply import apply_tree
from tensorrt_llm_patch.locate import identify_tree

from test_patch_helpers import copy_fixture

GIT = shutil.which("git")


def _bare_tree(tmp_path: Path) -> Path:
    """The fixture tree without its version file and packaging files."""
    tree = copy_fixture(tmp_path / "tree")
    (tree / "tensorrt_llm" / "version.py").unlink()
    for extra in ("setup.py", "pyproject.toml"):
        if (tree / extra).exists():
            (tree / extra).unlink()
    return tree


def _git(tree: Path, *args: str) -> None:
    subprocess.run([GIT, "-C", str(tree), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(tree), "PATH": "/usr/bin:/bin"})


def test_version_file_wins(tmp_path):
    tree = copy_fixture(tmp_path / "tree")
    info = identify_tree(tree)
    assert (info.version, info.version_source) == ("0.99.0.dev0+fixture", "tensorrt_llm/version.py")


def test_no_source_says_what_was_tried(tmp_path):
    info = identify_tree(_bare_tree(tmp_path))
    assert info.version == "unknown"
    assert "version.py" in info.version_source and "git" in info.version_source
    assert "distribution" in info.version_source


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_git_describe_of_a_checkout(tmp_path):
    tree = _bare_tree(tmp_path)
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "base")
    _git(tree, "tag", "v1.4.0rc2")
    info = identify_tree(tree)
    assert (info.version, info.version_source) == ("v1.4.0rc2", "git describe")
    (tree / "tensorrt_llm" / "_torch" / "pyexecutor" / "py_executor.py").write_text("x = 1\n")
    assert identify_tree(tree).version == "v1.4.0rc2-dirty"


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_git_describe_next_to_the_version_file(tmp_path):
    tree = copy_fixture(tmp_path / "tree")
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "base")
    _git(tree, "tag", "v0.99.0")
    info = identify_tree(tree)
    assert info.version == "0.99.0.dev0+fixture" and info.git_describe == "v0.99.0"


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_a_tree_inside_another_repository_is_not_described_by_it(tmp_path):
    outer = tmp_path / "project"
    outer.mkdir()
    _git(outer, "init", "-q")
    tree = _bare_tree(outer)
    _git(outer, "add", "-A")
    _git(outer, "commit", "-q", "-m", "vendored")
    _git(outer, "tag", "v9.9.9")
    info = identify_tree(tree)
    assert info.version == "unknown" and info.git_describe == ""


def test_dist_info_beside_the_package(tmp_path):
    tree = _bare_tree(tmp_path)
    meta = tree / "tensorrt_llm-1.3.0rc7.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorrt_llm\nVersion: 1.3.0rc7\n")
    info = identify_tree(tree)
    assert info.version == "1.3.0rc7"
    assert info.version_source.endswith("METADATA")


def test_editable_install_of_the_checkout(tmp_path, monkeypatch):
    tree = _bare_tree(tmp_path)
    site = tmp_path / "site"
    meta = site / "tensorrt_llm-1.3.0.dev5.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorrt_llm\nVersion: 1.3.0.dev5\n")
    (meta / "direct_url.json").write_text(json.dumps({"url": tree.resolve().as_uri(), "dir_info": {"editable": True}}))
    monkeypatch.setattr(sys, "path", [str(site)] + sys.path)
    info = identify_tree(tree)
    assert info.version == "1.3.0.dev5"
    assert "editable install" in info.version_source


def test_the_version_reaches_both_reports(tmp_path):
    tree = copy_fixture(tmp_path / "tree")
    report = apply_tree(tree, out=tmp_path / "out")
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["tensorrt_llm_version"] == "0.99.0.dev0+fixture"
    assert data["version_source"] == "tensorrt_llm/version.py"
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "**0.99.0.dev0+fixture** (from tensorrt_llm/version.py)" in markdown
    assert report.tree_info.version == "0.99.0.dev0+fixture"
