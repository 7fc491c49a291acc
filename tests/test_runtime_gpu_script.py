"""scripts/gpu_validation.sh in its dry mode: the runs it would make per GPU count, and wall times measured
without `bc` (the GPU host has none)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_validation.sh"
LINE = re.compile(r"^(?P<name>[\w.-]+)\texit=(?P<code>\d+)\twall=(?P<wall>\d+\.\d)s\t(?P<command>.+)$")


def dry_run(tmp_path: Path, gpus: int, sleep: str = "0.3", path: str | None = None) -> list[dict]:
    env = dict(os.environ, GPU_COUNT=str(gpus), DRY_SLEEP=sleep)
    if path is not None:
        env["PATH"] = path
    out = tmp_path / f"out{gpus}"
    proc = subprocess.run([shutil.which("bash"), str(SCRIPT), "--dry-run", str(out)], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = (out / "summary.tsv").read_text().splitlines()
    assert proc.stdout.splitlines() == lines  # the summary is printed at the end
    rows = []
    for line in lines:
        match = LINE.match(line)
        assert match, line
        rows.append(match.groupdict())
    return rows


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not found")
def test_dry_run_with_eight_gpus_lists_the_nccl_matrix_and_times_each_run(tmp_path):
    rows = dry_run(tmp_path, 8)
    names = [row["name"] for row in rows]
    assert names[:3] == ["nccl-n4-k2-gate-on", "nccl-n4-k2-gate-off", "nccl-n4-k2-pp"]
    assert len(names) == 2 * 3 * 3  # 4 and 8 ranks x draft_len 2, 3, 4 x (gate on, gate off, PP)
    assert "nccl-n8-k4-pp" in names
    for row in rows:
        assert row["code"] == "0"
        assert 0.2 <= float(row["wall"]) <= 5.0, row  # the 0.3 s each dry run sleeps, not 0.0
        assert "--backend nccl" in row["command"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not found")
def test_dry_run_without_bc_on_a_host_with_one_gpu(tmp_path):
    """The fallback set of runs, on a PATH that holds no `bc`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("date", "sleep", "mkdir", "cat", "timeout", "head", "nvidia-smi", "mpiexec", "python3"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    assert shutil.which("bc", path=str(bin_dir)) is None
    rows = dry_run(tmp_path, 1, sleep="0.5", path=str(bin_dir))
    assert [row["name"] for row in rows] == ["nccl-n4-refused", "mpi-matrix-gpu-forward", "gloo-n4-k3-off-gpu-forward",
                                             "nccl-1rank-sanitized", "local-reference"]
    assert all(0.4 <= float(row["wall"]) <= 5.0 for row in rows), rows
