"""`python -m cslint.runtime SCRIPT` / `install()`: sanitizing programs that were not changed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cslint.runtime.report import diagnose
from tensorrt_llm_patch.validate_runner import find_mpiexec, mpiexec_flags, run_in_group

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = find_mpiexec()


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found")
@pytest.mark.timeout(60)
def test_launcher_sanitizes_an_unmodified_mpi_program(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent("""
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        assert comm.allgather(rank) == [0, 1]
        sub = comm.Split(0, rank)
        assert sub.allgather(rank) == [0, 1]
        if rank == 0:
            comm.allgather("rank 0 went this way")
        else:
            comm.bcast("rank 1 went that way", root=1)
        print("unreachable", flush=True)
    """))
    report = tmp_path / "rep"
    proc = run_in_group([MPIEXEC, *mpiexec_flags(MPIEXEC), "-n", "2", sys.executable, "-m", "cslint.runtime",
                         "--report-dir", str(report), "--timeout", "1", str(program)], timeout=50, cwd=str(ROOT))
    # MPICH deadlocks on the mismatched pair, Open MPI may let the broadcast root through
    # (a root cannot check what it does not receive); either way the job is aborted
    assert proc.returncode != 0, proc.stderr
    diagnosis = diagnose(str(report), link_findings=False)
    assert diagnosis.diverged and diagnosis.group == "world"
    sites = {s.rank: (s.entry or s.at)["site"] for s in diagnosis.sites}
    assert sites == {0: "prog.py:9", 1: "prog.py:11"}


def test_launcher_usage_error():
    proc = subprocess.run([sys.executable, "-m", "cslint.runtime", "/nonexistent/prog.py"], check=False,
                          capture_output=True, text=True, timeout=30, cwd=str(ROOT))
    assert proc.returncode == 2 and "no such file" in proc.stderr


@pytest.mark.timeout(60)
def test_install_patches_torch_distributed_before_it_is_imported(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "gloo.py"
    script.write_text(textwrap.dedent(f"""
        import multiprocessing as mp, os, sys
        sys.path.insert(0, {str(ROOT)!r})
        import cslint.runtime as rt
        rt.install(report_dir={str(tmp_path / 'rep')!r}, timeout=0, on_error="raise")
        import torch.distributed as dist   # patched on import

        def child(rank):
            dist.init_process_group("gloo", store=dist.FileStore({str(tmp_path / 'store')!r}, 2), rank=rank,
                                    world_size=2)
            out = [None, None]
            dist.all_gather_object(out, rank * 10)
            assert out == [0, 10], out
            try:
                if rank == 0:
                    dist.all_gather_object(out, "a")
                else:
                    dist.all_gather_object(out, "b")
            except rt.CollectiveDivergence:
                os._exit(40 + rank)
            os._exit(1)

        procs = [mp.get_context("fork").Process(target=child, args=(r,)) for r in range(2)]
        for p in procs: p.start()
        for p in procs: p.join(40)
        print(sorted(p.exitcode for p in procs))
    """))
    proc = run_in_group([sys.executable, str(script)], timeout=55)
    assert proc.stdout.strip().splitlines()[-1] == "[40, 41]", proc.stdout + proc.stderr
