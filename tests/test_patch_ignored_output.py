"""The patcher analyses the tree it is handed whole, even inside a folder the
enclosing git repository ignores (``make demo`` writes its patched copy to the
ignored ``demo-out/``, and ``verify`` lints that copy again)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from cslint.config import Settings
from tensorrt_llm_patch.apply import run_check

HAZARD = """\
import torch.distributed as dist


def step(t):
    if dist.get_rank() == 0:
        return
    dist.all_reduce(t)
"""


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_run_check_lints_a_tree_in_an_ignored_folder(tmp_path: Path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("out/\n")
    tree = tmp_path / "out"
    tree.mkdir()
    (tree / "executor.py").write_text(HAZARD)
    result = run_check([tree], Settings())
    assert result.files == 1
    assert [(Path(f.path).name, f.code) for f in result.findings] == [("executor.py", "CSL102")]
