"""Rebuild the TensorRT-LLM executor files used by the executor triage, outside the repository.

The triage (docs/trtllm_triage.md, bench/realtree/trtllm_labels.tsv) lints one
py_executor.py plus the modules it calls for collective facts.  The files come
from the public repository NVIDIA/TensorRT-LLM, each at the commit listed in
MANIFEST, and are never committed here.  Each entry carries the git blob id and
the sha256 of the file, so any copy can be checked byte for byte.

Two ways to get them:

* from a clone (``--repo PATH``): every file is read with ``git show
  COMMIT:PATH`` and checked against its blob id;
* without a clone: ``--print-urls`` lists one raw-file URL per entry; download
  them by hand into ``DEST/COMMIT/PATH`` and run ``--check DEST``.

Either way ``DEST/tree/`` is then assembled: the tensorrt_llm/ package layout
that ``cslint check`` and ``python -m tensorrt_llm_patch apply --tree`` read.

    python bench/realtree/fetch_trtllm.py --repo ~/TensorRT-LLM --dest /work/trees/trtllm
    python bench/realtree/fetch_trtllm.py --check /work/trees/trtllm
    .venv/bin/cslint check --no-cache --format json \\
        --config bench/realtree/trtllm_cslint.toml /work/trees/trtllm/tree

The files do not share one commit: the look-up index the triage was made from
stores one version per file, so the executor is pinned at its commit and every
helper module at the commit of the version that was stored for it.  The triage
document says what that mismatch means for the findings.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPOSITORY = "NVIDIA/TensorRT-LLM"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


class Entry(NamedTuple):
    path: str
    commit: str
    git_blob: str
    sha256: str


# The executor first; the rest are the modules whose methods it calls for collectives.
MANIFEST: tuple[Entry, ...] = (
    Entry("tensorrt_llm/_torch/pyexecutor/py_executor.py",
          "0004396720054fd8e205cbf616f21f0b57c6b412",
          "b59da308b7bc921c230c49f73313ffbcd3bac5b8",
          "f25bcd4cfbbc787a724522e3b147c38c76d806a215a8b74c8141c389a4e160e7"),
    Entry("tensorrt_llm/_torch/disaggregation/orchestration/coordinator.py",
          "05132475bfc2498e0762f808d73619ea70941ef6",
          "c168615698779fc63670c474ca50a4f126c248f1",
          "dbb297e55d64c0a85f8177a9abcf58f0c337ee0c83bf24f303fc0f4cdee3c123"),
    Entry("tensorrt_llm/_torch/disaggregation/kv_cache_transceiver.py",
          "0b42ceaf8df61f7056963d1b34a53a3a684595de",
          "b83758bd4c53b461518d569465a10a99c632a3f9",
          "b57f7cca9f943f2e2ab1ac25cbc4f906e10b5b6d918e3e4da1a64fd15fc2c0e4"),
    Entry("tensorrt_llm/_torch/disaggregation/transceiver.py",
          "00620eb025e7c24895986e1042380bd1be4426d9",
          "aea6c7db1c1ee8e21d5def36c019a840e38b168d",
          "3a2a996b8dfc0c2180485db838cc75a31483302e08dd811141caee1b05ffec18"),
    Entry("tensorrt_llm/_torch/disaggregation/orchestration/pp_termination.py",
          "6dc94b061170d7e8ac05cce6c44f8a20309bb9d4",
          "a1ab9de6e5dbb406359fa22bfb0beabc3d262803",
          "372530973a3688b96ba13c6d6d8e0fe8947e59e31cb6122752d79aba6b9c0e55"),
    Entry("tensorrt_llm/_torch/pyexecutor/request_utils.py",
          "05a226428c22314134409e8f074d69de184fd19e",
          "94c2eb3a5a27949193a044fd7016130b2cc85e14",
          "177a5b825e6cef2996fd7046aba4e55750e711539ed6590771bcb7a8320262f2"),
    Entry("tensorrt_llm/_torch/pyexecutor/scheduler/adp_router.py",
          "02385f29bd8e10555b781d4ab00a262a54a95aa3",
          "621cdb71517a84ace5a45ff175cfab727c32fead",
          "11c386944c0a14e310e24c7f25b7ce541958759a761f835497994e02215ce6c5"),
    Entry("tensorrt_llm/_torch/pyexecutor/hang_detector.py",
          "06c5e53268583f2c4df5ab3b8fc07843b8f6f840",
          "9a99c7a9f8962148b3f42c7c1860f6116b837653",
          "1e9a51f15da2de40def97fe1027802ed497849760fd0397e3fee64638f897c22"),
)


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob with these bytes (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def problem_with(entry: Entry, data: bytes) -> str | None:
    """Why ``data`` is not the recorded file, or None when it is."""
    if git_blob_id(data) != entry.git_blob:
        return f"{entry.path}@{entry.commit[:12]}: git blob {git_blob_id(data)} != recorded {entry.git_blob}"
    if hashlib.sha256(data).hexdigest() != entry.sha256:
        return f"{entry.path}@{entry.commit[:12]}: sha256 differs from the record"
    return None


def copy_path(dest: Path, entry: Entry) -> Path:
    return dest / entry.commit / entry.path


def fetch_from_clone(repo: Path, dest: Path) -> list[str]:
    problems = []
    for entry in MANIFEST:
        try:
            data = subprocess.run(
                ["git", "-C", str(repo), "show", f"{entry.commit}:{entry.path}"],
                check=True, capture_output=True).stdout
        except subprocess.CalledProcessError as exc:
            problems.append(f"{entry.path}@{entry.commit[:12]}: git show failed: "
                            f"{exc.stderr.decode(errors='replace').strip()}")
            continue
        problem = problem_with(entry, data)
        if problem:
            problems.append(problem)
            continue
        target = copy_path(dest, entry)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return problems


def check(dest: Path) -> list[str]:
    problems = []
    for entry in MANIFEST:
        target = copy_path(dest, entry)
        if not target.is_file():
            problems.append(f"missing: {target}")
            continue
        problem = problem_with(entry, target.read_bytes())
        if problem:
            problems.append(problem)
    return problems


def assemble(dest: Path) -> Path:
    """Lay the per-commit copies out as one tensorrt_llm/ package under DEST/tree."""
    tree = dest / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    for entry in MANIFEST:
        target = tree / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(copy_path(dest, entry), target)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=Path("/work/trees/trtllm"),
                        help="where the per-commit copies and the assembled tree go (outside the repository)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--repo", type=Path, help="a clone of NVIDIA/TensorRT-LLM holding the listed commits")
    source.add_argument("--check", type=Path, metavar="DEST",
                        help="only verify copies already placed under DEST/COMMIT/PATH, then assemble")
    source.add_argument("--print-urls", action="store_true", help="print one raw-file URL per file and exit")
    args = parser.parse_args(argv)

    if args.print_urls:
        for entry in MANIFEST:
            print(RAW_URL.format(repo=REPOSITORY, commit=entry.commit, path=entry.path))
        return 0
    dest = args.check if args.check is not None else args.dest
    problems = fetch_from_clone(args.repo, dest) if args.repo is not None else check(dest)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    tree = assemble(dest)
    print(f"{len(MANIFEST)} files verified; tree assembled at {tree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
