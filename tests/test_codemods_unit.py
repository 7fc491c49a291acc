"""The codemods on source text: shapes, neutral values, refusals, APIs, diffs, writing."""

from __future__ import annotations

import ast
import difflib
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures", "codemods"))

from codemod_cases import SEED_FIXTURES, fixture_path, seed_findings
from codemod_findings import make_finding

from codemods.driver import FixPlan, fix_source, plan_fixes, write_fixes
from cslint.model import CheckResult


def _seed(name):
    path = fixture_path(name)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    return path, source, seed_findings(name, path, source)


def _holding(block, line):
    return [s for s in block if isinstance(s, ast.stmt) and s.lineno <= line <= s.end_lineno]


def _edited_region(source: str, findings) -> tuple[int, int]:
    """Lines [first, last] of the statements a fix may touch, computed from `ast` alone.

    In the deepest statement list holding both the guard and the collective:
    from the guard's statement to the end of the later of the two statements.
    """
    tree = ast.parse(source)
    first, last = 10**9, 0
    for finding in findings:
        best = None
        for node in ast.walk(tree):
            for name in ("body", "orelse"):
                block = getattr(node, name, None)
                if not isinstance(block, list):
                    continue
                g = _holding(block, finding.guard.line)
                c = _holding(block, finding.line)
                if g and c:
                    best = (g[0], c[0])
        assert best is not None
        g, c = best
        first = min(first, g.lineno)
        last = max(last, g.end_lineno, c.end_lineno)
    return first, last


# -- the seed shapes ---------------------------------------------------------------------


@pytest.mark.parametrize("name", SEED_FIXTURES)
def test_seed_fix_parses_and_only_touches_the_edited_statements(name):
    path, source, findings = _seed(name)
    fix = fix_source(source, path, findings)
    assert fix.applied and not fix.refused
    compile(fix.fixed, path, "exec")
    first, last = _edited_region(source, findings)
    before, after = source.splitlines(keepends=True), fix.fixed.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            # original lines i1+1..i2 changed (or an insertion before line i1+1)
            assert first <= i1 + 1 and i2 <= last + 1, (tag, i1, i2, first, last)
    assert before[: first - 1] == after[: first - 1]
    tail = len(before) - last
    assert before[len(before) - tail:] == after[len(after) - tail:]


@pytest.mark.parametrize("name", SEED_FIXTURES)
def test_fixing_again_with_the_old_findings_changes_nothing(name):
    path, source, findings = _seed(name)
    once = fix_source(source, path, findings)
    twice = fix_source(once.fixed, path, findings)
    assert twice.fixed == once.fixed
    assert not twice.applied and len(twice.refused) == len(findings)


def test_fill_gate_always_enter_keeps_the_local_exit_and_sends_the_neutral_tuple():
    path, source, findings = _seed("fill_gate")
    fix = fix_source(source, path, findings)
    assert {a.strategy for a in fix.applied} == {"always-enter"}
    # element 0 is consumed by any(...) -> False; element 1 is never read -> None
    assert "(short, self.free_blocks) if not exit_early else (False, None)" in fix.fixed
    assert "        if exit_early:\n            return early_result\n        return any(s[0] for s in statuses)" in fix.fixed
    # the comment above the payload line travels with it
    assert "    # the next request would not fit into this rank's free blocks\n" in fix.fixed
    # a wrapper of the collective runs its whole body on the skipping rank: not safe
    assert all(not a.safe for a in fix.applied)


def test_event_loop_falls_back_to_consensus_and_says_why():
    path, source, findings = _seed("event_loop")
    fix = fix_source(source, path, findings)
    (applied,) = fix.applied
    assert applied.strategy == "consensus" and not applied.safe
    assert "always-enter does not fit" in applied.reason
    assert "if any(self.dist.tp_allgather(bool(not batch))):\n                continue" in fix.fixed


def test_pp_gate_consensus_and_explicit_always_enter():
    path, source, findings = _seed("pp_transfer")
    fix = fix_source(source, path, findings, strategy="consensus")
    assert "if any(self.dist.pp_allgather(bool(need_check))):" in fix.fixed
    fix = fix_source(source, path, findings, strategy="always-enter")
    (applied,) = fix.applied
    assert applied.safe and applied.strategy == "always-enter"
    assert "gathered = self.dist.pp_allgather(local_pending if branch_taken else 0)" in fix.fixed
    compile(fix.fixed, path, "exec")


def test_diff_applies_with_patch_and_git_apply(tmp_path):
    plan = FixPlan()
    for name in SEED_FIXTURES:
        _, source, _ = _seed(name)
        copy = tmp_path / "src" / f"{name}.py"
        copy.parent.mkdir(exist_ok=True)
        copy.write_text(source, encoding="utf-8")
        plan.files.append(fix_source(source, str(copy), seed_findings(name, str(copy), source)))
    diff = plan.diff(base_dir=str(tmp_path))
    assert diff.startswith("--- a/src/")
    for tool in (["patch", "-p1", "--quiet"], ["git", "apply", "-p1"]):
        if shutil.which(tool[0]) is None:
            continue
        work = tmp_path / tool[0]
        shutil.copytree(tmp_path / "src", work / "src")
        subprocess.run(tool, cwd=work, input=diff, text=True, check=True)
        for fix in plan.files:
            assert (work / "src" / os.path.basename(fix.path)).read_text(encoding="utf-8") == fix.fixed


def test_write_fixes_is_atomic_and_keeps_the_mode(tmp_path):
    _, source, _ = _seed("pp_transfer")
    target = tmp_path / "pp_transfer.py"
    target.write_text(source, encoding="utf-8")
    os.chmod(target, 0o750)
    findings = seed_findings("pp_transfer", str(target), source)
    plan = plan_fixes(CheckResult(files=1, findings=findings))
    write_fixes(plan)
    assert target.read_text(encoding="utf-8") == plan.files[0].fixed != source
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["pp_transfer.py"]  # no temp file left


def test_decide_from_gathered_drops_the_deferred_exit():
    path, source, findings = _seed("fill_gate")
    fix = fix_source(source, path, findings, exit_mode="decide-from-gathered")
    assert fix.applied and all(not a.safe for a in fix.applied)
    assert "return early_result" not in fix.fixed and "if exit_early:" not in fix.fixed
    assert "decides from the gathered result" in fix.applied[0].reason


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="strategy must be one of"):
        fix_source("", "x.py", [], strategy="magic")
    with pytest.raises(ValueError, match="exit_mode must be one of"):
        fix_source("", "x.py", [], exit_mode="later")


# -- neutral values ----------------------------------------------------------------------

NEUTRAL_TEMPLATE = """\
class Worker:
    def step(self):
        if not self.queue:
            return None
        payload = {payload}
        gathered = self.dist.tp_allgather(payload)
{consume}
"""


@pytest.mark.parametrize("payload, consume, neutral", [
    ("bool(self.queue)", "        return any(gathered)", "False"),
    ("bool(self.queue)", "        return all(gathered)", "True"),
    ("len(self.queue)", "        return sum(gathered)", "0"),
    ("len(self.queue)", "        return max(gathered)", "float('-inf')"),
    ("len(self.queue)", "        return min(gathered)", "float('inf')"),
    ("len(self.queue)", "        return 0 not in gathered", "None"),
    ("(len(self.queue), self.busy)", "        return sum(s[0] for s in gathered), any(s[1] for s in gathered)",
     "(0, False)"),
    ("(len(self.queue), self.busy, 3)", "        return all(b for n, b, _ in gathered) and len(gathered) > 1",
     "(None, True, None)"),
])
def test_neutral_value_follows_the_consumer(payload, consume, neutral):
    source = NEUTRAL_TEMPLATE.format(payload=payload, consume=consume)
    finding = make_finding("w.py", source, code="CSL102", function="Worker.step", callee="self.dist.tp_allgather",
                           guard="return None", guard_kind="early-exit", collective="tp_allgather", group="tp",
                           api="trtllm")
    fix = fix_source(source, "w.py", [finding], strategy="always-enter")
    assert fix.applied, fix.refused and fix.refused[0].reason
    assert f"self.dist.tp_allgather(payload if not exit_early else {neutral})" in fix.fixed
    assert fix.applied[0].safe


@pytest.mark.parametrize("payload, consume, why", [
    ("self.name", "        return max(gathered)", "not visibly numeric"),
    ("len(self.queue)", "        return gathered", "no neutral value follows"),
    ("len(self.queue)", "        return gathered[0]", "no neutral value follows"),
    ("len(self.queue)", "        return self.limit in gathered", "cannot be proven"),
    ("len(self.queue)", "        return any(gathered), sum(gathered)", "consumers disagree"),
])
def test_unknown_neutral_value_is_refused_with_the_use(payload, consume, why):
    source = NEUTRAL_TEMPLATE.format(payload=payload, consume=consume)
    finding = make_finding("w.py", source, code="CSL102", function="Worker.step", callee="self.dist.tp_allgather",
                           guard="return None", guard_kind="early-exit", collective="tp_allgather", group="tp",
                           api="trtllm")
    fix = fix_source(source, "w.py", [finding], strategy="always-enter")
    assert not fix.applied and fix.fixed == source
    (refused,) = fix.refused
    assert why in refused.reason


# -- refusals ------------------------------------------------------------------------------


def _one(source, function, callee, guard, kind="early-exit", strategy="auto", **extra):
    finding = make_finding("r.py", source, code="CSL102" if kind == "early-exit" else "CSL101",
                           function=function, callee=callee, guard=guard, guard_kind=kind,
                           collective=extra.pop("collective", "tp_allgather"), group=extra.pop("group", "tp"),
                           api=extra.pop("api", "trtllm"), **extra)
    return fix_source(source, "r.py", [finding], strategy=strategy)


@pytest.mark.parametrize("source, guard, why", [
    ("""
class W:
    async def step(self):
        if not self.queue:
            return None
        return any(self.dist.tp_allgather(bool(self.queue)))
""", "return None", "async"),
    ("""
class W:
    def step(self):
        if not self.queue:
            return None
        yield any(self.dist.tp_allgather(bool(self.queue)))
""", "return None", "generator"),
    ("""
class W:
    def step(self):
        if not self.queue:
            return None
        return any(self.dist.tp_allgather(self.dist.send_object(self.queue)))
""", "return None", "talks to other ranks"),
    ("""
class W:
    def step(self):
        for item in self.items:
            if not item:
                return None
        return any(self.dist.tp_allgather(bool(self.queue)))
""", "return None", "leaves a loop"),
    ("""
class W:
    def step(self):
        if not self.queue:
            return None
            print("unreachable")
        return any(self.dist.tp_allgather(bool(self.queue)))
""", "return None", "followed by other statements"),
    ("""
class W:
    def step(self):
        if not self.queue:
            return None
        return self.log() or any(self.dist.tp_allgather(bool(self.queue)))
""", "return None", "evaluated conditionally"),
])
def test_always_enter_refuses_where_behaviour_cannot_be_kept(source, guard, why):
    fix = _one(source, "W.step", "self.dist.tp_allgather", guard, strategy="always-enter")
    assert not fix.applied and fix.fixed == source
    assert why in fix.refused[0].reason, fix.refused[0].reason


def test_stale_finding_is_refused_not_misapplied():
    source = "class W:\n    def step(self):\n        if not self.q:\n            return None\n        return any(self.dist.tp_allgather(1))\n"
    finding = make_finding("r.py", source, code="CSL102", function="W.step", callee="self.dist.tp_allgather",
                           guard="return None", guard_kind="early-exit", collective="tp_allgather", group="tp",
                           api="trtllm")
    edited = source.replace("self.dist.tp_allgather(1)", "self.other.call(1)")
    fix = fix_source(edited, "r.py", [finding])
    assert not fix.applied and fix.fixed == edited
    assert "re-run `cslint check`" in fix.refused[0].reason


def test_overlapping_fixes_are_refused_together():
    source = textwrap.dedent("""\
        class W:
            def step(self):
                if not self.queue:
                    return None
                if self.local_flag:
                    self.dist.tp_broadcast(self.queue)
                return any(self.dist.tp_allgather(bool(self.queue)))
        """)
    exit_finding = make_finding("r.py", source, code="CSL102", function="W.step", callee="self.dist.tp_allgather",
                                guard="return None", guard_kind="early-exit", collective="tp_allgather",
                                group="tp", api="trtllm")
    branch_finding = make_finding("r.py", source, code="CSL101", function="W.step", callee="self.dist.tp_broadcast",
                                  guard="if self.local_flag", guard_kind="branch", collective="tp_broadcast",
                                  group="tp", api="trtllm")
    fix = fix_source(source, "r.py", [exit_finding, branch_finding])
    assert not fix.applied and fix.fixed == source
    assert len(fix.refused) == 2 and all("cannot be fixed together" in r.reason for r in fix.refused)


def test_two_exits_before_one_collective_are_fixed_together():
    path, source, findings = _seed("fill_gate")
    fix = fix_source(source, path, findings)
    assert len(fix.applied) == 2 and fix.applied[0].reason == fix.applied[1].reason
    assert fix.fixed.count("exit_early = True") == 2


# -- the APIs of the consensus gate ---------------------------------------------------------------


def test_consensus_mpi4py_uses_the_same_communicator_and_adds_the_import():
    source = textwrap.dedent('''\
        """Module docstring."""
        import json


        def step(comm, queue):
            if queue:
                sizes = comm.allgather(len(queue))
                return json.dumps(sizes)
            return None
        ''')
    fix = _one(source, "step", "comm.allgather", "if queue", kind="branch", collective="allgather",
               group="world", api="mpi")
    assert "    if comm.allreduce(bool(queue), op=MPI.LOR):\n" in fix.fixed
    assert fix.fixed.startswith('"""Module docstring."""\nimport json\nfrom mpi4py import MPI\n')
    compile(fix.fixed, "r.py", "exec")


def test_consensus_torch_reduces_a_one_element_tensor_over_the_same_group():
    source = textwrap.dedent("""\
        import torch.distributed as dist


        def step(t, pending, group):
            if pending:
                dist.all_reduce(t, group=group)
            return t
        """)
    fix = _one(source, "step", "dist.all_reduce", "if pending", kind="branch", collective="all_reduce",
               group="world", api="torch", strategy="consensus")
    assert "    agreed_flag = torch.tensor([1 if pending else 0], device=t.device)\n" in fix.fixed
    assert "    dist.all_reduce(agreed_flag, op=dist.ReduceOp.MAX, group=group)\n" in fix.fixed
    assert "    if bool(agreed_flag.item()):\n" in fix.fixed
    assert fix.fixed.startswith("import torch.distributed as dist\nimport torch\n")


def test_consensus_through_a_wrapper_in_another_file_uses_the_receiver_the_analysis_names():
    source = textwrap.dedent("""\
        class Executor:
            def schedule(self, batch):
                return self.dist.pp_broadcast(batch)

            def check(self):
                need = any(r.busy for r in self.requests)
                if need:
                    self.transceiver.check_status(self.iteration)
        """)
    fix = _one(source, "Executor.check", "self.transceiver.check_status", "if need", kind="branch",
               collective="pp_allgather", group="pp", receiver="self.dist")
    assert "        if any(self.dist.pp_allgather(bool(need))):\n" in fix.fixed
    unnamed = _one(source, "Executor.check", "self.transceiver.check_status", "if need", kind="branch",
                   collective="pp_allgather", group="pp")
    assert not unnamed.applied and "no way to agree" in unnamed.refused[0].reason


def test_while_loop_condition_is_agreed_each_iteration():
    source = textwrap.dedent("""\
        class W:
            def drain(self):
                while self.queue:
                    self.dist.tp_allgather(self.queue.pop())
        """)
    fix = _one(source, "W.drain", "self.dist.tp_allgather", "while self.queue", kind="loop")
    assert "        while any(self.dist.tp_allgather(bool(self.queue))):\n" in fix.fixed


# -- text fidelity ---------------------------------------------------------------------------------


def test_crlf_nested_class_and_missing_final_newline_are_kept():
    source = ("import os\r\n\r\n\r\nclass Outer:\r\n    class Inner:\r\n        def step(self):\r\n"
              "            # keep me\r\n            if not self.q:\r\n                return 1  # why\r\n"
              "            return sum(self.dist.tp_allgather(len(self.q)))\r\n\r\nX = 1")
    finding = make_finding("c.py", source.replace("\r\n", "\n"), code="CSL102", function="Outer.Inner.step",
                           callee="self.dist.tp_allgather", guard="return 1", guard_kind="early-exit",
                           collective="tp_allgather", group="tp", api="trtllm")
    fix = fix_source(source, "c.py", [finding])
    assert fix.applied, fix.refused
    assert fix.fixed.startswith("import os\r\n\r\n\r\nclass Outer:\r\n    class Inner:\r\n        def step(self):\r\n"
                                "            # keep me\r\n")
    assert fix.fixed.endswith("\r\n\r\nX = 1")
    assert "\n" not in fix.fixed.replace("\r\n", "")
    assert "early_result = 1  # why" in fix.fixed
    assert "gathered = self.dist.tp_allgather(len(self.q) if not exit_early else 0)" in fix.fixed


def test_collectives_sharing_one_guard_get_one_agreed_test_over_a_covering_group():
    source = textwrap.dedent("""\
        class W:
            def step(self):
                if self.local_ready:
                    sizes = self.dist.tp_allgather(len(self.queue))
                    self.dist.tp_cp_broadcast(sizes)
                return None
        """)
    findings = [
        make_finding("r.py", source, code="CSL101", function="W.step", callee=callee, guard="if self.local_ready",
                     guard_kind="branch", collective=callee.rsplit(".", 1)[1], group=group, api="trtllm")
        for callee, group in (("self.dist.tp_allgather", "tp"), ("self.dist.tp_cp_broadcast", "tp_cp"))
    ]
    fix = fix_source(source, "r.py", findings)
    assert len(fix.applied) == 2 and fix.applied[0].reason == fix.applied[1].reason
    assert fix.fixed.count("any(") == 1
    assert "        if any(self.dist.tp_cp_allgather(bool(self.local_ready))):\n" in fix.fixed


def test_exception_guards_are_refused_with_a_pointer():
    source = textwrap.dedent("""\
        class W:
            def step(self):
                try:
                    self.load()
                    self.dist.tp_barrier()
                except OSError:
                    return None
        """)
    finding = make_finding("r.py", source, code="CSL104", function="W.step", callee="self.dist.tp_barrier",
                           guard="try:", guard_kind="exception", collective="tp_barrier", group="tp",
                           api="trtllm")
    fix = fix_source(source, "r.py", [finding])
    assert not fix.applied and fix.fixed == source
    assert "cslint explain CSL104" in fix.refused[0].reason


def test_a_group_argument_computed_only_by_participating_ranks_is_refused():
    source = textwrap.dedent("""\
        class W:
            def step(self):
                if not self.queue:
                    return None
                group = self.pick_group()
                return any(self.dist.allgather(bool(self.queue), group=group))
        """)
    fix = _one(source, "W.step", "self.dist.allgather", "return None", strategy="always-enter",
               collective="allgather", group="world")
    assert not fix.applied and "needs `group` on every rank" in fix.refused[0].reason
