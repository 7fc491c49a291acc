"""Uniformity: sources, sanitizers, fields, parameters, returns, implicit
flow, short-circuits, interprocedural wrappers across modules and modes."""

import textwrap

from cslint.api import check_paths, check_source
from cslint.config import Settings


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


def test_uniform_guard_is_not_flagged():
    assert _codes("""
        import torch.distributed as dist
        def f(t):
            if dist.is_initialized() and dist.get_world_size() > 1:
                dist.all_reduce(t)
    """) == []


def test_rank_parameter_and_environment_are_sources():
    assert _codes("""
        import os
        import torch.distributed as dist
        def worker(rank, t):
            if rank == 0:
                dist.barrier()
        def g(t):
            if int(os.environ["RANK"]) == 0:
                dist.barrier()
    """) == [("CSL101", 6), ("CSL101", 9)]


def test_field_written_under_rank_condition_in_another_method():
    assert _codes("""
        import torch.distributed as dist
        class Trainer:
            def setup(self):
                self.is_logger = False
                if dist.get_rank() == 0:
                    self.is_logger = True
            def log(self, t):
                if self.is_logger:
                    dist.all_reduce(t)
    """) == [("CSL101", 10)]


def test_field_written_only_from_uniform_values_is_uniform():
    assert _codes("""
        import torch.distributed as dist
        class Trainer:
            def setup(self, cfg):
                self.sync = cfg.sync
            def log(self, t):
                if self.sync:
                    dist.all_reduce(t)
    """) == []


def test_divergent_argument_makes_parameter_divergent():
    assert _codes("""
        import torch.distributed as dist
        def maybe(t, flag):
            if flag:
                dist.all_reduce(t)
        def caller(t):
            maybe(t, dist.get_rank() == 0)
        def uniform_caller(t):
            maybe(t, True)
    """) == [("CSL101", 7)]  # at the one call that passes the rank-local flag (the other passes True)


def test_return_value_flows_per_call_site():
    assert _codes("""
        import torch.distributed as dist
        def first(x):
            return x
        def a(t):
            if first(dist.get_rank()):
                dist.barrier()
        def b(t):
            if first(3):
                dist.barrier()
    """) == [("CSL101", 7)]


def test_collective_result_is_uniform_consensus():
    assert _codes("""
        import torch.distributed as dist
        def f(t, pending):
            local = [len(pending) > dist.get_rank()]
            everyone = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, local)
            if any(everyone):
                dist.all_reduce(t)
    """) == []


def test_group_collective_only_sanitizes_its_group():
    settings = Settings(presets=["torch_distributed", "mpi4py", "tensorrt_llm"])
    src = """
        class Ex:
            def f(self):
                flags = self.dist.tp_allgather(self.dist.rank == 0)
                if any(flags):
                    self.dist.tp_allgather(1)
                if any(flags):
                    self.dist.pp_allgather(1)
    """
    assert _codes(src, settings=settings) == [("CSL101", 8)]


def test_implicit_flow_through_assignment_in_branch():
    assert _codes("""
        import time
        import torch.distributed as dist
        def f(t, deadline):
            late = False
            if time.monotonic() > deadline:
                late = True
            if not late:
                dist.all_reduce(t)
    """) == [("CSL101", 9)]


def test_short_circuit_operand_and_loop_in_comprehension():
    assert _codes("""
        import random
        import torch.distributed as dist
        def f(t):
            random.random() > 0.5 and dist.barrier()
            return [dist.all_reduce(x) for x in range(random.randint(1, 3))]
    """) == [("CSL101", 5), ("CSL103", 6)]


def test_both_branches_same_collective_sequence_is_safe():
    assert _codes("""
        import torch.distributed as dist
        def f(t, u):
            if dist.get_rank() == 0:
                dist.broadcast(t, src=0)
                dist.barrier()
            else:
                dist.broadcast(u, src=0)
                dist.barrier()
    """) == []


def test_torch_gather_is_not_a_collective():
    assert _codes("""
        import torch
        import torch.distributed as dist
        def f(x, idx):
            if dist.get_rank() == 0:
                return torch.gather(x, 0, idx)
            return x.gather(0, idx)
    """) == []


def test_wrappers_across_modules(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "comm.py").write_text(textwrap.dedent("""
        import torch.distributed as dist
        def sync_everything(t):
            dist.all_reduce(t)
            return t
    """))
    (pkg / "worker.py").write_text(textwrap.dedent("""
        import torch.distributed as dist
        from pkg.comm import sync_everything
        from . import comm
        def step(t):
            if dist.get_rank() == 0:
                return
            sync_everything(t)
        def step2(t, queue):
            for item in queue[dist.get_rank()]:
                comm.sync_everything(item)
    """))
    result = check_paths([str(pkg)], settings=Settings())
    got = sorted((f.code, f.path.rsplit("/", 1)[-1], f.line, f.collective) for f in result.findings)
    assert got == [("CSL102", "worker.py", 8, "all_reduce"), ("CSL103", "worker.py", 11, "all_reduce")]
    chain = [f for f in result.findings if f.code == "CSL102"][0].chain
    assert any(link.path.endswith("comm.py") and link.kind == "collective" for link in chain)


def test_context_paths_feed_facts_but_are_not_reported(tmp_path):
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""
        import torch.distributed as dist
        def reduce_it(t):
            dist.all_reduce(t)
        def bad(t):
            if dist.get_rank():
                reduce_it(t)
    """))
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import torch.distributed as dist
        from helpers import reduce_it
        def run(t):
            if dist.get_rank() == 1:
                reduce_it(t)
    """))
    result = check_paths([str(tmp_path / "main.py")], context=[str(tmp_path)], settings=Settings())
    assert [(f.path.rsplit("/", 1)[-1], f.line) for f in result.findings] == [("main.py", 6)]


def test_modes_attention_dp_request_state():
    settings = Settings(presets=["torch_distributed", "mpi4py", "tensorrt_llm"])
    src = """
        class Executor:
            def step(self):
                if not self.active_requests:
                    return
                if self.enable_attention_dp:
                    self.dist.tp_allgather(1)
                self.dist.pp_allgather(2)
            def step_tp(self):
                if not self.active_requests:
                    return
                self.dist.tp_allgather(3)
    """
    result = check_source(textwrap.dedent(src), settings=settings, report="per-site")
    by_line = {f.line: f for f in result.findings}
    assert sorted(by_line) == [7, 8, 12]
    assert "attention-DP" in by_line[7].message          # only divergent over TP under ADP
    assert "attention-DP" not in by_line[8].message      # PP stages differ in every mode
    assert "attention-DP" in by_line[12].message


def test_suppression_comment_and_unused_suppression():
    src = """
        import torch.distributed as dist
        def f(t):
            if dist.get_rank() == 0:
                dist.barrier()  # cslint: ignore[CSL101]
            x = 1  # cslint: ignore[CSL102]
    """
    assert _codes(src) == [("CSL002", 6)]


def test_select_and_ignore():
    from cslint.rules import get_rule

    snippet = get_rule("CSL101").INVALID[0].code
    import tempfile, os

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "a.py")
        with open(path, "w") as handle:
            handle.write(snippet)
        assert check_paths([path], settings=Settings(), ignore=["CSL1"]).findings == []
        assert [f.code for f in check_paths([path], settings=Settings(), select=["CSL101"]).findings] == ["CSL101"]
        assert check_paths([path], settings=Settings(), select=["CSL103"]).findings == []


def test_cache_round_trip(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import torch.distributed as dist\nif dist.get_rank() == 0:\n    dist.barrier()\n")
    settings = Settings(root=str(tmp_path))
    first = check_paths([str(src)], settings=settings, cache=True)
    assert (tmp_path / ".cslint_cache").is_dir()
    second = check_paths([str(src)], settings=settings, cache=True)
    assert [f.to_json() for f in first.findings] == [f.to_json() for f in second.findings]
    assert [f.code for f in second.findings] == ["CSL101"]


def test_implicit_flow_crosses_calls_into_fields():
    # A helper called only on ranks that looped over their own requests clears a
    # flag: the flag is rank-local, so the early return on it is a hazard.
    src = """
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.fill_phase_active = True
                self.active_requests = []

            def fetch(self):
                for req in self.active_requests:
                    self.seed(req)

            def seed(self, req):
                self.fill_phase_active = False

            def gate(self):
                if not self.fill_phase_active:
                    return False
                statuses = self.dist.tp_allgather(True)
                return any(statuses)
    """
    findings = check_source(textwrap.dedent(src), presets=["tensorrt_llm"]).findings
    hits = [f for f in findings if f.line == 18]
    assert [f.code for f in hits] == ["CSL102"]
    notes = " ".join(link.note for link in hits[0].chain)
    assert "runs only on some ranks" in notes


def test_helper_called_unconditionally_keeps_its_fields_uniform():
    src = """
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.fill_phase_active = True

            def step(self):
                self.finish()

            def finish(self):
                self.fill_phase_active = False

            def gate(self):
                if not self.fill_phase_active:
                    return False
                return any(self.dist.tp_allgather(True))
    """
    assert check_source(textwrap.dedent(src), presets=["tensorrt_llm"]).findings == []


def test_local_dict_keys_are_tracked_one_by_one():
    # A constant key of a local dict literal keeps its own value; any other
    # write to the dict (a new value, a store, a branch, a loop) reaches it.
    assert _codes("""
        import torch.distributed as dist
        def rank_in_a_dict(tensor):
            state = {"rank": dist.get_rank(), "step": 0}
            if state["rank"] == 0:
                dist.all_reduce(tensor)
        def step_in_a_dict(tensor):
            state = {"rank": dist.get_rank(), "step": 0}
            if state["step"] == 0:
                dist.all_reduce(tensor)
        def step_overwritten(tensor, other):
            state = {"rank": dist.get_rank(), "step": 0}
            state = other(dist.get_rank())
            if state["step"] == 0:
                dist.all_reduce(tensor)
        def step_stored(tensor):
            state = {"step": 0}
            state["step"] = dist.get_rank()
            if state["step"] == 0:
                dist.all_reduce(tensor)
        def step_in_a_branch(tensor, flag):
            state = {"step": 0}
            if flag:
                state = {"step": dist.get_rank()}
            if state["step"] == 0:
                dist.all_reduce(tensor)
        def step_from_a_loop(tensor):
            state = {"step": 0}
            for state in [{"step": dist.get_rank()}]:
                pass
            if state["step"] == 0:
                dist.all_reduce(tensor)
        def computed_keys(tensor, key):
            state = {key: dist.get_rank(), "step": 0}
            if state["step"] == 0:
                dist.all_reduce(tensor)
    """) == [("CSL101", 6), ("CSL101", 15), ("CSL101", 20), ("CSL101", 26), ("CSL101", 32), ("CSL101", 36)]


def test_fields_a_signal_handler_sets_are_rank_local():
    assert _codes("""
        import signal
        import torch.distributed as dist
        class Trainer:
            def __init__(self):
                self.stop_requested = False
                self.epochs = 3
                signal.signal(signal.SIGTERM, self._on_sigterm)
            def _on_sigterm(self, signum, frame):
                self.stop_requested = True
            def train(self, batches, loss):
                for batch in batches:
                    if self.stop_requested:
                        break
                    dist.all_reduce(loss)
            def train_for_epochs(self, loss):
                for epoch in range(self.epochs):
                    dist.all_reduce(loss)
    """) == [("CSL102", 15)]


def test_an_in_place_collective_in_a_later_loop_does_not_hide_earlier_hazards():
    # `while comm.allreduce(x) > 0: x -= 1` once built a new nested atom per
    # iteration; the dataflow ran out of budget before it reached the branch.
    assert _codes("""
        from mpi4py import MPI
        def main():
            comm = MPI.COMM_WORLD
            rank = comm.Get_rank()
            flag = rank % 2 == 0
            for step in range(2):
                if flag:
                    comm.allgather(1)
            remaining = rank
            while comm.allreduce(remaining) > 0:
                remaining -= 1
    """) == [("CSL101", 9)]
