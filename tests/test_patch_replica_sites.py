"""`apply` on the executor replica rewrites its hazard sites (NOTES.md, H1-H8) and nothing else,
each with the strategy upstream would choose, and `verify` explains everything it left."""

from __future__ import annotations

from pathlib import Path

from tensorrt_llm_patch.apply import FIXED, apply_tree
from tensorrt_llm_patch.verify import verify_tree

REPLICA = Path(__file__).resolve().parents[1] / "examples" / "trtllm_replica"

# (function, condition) -> strategy: the guard each hazard of the replica's NOTES.md is fixed at
EXPECTED = {
    ("PyExecutor._sync_gen_only_benchmark_has_insufficient_kv", "not self._benchmark_fill_phase_active"):
        "always-enter",  # H1
    ("PyExecutor._executor_loop", "self._ran_seed_forward_this_iter"): "consensus",  # H2
    ("PyExecutor._check_disagg_gen_transfer_status", "need_check"): "propagate",  # H3
    ("PyExecutor._executor_loop", "self._should_stop_processing()"): "consensus",  # H4, H5
    ("PyExecutor._consume_previous_batch_for_rebalance", "self.previous_batch is None"): "always-enter",  # H6
    ("PyExecutor._pad_attention_dp_dummy_request", "self._should_skip_dummy_for_benchmark_disagg()"):
        "always-enter",  # H7
    ("PyExecutor._executor_loop",
     "self._sync_gen_only_benchmark_has_insufficient_kv(fitting_disagg_gen_init_requests)"): "consensus",  # H8
}


def test_the_replica_patch_rewrites_its_hazards_and_nothing_else(tmp_path):
    report = apply_tree(REPLICA, out=tmp_path / "out", full_copy=True)
    fixed = {(h.finding.function, h.finding.condition): h.strategy for h in report.hazards if h.outcome == FIXED}
    assert fixed == EXPECTED
    assert report.tree_info.version == "0.0.0+replica"
    changed = {c.relpath for c in report.changed_files}
    assert changed == {"tensorrt_llm/_torch/pyexecutor/py_executor.py",
                       "tensorrt_llm/_torch/pyexecutor/scheduler/scheduler.py"}  # the carried field
    patched = (tmp_path / "out" / "tensorrt_llm/_torch/pyexecutor/py_executor.py").read_text()
    assert "op=ReduceOp.MAX" in patched  # the file's own reduce op (H8)
    # H4: `_executor_loop` runs only where the pipeline has one stage, so the stage's TP x CP group is every rank
    assert "if all(self.dist.tp_cp_allgather(bool(self._should_stop_processing()))):" in patched
    assert "mpi4py" not in patched
    checked = verify_tree(tmp_path / "out")
    assert checked.ok and checked.left
    assert all(item["reason"] for item in checked.left)
    again = apply_tree(tmp_path / "out", out=tmp_path / "again")
    assert again.nothing_to_do
