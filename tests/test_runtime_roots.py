"""Broadcast roots check their own call site (issue 17, item 4), on real collectives.

A root only sends in a broadcast, so it cannot compare there; the ledger owes
a check to the group's next collective, in which every rank sends and
receives.  Here the root broadcasts from one call site and its peer from
another: the peer finds out in the broadcast, the root in the next collective,
and the root's message names its own broadcast.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tensorrt_llm_patch.validate_runner import find_mpiexec, mpiexec_flags, run_in_group

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = find_mpiexec()


def _results(out: Path, ranks: int) -> dict[int, dict[str, str]]:
    results = {}
    for rank in range(ranks):
        lines = (out / f"rank{rank}.txt").read_text().splitlines()
        results[rank] = dict(line.split("\t", 1) for line in lines)
    return results


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found")
@pytest.mark.timeout(90)
def test_mpi_broadcast_root_with_another_call_site_learns_at_the_next_collective(tmp_path):
    script = tmp_path / "roots.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from mpi4py import MPI
        from cslint.runtime import CollectiveDivergence, wrap

        comm = wrap(MPI.COMM_WORLD, report_dir={str(tmp_path / 'rep')!r}, timeout=0, on_error="raise")
        rank = comm.Get_rank()
        seen = []


        def announce_plan():
            return comm.bcast("plan" if rank == 0 else None, root=0)


        def announce_stop():
            return comm.bcast("stop" if rank == 0 else None, root=0)


        for _ in range(3):  # agreed rounds: every rank broadcasts from the same site
            assert announce_plan() == "plan"
            comm.allgather(rank)
        for where, call in (("broadcast", announce_plan if rank == 0 else announce_stop),
                            ("allgather", lambda: comm.allgather(rank))):
            try:
                call()
                seen.append(where + "\\tpassed")
            except CollectiveDivergence as exc:
                seen.append(where + "\\t" + str(exc).replace("\\n", " "))
        with open({str(tmp_path)!r} + f"/rank{{rank}}.txt", "w") as fh:
            fh.write("\\n".join(seen) + "\\n")
    """))
    proc = run_in_group([MPIEXEC, *mpiexec_flags(MPIEXEC), "-n", "2", sys.executable, str(script)], timeout=80)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = _results(tmp_path, 2)
    root, peer = results[0], results[1]
    # the peer compares the root's message with its own path at once
    assert "announce_stop" in peer["broadcast"], peer
    # the root passes its broadcast (it only sent), then the next collective tells it, naming its broadcast
    assert root["broadcast"] == "passed", root
    assert "only sent in bcast #6 at announce_plan" in root["allgather"], root
    assert "announce_plan" in root["allgather"] and "diverges" in root["allgather"]


def test_gloo_broadcast_object_root_learns_at_the_next_collective(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "roots_gloo.py"
    script.write_text(textwrap.dedent(f"""
        import multiprocessing as mp, os, sys
        sys.path.insert(0, {str(ROOT)!r})
        import torch.distributed as dist
        from cslint.runtime import CollectiveDivergence, wrap

        def announce_plan(api):
            holder = ["plan"]
            api.broadcast_object_list(holder, src=0)
            return holder[0]

        def announce_stop(api):
            holder = ["stop"]
            api.broadcast_object_list(holder, src=0)
            return holder[0]

        def child(rank):
            dist.init_process_group("gloo", store=dist.FileStore({str(tmp_path / 'store')!r}, 2), rank=rank,
                                    world_size=2)
            api = wrap(dist, report_dir={str(tmp_path / 'rep')!r}, timeout=0, on_error="raise")
            seen = []
            out = [None, None]
            for _ in range(2):
                assert announce_plan(api) == "plan"
                api.all_gather_object(out, rank)
            for where, call in (("broadcast", lambda: (announce_plan if rank == 0 else announce_stop)(api)),
                                ("all_gather_object", lambda: api.all_gather_object(out, rank))):
                try:
                    call()
                    seen.append(where + "\\tpassed")
                except CollectiveDivergence as exc:
                    seen.append(where + "\\t" + str(exc).replace("\\n", " "))
            with open({str(tmp_path)!r} + f"/rank{{rank}}.txt", "w") as fh:
                fh.write("\\n".join(seen) + "\\n")
            os._exit(0)

        procs = [mp.get_context("fork").Process(target=child, args=(r,)) for r in range(2)]
        for p in procs: p.start()
        for p in procs: p.join(60)
        sys.exit(max(p.exitcode or 0 for p in procs))
    """))
    proc = run_in_group([sys.executable, str(script)], timeout=80)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = _results(tmp_path, 2)
    root, peer = results[0], results[1]
    assert "announce_stop" in peer["broadcast"], peer
    assert root["broadcast"] == "passed", root
    assert "only sent in broadcast_object_list #4 at announce_plan" in root["all_gather_object"], root
