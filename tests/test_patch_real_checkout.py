"""Opt-in: apply + verify on a real TensorRT-LLM checkout named by ``TRTLLM_TREE``.

The checkout is never modified: the patch goes to a temporary output
directory, ``git apply --check`` only reads, and verify overlays the patched
files on a temporary copy of the package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tensorrt_llm_patch.__main__ import EXIT_NOTHING_TO_DO, EXIT_OK, EXIT_RELINT, main
from tensorrt_llm_patch.verify import verify_tree

TREE = os.environ.get("TRTLLM_TREE")

pytestmark = pytest.mark.skipif(
    not TREE, reason="set TRTLLM_TREE=/path/to/TensorRT-LLM checkout to run apply + verify on it")


@pytest.mark.timeout(1800)
def test_apply_and_verify_on_the_checkout(tmp_path):
    tree = Path(TREE)
    out = tmp_path / "out"
    code = main(["apply", "--tree", str(tree), "--out", str(out)])
    assert code in (EXIT_OK, EXIT_NOTHING_TO_DO)
    assert (out / "report.json").is_file() and (out / "report.md").is_file()
    if code == EXIT_NOTHING_TO_DO:
        return
    diff = out / "patch.diff"
    assert diff.read_text(encoding="utf-8").startswith("diff --git")
    if shutil.which("git"):
        check = subprocess.run(["git", "apply", "--check", str(diff)], cwd=tree, capture_output=True, text=True, check=False,
                               timeout=300)
        assert check.returncode == 0, check.stderr
    report = verify_tree(tree, against=out)
    assert report.compiles, report.compile_errors
    assert not report.relint_error, report.relint_error
    assert main(["verify", "--tree", str(tree), "--against", str(out)]) in (EXIT_OK, EXIT_RELINT)
