"""The executor replica patched by the codemods completes on MPI with the reference tokens.

The findings are the three hazard sites its NOTES.md lists (H1 fill-gate early
return, H2 event-loop exit before `_can_queue`, H3 PP transfer-status gate),
built by hand so this test checks the rewrites, not the analyzer's progress.
Only patched runs are made here (the unpatched hangs are the validate step's).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures", "codemods"))

from codemod_findings import make_finding

from codemods.driver import fix_source
from cslint.boundedruns import start_bounded, wait_bounded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLICA = os.path.join(ROOT, "examples", "trtllm_replica")
EXECUTOR = os.path.join("tensorrt_llm", "_torch", "pyexecutor", "py_executor.py")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")

pytestmark = pytest.mark.skipif(
    not (os.path.exists(os.path.join(REPLICA, EXECUTOR)) and os.path.exists(MPIEXEC)),
    reason="the executor replica or mpiexec is not available",
)

# (function, callee, guard line start, guard kind, collective, group, collective callee)
HAZARDS = [
    ("PyExecutor._sync_gen_only_benchmark_has_insufficient_kv", "self._allgather_model_parallel_status",
     "if not self._benchmark_fill_phase_active", "early-exit", "tp_allgather", "tp", "self.dist.tp_allgather"),
    ("PyExecutor._executor_loop", "self._can_queue", "if self._ran_seed_forward_this_iter", "early-exit",
     "tp_allgather", "tp", "self.dist.tp_allgather"),
    ("PyExecutor._check_disagg_gen_transfer_status", "self.kv_cache_transceiver.check_gen_transfer_status",
     "if need_check", "branch", "pp_allgather", "pp", None),
    ("PyExecutor._pad_attention_dp_dummy_request", "self.dist.tp_allreduce",
     "if self._should_skip_dummy_for_benchmark_disagg()", "early-exit", "tp_allreduce", "tp", None),
]


@pytest.fixture(scope="module")
def patched(tmp_path_factory):
    tree = tmp_path_factory.mktemp("replica") / "trtllm_replica"
    shutil.copytree(REPLICA, tree, ignore=shutil.ignore_patterns("__pycache__"))
    path = str(tree / EXECUTOR)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    findings = [
        make_finding(path, source, code="CSL102" if kind == "early-exit" else "CSL101", function=function,
                     callee=callee, guard=guard, guard_kind=kind, collective=collective, group=group,
                     api="trtllm", collective_callee=via,
                     receiver=None if via else "self.dist")  # the class's communicator, as the analysis names it
        for function, callee, guard, kind, collective, group, via in HAZARDS
    ]
    fix = fix_source(source, path, findings)
    assert len(fix.applied) == len(HAZARDS) and not fix.refused, [r.reason for r in fix.refused]
    assert {a.finding.function: a.strategy for a in fix.applied} == {
        "PyExecutor._sync_gen_only_benchmark_has_insufficient_kv": "always-enter",
        "PyExecutor._executor_loop": "consensus",
        "PyExecutor._check_disagg_gen_transfer_status": "consensus",  # no carrier in hand-made facts
        "PyExecutor._pad_attention_dp_dummy_request": "always-enter",
    }
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(fix.fixed)
    return tree


def _run(tree, out, args, ranks=None):
    command = [sys.executable, str(tree / "run_gen_server.py"), "--model", "numpy", "--out", str(out), *args]
    if ranks:
        command = [MPIEXEC, "-n", str(ranks), *command, "--backend", "mpi", "--hang-timeout", "20"]
    else:
        command += ["--backend", "local"]
    proc = start_bounded(command, 60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, MPIEXEC_TIMEOUT="40"))
    wait_bounded(proc, 60)
    outputs = {}
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        with open(os.path.join(out, name), encoding="utf-8") as handle:
            outputs.update(json.load(handle)["outputs"])
    return proc.returncode, outputs


@pytest.mark.timeout(300)
@pytest.mark.parametrize("args", [["--fill-gate", "on"], ["--fill-gate", "off"], ["--pp"]],
                         ids=["adp-fill-gate", "adp-no-gate", "pp"])
def test_patched_replica_completes_with_reference_tokens(patched, tmp_path, args):
    rc, reference = _run(patched, tmp_path / "local", args)
    assert rc == 0 and reference
    rc, outputs = _run(patched, tmp_path / "mpi", args, ranks=2)
    assert rc == 0, f"the patched replica did not complete (exit {rc})"
    assert outputs == reference
