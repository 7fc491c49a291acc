"""The seed incidents, as our own fixtures, are flagged with chains that name
the rank-local source; their upstream-style fixed forms are not flagged."""

import os
import re

import pytest

from cslint.api import check_paths

HERE = os.path.dirname(__file__)
SEEDS = os.path.join(HERE, "fixtures", "seeds")


def _expected(directory):
    expected = set()
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".py"):
            continue
        path = os.path.join(directory, name)
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                match = re.search(r"# expect: (CSL\d+)", line)
                if match:
                    expected.add((os.path.normpath(path), number, match.group(1)))
    return expected


@pytest.fixture(scope="module")
def buggy():
    return check_paths([os.path.join(SEEDS, "buggy")])


def test_buggy_seed_shapes_are_flagged_exactly(buggy):
    got = {(os.path.normpath(f.path), f.line, f.code) for f in buggy.findings}
    assert got == _expected(os.path.join(SEEDS, "buggy"))


def test_fill_gate_chain_names_the_request_state(buggy):
    (finding,) = [f for f in buggy.findings if f.function.endswith("_sync_gen_only_benchmark_has_insufficient_kv")]
    assert finding.code == "CSL102"
    assert finding.collective in ("tp_allgather", "tp_cp_allgather") and finding.group in ("tp", "tp_cp")
    assert finding.condition == "not self._benchmark_fill_phase_active"
    notes = " ".join(link.note for link in finding.chain)
    assert "_allgather_model_parallel_status" in notes
    assert finding.chain[-1].kind == "source" and "self.active_requests" in finding.chain[-1].note
    assert any(link.kind == "flow" and "_benchmark_fill_phase_active" in link.note for link in finding.chain)
    assert "attention-DP" in finding.message
    assert finding.fix.strategy == "always-enter"


def test_can_queue_after_rank_local_continue(buggy):
    (finding,) = [f for f in buggy.findings if f.function.endswith("_executor_loop")]
    assert finding.callee == "self._can_queue"
    assert finding.guard_kind == "early-exit" and finding.condition == "not self.active_requests"
    assert finding.collective == "tp_allgather" and finding.api == "trtllm"
    assert "attention-DP" in finding.message


def test_pp_transfer_gate(buggy):
    (finding,) = [f for f in buggy.findings if f.function.endswith("_check_disagg_gen_transfer_status")]
    assert finding.code == "CSL101" and finding.group == "pp"
    assert "transmission_in_progress" in finding.source
    assert any(link.path.endswith("transceiver.py") for link in finding.chain)


def test_fixed_forms_are_clean():
    result = check_paths([os.path.join(SEEDS, "fixed")])
    assert result.errors == []
    assert [(f.path, f.line, f.message) for f in result.findings] == []
    assert result.files == 4


def test_without_the_tensorrt_llm_preset_request_state_is_not_a_source():
    from cslint.config import Settings

    result = check_paths([os.path.join(SEEDS, "buggy")], settings=Settings())
    assert not any(f.function.endswith("_executor_loop") for f in result.findings)
