"""The published pre-commit hooks, run for real by pre-commit in throwaway git repositories.

Offline: the hooks repository is a local clone-able git repo holding our
``.pre-commit-hooks.yaml``, and the test runs the ``language: system`` hook, so
pre-commit builds no environment (the ``cslint`` on PATH is this checkout's).
The ``language: python`` hook is checked against pre-commit's manifest schema.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS_FILE = os.path.join(REPO_ROOT, ".pre-commit-hooks.yaml")
VENV_BIN = os.path.dirname(sys.executable)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HELPERS = textwrap.dedent(
    """\
    import torch.distributed as dist


    def sync_counts(tensor):
        dist.all_reduce(tensor)
        return tensor
    """
)
CLEAN_STEP = textwrap.dedent(
    """\
    import torch.distributed as dist

    from helpers import sync_counts


    def step(tensor):
        sync_counts(tensor)
        return tensor
    """
)
DIVERGENT_STEP = textwrap.dedent(
    """\
    import torch.distributed as dist

    from helpers import sync_counts


    def step(tensor):
        if dist.get_rank() == 0:
            sync_counts(tensor)
        return tensor
    """
)
UNTOUCHED_BAD = textwrap.dedent(
    """\
    import torch.distributed as dist


    def legacy(tensor):
        if dist.get_rank() == 0:
            dist.barrier()
    """
)


def _env(tmp_path) -> dict:
    env = dict(os.environ)
    env["PATH"] = VENV_BIN + os.pathsep + env.get("PATH", "")
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env["PRE_COMMIT_COLOR"] = "never"
    env.update(
        GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="test", GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
    )
    env.pop("VIRTUAL_ENV", None)
    return env


def _git(cwd, env, *args) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _hooks_repo(tmp_path, env) -> tuple[str, str]:
    repo = tmp_path / "hooks-repo"
    repo.mkdir()
    shutil.copy(HOOKS_FILE, repo / ".pre-commit-hooks.yaml")
    _git(repo, env, "init", "-q", "-b", "main")
    _git(repo, env, "add", ".pre-commit-hooks.yaml")
    _git(repo, env, "commit", "-q", "-m", "hooks")
    return str(repo), _git(repo, env, "rev-parse", "HEAD")


def _project(tmp_path, env, hooks_repo: str, rev: str) -> str:
    project = tmp_path / "project"
    project.mkdir()
    (project / "helpers.py").write_text(HELPERS)
    (project / "step.py").write_text(CLEAN_STEP)
    (project / "legacy.py").write_text(UNTOUCHED_BAD)
    (project / "generated").mkdir()
    (project / "generated" / "bad_pb.py").write_text(UNTOUCHED_BAD)
    (project / "pyproject.toml").write_text('[tool.cslint]\nextend-exclude = ["generated"]\n')
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hooks_repo}\n  rev: {rev}\n  hooks:\n  - id: cslint-system\n"
    )
    _git(project, env, "init", "-q", "-b", "main")
    _git(project, env, "add", "-A")
    _git(project, env, "commit", "-q", "-m", "initial")
    return str(project)


def _pre_commit(project: str, env: dict, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "cslint-system", "--files", *files],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )


def test_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(HOOKS_FILE)}
    assert set(hooks) == {"cslint", "cslint-system"}
    for hook in hooks.values():
        assert hook["entry"] == "cslint check --force-exclude --context ."
        assert hook["types"] == ["python"]
        assert hook["require_serial"] is True
    assert hooks["cslint"]["language"] == "python"
    # pre-commit >= 4.4 reads `system` as its new name `unsupported`; the file keeps `system` for older versions
    assert hooks["cslint-system"]["language"] in ("system", "unsupported")
    with open(HOOKS_FILE, encoding="utf-8") as handle:
        assert "language: system" in handle.read()


def test_hook_checks_changed_files_with_project_context(tmp_path):
    env = _env(tmp_path)
    hooks_repo, rev = _hooks_repo(tmp_path, env)
    project = _project(tmp_path, env, hooks_repo, rev)

    clean = _pre_commit(project, env, "step.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout

    # The edit makes the wrapper's collective (in the unchanged helpers.py) rank-dependent.
    with open(os.path.join(project, "step.py"), "w", encoding="utf-8") as handle:
        handle.write(DIVERGENT_STEP)
    dirty = _pre_commit(project, env, "step.py")
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "Failed" in dirty.stdout
    assert "step.py:8:" in dirty.stdout  # the call of the wrapper, found through helpers.py
    assert "legacy.py" not in dirty.stdout  # unchanged files are context, not reported

    # pre-commit names an excluded file: --force-exclude keeps it out, as a walk would
    excluded = _pre_commit(project, env, "generated/bad_pb.py")
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr
    assert "bad_pb.py" not in excluded.stdout

    # Without the project as context the wrapper is unknown: the facts really come from --context.
    alone = subprocess.run(
        [os.path.join(VENV_BIN, "cslint"), "check", "--no-cache", "step.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert "step.py:8:" not in alone.stdout


def test_hook_is_not_fooled_by_an_earlier_check(tmp_path):
    """An earlier `cslint check .` in the project (facts cached as ``./step.py``)
    must not let the hook (which names ``step.py``) pass a hazard."""
    env = _env(tmp_path)
    hooks_repo, rev = _hooks_repo(tmp_path, env)
    project = _project(tmp_path, env, hooks_repo, rev)
    with open(os.path.join(project, "step.py"), "w", encoding="utf-8") as handle:
        handle.write(DIVERGENT_STEP)
    earlier = subprocess.run([os.path.join(VENV_BIN, "cslint"), "check", "."], cwd=project, env=env,
                             capture_output=True, text=True, timeout=120)
    assert "step.py:8:" in earlier.stdout and os.path.isdir(os.path.join(project, ".cslint_cache"))
    dirty = _pre_commit(project, env, "step.py")
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "step.py:8:" in dirty.stdout


def test_the_documented_rev_is_a_release_tag_whose_hooks_run(tmp_path):
    """docs/integrations.md's remote snippet names a `rev` that exists in this
    repository: an annotated tag for the version in pyproject.toml, whose
    hooks manifest has the hook it names.  pre-commit then runs the hooks of
    that tag (the offline `cslint-system` one) from a clone of this repository."""
    import re

    import tomllib
    import yaml

    with open(os.path.join(REPO_ROOT, "docs", "integrations.md"), encoding="utf-8") as handle:
        blocks = re.findall(r"```yaml\n(.*?)```", handle.read(), re.S)
    (remote,) = [yaml.safe_load(b)["repos"][0] for b in blocks if "rev:" in b]
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as handle:
        version = tomllib.load(handle)["project"]["version"]
    assert remote["rev"] == f"v{version}"
    if not os.path.exists(os.path.join(REPO_ROOT, ".git")):
        pytest.skip("not a git checkout: the tag cannot be looked up")
    env = _env(tmp_path)
    if not _git(REPO_ROOT, env, "tag", "--list", remote["rev"]):
        # CI checks out a clone that carries commits but no tags; the tag is
        # looked up wherever it exists (every working clone of the project).
        pytest.skip(f"this checkout has no tag {remote['rev']} (a clone without tags)")
    assert _git(REPO_ROOT, env, "cat-file", "-t", remote["rev"]) == "tag"  # annotated
    manifest = yaml.safe_load(_git(REPO_ROOT, env, "show", f"{remote['rev']}:.pre-commit-hooks.yaml"))
    assert {hook["id"] for hook in remote["hooks"]} <= {hook["id"] for hook in manifest}

    project = _project(tmp_path, env, str(REPO_ROOT), remote["rev"])
    with open(os.path.join(project, "step.py"), "w", encoding="utf-8") as handle:
        handle.write(DIVERGENT_STEP)
    dirty = _pre_commit(project, env, "step.py")
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "step.py:8:" in dirty.stdout
