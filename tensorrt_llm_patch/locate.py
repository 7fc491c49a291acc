"""Find and identify a TensorRT-LLM tree without importing it.

Importing ``tensorrt_llm`` loads CUDA extensions and needs GPUs, so everything
here reads files: the import spec (``importlib.util.find_spec`` on the
top-level name only locates the package, it does not execute it), the
distribution metadata, ``tensorrt_llm/version.py`` and the packaging files of
a checkout.

A *tree root* is the directory that holds the ``tensorrt_llm/`` package
directory: a source checkout's top level, or the ``site-packages`` directory of
an installation.  Paths in patches and reports are relative to it, so
``git apply`` / ``patch -p1`` work from a checkout's top level.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "tensorrt_llm"
DISTRIBUTION_NAMES = ("tensorrt_llm", "tensorrt-llm", "tensorrt_llm_cu13", "tensorrt-llm-cu13")
# The executor lives here in every version that has the PyTorch backend; a
# `tensorrt_llm/` directory without it is some other package or a TRT-only build.
EXECUTOR_MARKERS = ("_torch/pyexecutor", "_torch/distributed")


class LocateError(Exception):
    """The tree cannot be used; ``kind`` selects the exit status."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class TreeInfo:
    """A TensorRT-LLM tree: where it is and which version it claims to be."""

    root: Path  # holds the tensorrt_llm/ package directory
    version: str  # "unknown" when no source could be read
    version_source: str  # which file, command or metadata the version came from (or what was tried)
    origin: str  # "checkout" | "installed"
    git_describe: str = ""  # `git describe` of a checkout, "" when the tree is not in a git work tree

    @property
    def package_dir(self) -> Path:
        return self.root / PACKAGE


def _literal_assignment(path: Path, name: str) -> str | None:
    """The string assigned to ``name`` at module level, read with ``ast``."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    return value.value
    return None


def _version_from_metadata(root: Path) -> tuple[str, str] | None:
    """Version from a ``*.dist-info`` / ``*.egg-info`` next to the package."""
    for pattern in ("tensorrt_llm-*.dist-info", "tensorrt_llm*.dist-info", "tensorrt_llm*.egg-info"):
        for info in sorted(root.glob(pattern)):
            for meta_name in ("METADATA", "PKG-INFO"):
                meta = info / meta_name
                if meta.is_file():
                    try:
                        text = meta.read_text(encoding="utf-8", errors="replace")
                    except OSError:
                        continue
                    match = re.search(r"^Version:\s*(\S+)", text, re.MULTILINE)
                    if match:
                        return match.group(1), str(meta.relative_to(root))
    return None


GIT_TIMEOUT_S = 10


def git_describe(root: Path) -> str:
    """``git describe --tags --always --dirty`` of the checkout whose top
    level is ``root``; "" when ``root`` is not the top of a git work tree
    (a tree copied into another project's repository is not described by
    that repository's tags), or git is missing or slow."""
    git = shutil.which("git")
    if git is None:
        return ""
    try:
        top = subprocess.run([git, "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=GIT_TIMEOUT_S)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
            return ""
        found = subprocess.run([git, "-C", str(root), "describe", "--tags", "--always", "--dirty"],
                               capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ""
    return found.stdout.strip() if found.returncode == 0 else ""


def _version_from_distribution(root: Path) -> tuple[str, str] | None:
    """The version of an installed ``tensorrt_llm`` distribution of this
    tree: its files live at ``root`` (a site-packages directory), or it is
    an editable install of the checkout at ``root`` (its
    ``direct_url.json`` points there)."""
    wanted = root.resolve()
    for name in DISTRIBUTION_NAMES:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if not dist.version:
            continue
        label = f"installed distribution {dist.metadata.get('Name', name)}"
        try:
            if Path(str(dist.locate_file(""))).resolve() == wanted:
                return dist.version, label
        except (OSError, TypeError, ValueError, NotImplementedError):
            pass
        url = _direct_url(dist)
        if url is not None and url.resolve() == wanted:
            return dist.version, f"{label} (editable install of this checkout)"
    return None


def _direct_url(dist) -> Path | None:
    """The local directory a distribution was installed from (PEP 610), or None."""
    import json
    from urllib.parse import unquote, urlparse

    try:
        text = dist.read_text("direct_url.json")
        data = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url.startswith("file:"):
        return None
    return Path(unquote(urlparse(url).path))


def read_version(root: Path) -> tuple[str, str]:
    """(version, where it was read) for the tree at ``root``.

    In order: the package's version file, ``git describe`` of a checkout,
    the installed distribution's metadata (a ``*.dist-info`` beside the
    package, or the environment's distribution located at ``root``), then
    ``__init__.py`` and ``pyproject.toml``.  When none gives one, the
    version is "unknown" and the source says what was tried.
    """
    version_file = root / PACKAGE / "version.py"
    if version_file.is_file():
        value = _literal_assignment(version_file, "__version__")
        if value:
            return value, f"{PACKAGE}/version.py"
    described = git_describe(root)
    if described:
        return described, "git describe"
    found = _version_from_metadata(root) or _version_from_distribution(root)
    if found:
        return found
    init_file = root / PACKAGE / "__init__.py"
    if init_file.is_file():
        value = _literal_assignment(init_file, "__version__")
        if value:
            return value, f"{PACKAGE}/__init__.py"
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            import tomllib

            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            version = data.get("project", {}).get("version")
            if isinstance(version, str):
                return version, "pyproject.toml"
        except (OSError, UnicodeDecodeError, ValueError):
            return "unknown", "pyproject.toml (unreadable)"
    return "unknown", (f"none found: no {PACKAGE}/version.py, not the top of a git checkout, no installed "
                       "tensorrt_llm distribution at this path")


def tree_info(root: Path, origin: str) -> TreeInfo:
    version, source = read_version(root)
    described = git_describe(root) if source != "git describe" else version
    return TreeInfo(root=root, version=version, version_source=source, origin=origin, git_describe=described)


def _looks_like_trtllm(root: Path) -> bool:
    package = root / PACKAGE
    if not package.is_dir():
        return False
    return any((package / marker).is_dir() for marker in EXECUTOR_MARKERS)


def identify_tree(path: str | Path, origin: str = "checkout") -> TreeInfo:
    """Resolve ``path`` to a TensorRT-LLM tree root or raise :class:`LocateError`.

    ``path`` may be the tree root or the ``tensorrt_llm`` package directory
    itself (then its parent is the root).
    """
    candidate = Path(path).expanduser()
    if not candidate.exists():
        raise LocateError("missing", f"{path}: no such file or directory")
    if not candidate.is_dir():
        raise LocateError("not-trtllm", f"{path}: not a directory (give the checkout's top level)")
    candidate = candidate.resolve()
    for root in (candidate, candidate.parent) if candidate.name == PACKAGE else (candidate,):
        if _looks_like_trtllm(root):
            return tree_info(root, origin)
    raise LocateError(
        "not-trtllm",
        f"{path}: not a TensorRT-LLM tree (expected a `{PACKAGE}/` package with "
        f"`{EXECUTOR_MARKERS[0]}/` or `{EXECUTOR_MARKERS[1]}/` under it)",
    )


def find_installed() -> TreeInfo:
    """The installed ``tensorrt_llm`` package, found without importing it."""
    locations: list[Path] = []
    skipped: list[str] = []
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        for entry in spec.submodule_search_locations or []:
            locations.append(Path(entry).parent)
        if spec.origin and spec.origin not in ("namespace", "built-in"):
            locations.append(Path(spec.origin).parent.parent)
    for name in DISTRIBUTION_NAMES:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        try:
            locations.append(Path(str(dist.locate_file(""))))
        except (OSError, TypeError, ValueError, NotImplementedError) as exc:
            # An odd metadata backend only costs this candidate; the others may still resolve.
            skipped.append(f"{name}: {exc}")
    seen: set[Path] = set()
    for root in locations:
        root = root.resolve()
        if root in seen:
            continue
        seen.add(root)
        if _looks_like_trtllm(root):
            return tree_info(root, "installed")
    if locations:
        where = ", ".join(str(p) for p in sorted(seen))
        raise LocateError(
            "not-installed",
            f"an installed `{PACKAGE}` was found at {where}, but it has no PyTorch executor "
            f"(`{EXECUTOR_MARKERS[0]}/`)",
        )
    detail = f" (metadata that could not be read: {'; '.join(skipped)})" if skipped else ""
    raise LocateError(
        "not-installed",
        f"no installed `{PACKAGE}` package in this Python environment{detail}; use --tree PATH for a checkout",
    )
