"""The CFG dataflow of a function whose values cycle instead of settling
stops where stepping to the end of its budget would, in a few cycles."""

import textwrap

import pytest

from cslint.analysis import dataflow
from cslint.api import check_paths

# A shape that never settles: a loop whose in-place collectives alternate
# between two groups (each pass nests the buffer's value one group deeper; the
# buffer is not the loop's target, which each iteration binds anew).  A loop
# that feeds a call's result back into the same callee twice cycled too while
# the nesting limit spilled the call's arguments into its result (the next
# pass nested them again); past the limit the call now keeps its arguments
# bound, flattened, and the loop settles.
CYCLING = textwrap.dedent('''
    import torch.distributed as dist

    class Mesh:
        def spread(self, blob, places, root=0):
            fast = self.device_group
            slow = self.cpu_group
            pending = []
            for on_host in places:
                if on_host:
                    job = dist.broadcast(blob, src=root, group=slow, async_op=True)
                else:
                    job = dist.broadcast(blob, src=root, group=fast, async_op=True)
                pending.append(job)
            if dist.get_rank() == root:
                dist.broadcast_object_list(pending, src=root, group=slow)
            return pending

        def relay(self, state, steps):
            for step in steps:
                state = self.stage(state, step)
                state = self.stage(state, step)
            if state:
                dist.barrier()
            return state

        def stage(self, state, step):
            self.note(step)
            return state
''')


_TRANSFER, _INIT = dataflow.Dataflow._transfer, dataflow.Dataflow.__init__


def _solve_all(monkeypatch, path) -> tuple:
    """(function -> (transfers, every node's entry environment, the exit
    environment, live nodes)), the findings) of a check of CYCLING written
    at ``path`` (one path for both runs: the atoms name it)."""
    solved = {}
    transfer, init = _TRANSFER, _INIT

    def counting_transfer(self, n, env):
        self.transfers = getattr(self, "transfers", 0) + 1
        return transfer(self, n, env)

    def recording_init(self, info, evaluator, fold):
        init(self, info, evaluator, fold)
        solved[info.qualname] = (self.transfers, dict(self.envs), dict(self.exit_env), len(self.live))

    monkeypatch.setattr(dataflow.Dataflow, "_transfer", counting_transfer)
    monkeypatch.setattr(dataflow.Dataflow, "__init__", recording_init)
    findings = [f.to_json() for f in check_paths([str(path)], cache=False, jobs=1).findings]
    return solved, findings


@pytest.mark.parametrize("name", ["Mesh.spread"])
def test_cycle_is_skipped_and_ends_on_the_same_state(monkeypatch, tmp_path, name):
    path = tmp_path / "mesh.py"
    path.write_text(CYCLING, encoding="utf-8")
    skipping, findings = _solve_all(monkeypatch, path)
    monkeypatch.setattr(dataflow, "WATCH_AFTER_PASSES", 10 ** 9)  # step through the whole budget
    stepping, stepped_findings = _solve_all(monkeypatch, path)
    transfers, envs, exit_env, live = skipping[name]
    full_transfers, full_envs, full_exit_env, _live = stepping[name]
    budget = 50 * live + 100
    assert full_transfers >= budget  # the shape does cycle: stepping spends the budget
    assert transfers < budget // 4
    assert envs == full_envs
    assert exit_env == full_exit_env
    assert findings == stepped_findings


def test_a_call_fed_back_past_the_nesting_limit_settles(monkeypatch, tmp_path):
    path = tmp_path / "mesh.py"
    path.write_text(CYCLING, encoding="utf-8")
    monkeypatch.setattr(dataflow, "WATCH_AFTER_PASSES", 10 ** 9)  # no cycle skipped: it must settle by itself
    stepping, _findings = _solve_all(monkeypatch, path)
    transfers, _envs, _exit_env, live = stepping["Mesh.relay"]
    assert transfers < (50 * live + 100) // 4
