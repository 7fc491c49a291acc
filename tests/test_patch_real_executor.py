"""The patch of the real TensorRT-LLM executor files, against their labelled triage.

Opt-in: ``TRTLLM_EXECUTOR_TREE`` names the assembled files of ``docs/trtllm_triage.md``
(``bench/realtree/fetch_trtllm.py`` builds them; they are never committed).  The tree is never
modified: the patch is applied with ``patch -p1`` to a copy.  Every hunk must sit at a site the
labels (``bench/realtree/trtllm_labels.tsv``) call a hazard, ``verify`` must pass on the patched
copy, and a second ``apply`` must find nothing to do.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tensorrt_llm_patch.__main__ import EXIT_NOTHING_TO_DO, EXIT_OK, main

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "realtree" / "trtllm_labels.tsv"
TREE = os.environ.get("TRTLLM_EXECUTOR_TREE")

pytestmark = pytest.mark.skipif(
    not TREE, reason="set TRTLLM_EXECUTOR_TREE to the assembled executor files of docs/trtllm_triage.md")


def _labels() -> dict:
    with open(LABELS, encoding="utf-8") as handle:
        return {(row["path"], int(row["line"]), row["code"]): row["verdict"]
                for row in csv.DictReader(handle, delimiter="\t")}


def _hunks(diff: str) -> list[tuple[str, int, int]]:
    """(path, first original line, last original line) of each hunk."""
    out, path = [], ""
    for line in diff.splitlines():
        if line.startswith("--- a/"):
            path = line[len("--- a/"):]
        match = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
        if match:
            start, count = int(match.group(1)), int(match.group(2) or 1)
            out.append((path, start, start + count - 1))
    return out


@pytest.mark.timeout(900)
def test_every_hunk_is_at_a_labelled_hazard_and_the_patched_copy_verifies(tmp_path):
    out = tmp_path / "out"
    code = main(["apply", "--tree", TREE, "--out", str(out)])
    assert code in (EXIT_OK, EXIT_NOTHING_TO_DO)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    labels = _labels()
    fixed = [h for h in report["hazards"] if h["outcome"] == "fixed"]
    for hazard in fixed:
        label = labels.get((hazard["path"], hazard["line"], hazard["code"]))
        assert label == "TP", f"{hazard['path']}:{hazard['line']} {hazard['code']} is labelled {label}"
    # every finding is labelled: a new one is read and labelled before it may reach the patch
    unlabelled = [h for h in report["hazards"] if (h["path"], h["line"], h["code"]) not in labels]
    assert not unlabelled, [(h["path"], h["line"], h["code"]) for h in unlabelled]
    diff = (out / "patch.diff").read_text(encoding="utf-8")
    for path, first, last in _hunks(diff):
        guards = [h["guard"]["line"] for h in fixed if h["path"] == path]
        assert any(first <= line <= last for line in guards), f"hunk {path}:{first}-{last} holds no fixed site"
    if code == EXIT_NOTHING_TO_DO:
        return
    copy = tmp_path / "copy"
    shutil.copytree(TREE, copy)
    applied = subprocess.run(["patch", "-p1", "--forward", "--batch", "-i", str(out / "patch.diff")], cwd=copy,
                             capture_output=True, text=True, check=False, timeout=120)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert main(["verify", "--tree", str(copy), "--against", TREE]) == EXIT_OK
    again = tmp_path / "again"
    assert main(["apply", "--tree", str(copy), "--out", str(again)]) == EXIT_NOTHING_TO_DO
