"""What respecting .gitignore costs a run, inside a git work tree.

The tree (default: the installed torch package; pass vLLM's sources for the
issue's figure) is copied into a fresh git repository with every file
committed, as a checkout would be.  Then, alternating so that a machine whose
speed drifts affects both sides alike:

* discovery with ``.gitignore`` respected (the default: one
  ``git check-ignore --stdin`` for the whole tree) and without
  (``--no-respect-gitignore``), in this process, median of the repeats;
* one whole ``cslint check --no-cache`` per side, for scale.

The figure that matters is the discovery difference next to the whole run.

    .venv/bin/python bench/gitignore_cost.py [TREE] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def default_tree() -> str:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed; pass a tree to measure")
    return list(spec.submodule_search_locations)[0]


def git_copy(tree: str, scratch: str) -> str:
    target = os.path.join(scratch, os.path.basename(os.path.normpath(tree)) or "tree")
    shutil.copytree(tree, target, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    with open(os.path.join(target, ".gitignore"), "w", encoding="utf-8") as handle:
        handle.write("__pycache__/\n*.so\nbuild/\n")
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="bench",
               GIT_AUTHOR_EMAIL="bench@example.invalid", GIT_COMMITTER_NAME="bench",
               GIT_COMMITTER_EMAIL="bench@example.invalid")
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(argv, cwd=target, env=env, check=True, capture_output=True)
    return target


def time_discovery(tree: str, respect: bool) -> tuple[float, int]:
    from cslint.engine.discovery import DiscoveryOptions, discover_files, settings_resolver

    started = time.perf_counter()
    found = discover_files([tree], settings_resolver(), DiscoveryOptions(respect_gitignore=respect))
    return time.perf_counter() - started, len(found.files)


def time_git_answer(tree: str, paths: list) -> float:
    """The .gitignore query alone, for every discovered file."""
    from cslint.engine.discovery import GitIgnore

    started = time.perf_counter()
    gitignore = GitIgnore()
    for path in paths:
        gitignore.ask(path)
    gitignore.ignored()
    return time.perf_counter() - started


def time_check(tree: str, respect: bool) -> float:
    flag = "--respect-gitignore" if respect else "--no-respect-gitignore"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cslint", "check", "--no-cache", "-qq", flag, tree], check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=None)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    tree = args.tree or default_tree()
    with tempfile.TemporaryDirectory(prefix="cslint-gitignore-") as scratch:
        copy = git_copy(tree, scratch)
        from cslint.engine.discovery import DiscoveryOptions, discover_files, settings_resolver

        discovery = {True: [], False: []}
        files = {}
        paths = [f.path for f in discover_files([copy], settings_resolver(), DiscoveryOptions(False, False)).files]
        answers = []
        for _ in range(args.repeat):
            for respect in (True, False):
                seconds, count = time_discovery(copy, respect)
                discovery[respect].append(seconds)
                files[respect] = count
            answers.append(time_git_answer(copy, paths))
        whole = {respect: time_check(copy, respect) for respect in (True, False)}
    print(f"tree: {tree} ({files[False]} files; {files[True]} after .gitignore)")
    print(f"{'':<28}{'respect .gitignore':>20}{'--no-respect-gitignore':>24}")
    med = {k: statistics.median(v) for k, v in discovery.items()}
    print(f"{'discovery, median (s)':<28}{med[True]:>20.3f}{med[False]:>24.3f}")
    print(f"{'whole check, one run (s)':<28}{whole[True]:>20.2f}{whole[False]:>24.2f}")
    print(f"git's answer alone, median: {statistics.median(answers):.3f} s for {len(paths)} files")
    print(f"gitignore cost: {med[True] - med[False]:.3f} s per run "
          f"({100 * (med[True] - med[False]) / max(whole[False], 1e-9):.1f} % of the whole check)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
