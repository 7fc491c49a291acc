"""Files deep inside a folder the repository ignores are ignored, not linted
with no .gitignore at all.  git 2.39's ``ls-files`` fails when the pathspecs
it is handed share a prefix inside an ignored directory ("directory entry not
superset of prefix"); discovery then asks again one level up, until git lists
the ignored folder itself (``GitIgnore._ignored_in``)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from cslint.engine.discovery import GitIgnore, _outermost_scopes

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _repository(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("generated/\n")
    for relative in ("generated/stage/shards/first.py", "generated/stage/shards/second.py",
                     "generated/stage/other/third.py", "source/kept.py"):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("VALUE = 1\n")
    return root


@needs_git
def test_files_deep_in_an_ignored_folder_are_ignored_without_a_warning(tmp_path: Path):
    root = _repository(tmp_path)
    gitignore = GitIgnore()
    deep = [root / "generated/stage/shards/first.py", root / "generated/stage/shards/second.py"]
    for path in deep:
        gitignore.ask(str(path))
    assert gitignore.ignored() == {str(path) for path in deep}
    assert gitignore.warnings == []


@needs_git
def test_scopes_in_and_out_of_the_ignored_folder_keep_apart(tmp_path: Path):
    root = _repository(tmp_path)
    gitignore = GitIgnore()
    asked = [root / "generated/stage/shards/first.py", root / "generated/stage/other/third.py",
             root / "source/kept.py"]
    for path in asked:
        gitignore.ask(str(path))
    assert gitignore.ignored() == {str(asked[0]), str(asked[1])}
    assert gitignore.warnings == []


def test_outermost_scopes_keep_only_the_directories_no_other_holds():
    assert _outermost_scopes(["a/b/c", "a/b", "d", "a/bc"]) == ["a/b", "a/bc", "d"]
    assert _outermost_scopes(["a/b", ""]) == [""]
