"""How long `cslint fix` takes on a 9,000-line executor-like file.

Builds the file by repeating the seed fixtures' executor classes under new
names (tests/fixtures/codemods), builds their findings, then times in one run:

* baseline: ``libcst.parse_module`` of the same file (the floor any codemod pays);
* ``fix_source`` with every finding: `ast` chunking, libcst parse of the
  functions with findings only, positions, plans, splice, compile check;
* for reference, what `python -m libcst.tool codemod` adds: it hands the
  command a parsed module and takes one back (code generation + re-parse).

Target: the fix finishes in <= 5 s.  Usage: python bench/codemod_speed.py [--lines 9000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import libcst as cst

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "codemods"))

from codemod_cases import SEED_FIXTURES, fixture_path
from codemod_findings import make_finding

from codemods.driver import fix_source

TARGET_SECONDS = 5.0


def _classes(name: str) -> str:
    """The fixture's source from its first `class` line up to `SCENARIOS`."""
    with open(fixture_path(name), encoding="utf-8") as handle:
        text = handle.read()
    start = text.index("\nclass ")
    end = text.index("\nSCENARIOS")
    return text[start:end].rstrip() + "\n"


def build(lines: int) -> tuple[str, list[tuple[str, int]]]:
    """(source, [(fixture, copy number)]) with at least ``lines`` lines."""
    header = '"""Executor-like module for the codemod benchmark."""\n\nimport json\n\nfrom mpi4py import MPI\n'
    parts, copies, total, n = [header], [], header.count("\n"), 0
    while total < lines:
        for name in SEED_FIXTURES:
            body = _classes(name).replace("class Executor", f"class Executor{n}").replace(
                "class Distributed", f"class Distributed{n}")
            # vary the copies a little: different constants per copy
            body = body.replace("self.max_batch = 2", f"self.max_batch = {2 + n % 3}")
            parts.append(body)
            copies.append((name, n))
            total += body.count("\n") + 1
            n += 1
    return "\n".join(parts), copies


def findings_for(source: str, path: str, copies) -> list:
    """The seed fixtures' findings, one set per copy (functions renamed to the copy's class)."""
    found = []
    for name, n in copies:
        for spec in _specs(name):
            spec = dict(spec, function=spec["function"].replace("Executor.", f"Executor{n}."))
            found.append(make_finding(path, source, **spec))
    return found


def _specs(name: str) -> list[dict]:
    common = {"api": "trtllm"}
    if name == "fill_gate":
        return [dict(common, code="CSL102", function="Executor._sync_gen_only_benchmark_has_insufficient_kv",
                     callee="self._allgather_model_parallel_status", guard=g, guard_kind="early-exit",
                     collective="tp_allgather", group="tp", collective_callee="self.dist.tp_allgather")
                for g in ("return False", "return None")]
    if name == "event_loop":
        return [dict(common, code="CSL102", function="Executor._executor_loop", callee="self._can_queue",
                     guard="continue", guard_kind="early-exit", collective="tp_allgather", group="tp",
                     collective_callee="self.dist.tp_allgather")]
    return [dict(common, code="CSL101", function="Executor._check_disagg_gen_transfer_status",
                 callee="self.dist.pp_allgather", guard="if need_check", guard_kind="branch",
                 collective="pp_allgather", group="pp")]


def best_of(repeat: int, func) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=9000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    source, copies = build(args.lines)
    path = "bench_executor.py"
    findings = findings_for(source, path, copies)
    holder = {}
    parse_s = best_of(args.repeat, lambda: cst.parse_module(source))
    fix_s = best_of(args.repeat, lambda: holder.__setitem__("fix", fix_source(source, path, findings)))
    fix = holder["fix"]
    few = [f for f in findings if f.function.startswith(("Executor0.", "Executor1.", "Executor2."))]
    few_s = best_of(args.repeat, lambda: fix_source(source, path, few))
    module = cst.parse_module(source)

    def as_libcst_command():  # what `python -m libcst.tool codemod` adds around fix_source
        fixed = fix_source(module.code, path, findings).fixed
        return cst.parse_module(fixed)

    command_s = best_of(1, as_libcst_command)
    n_lines = source.count("\n") + 1
    print(f"{'measure':<34} {'seconds':>8}  notes")
    print(f"{'libcst.parse_module (baseline)':<34} {parse_s:8.3f}  {n_lines} lines, {len(source)} chars")
    print(f"{'fix_source, all findings':<34} {fix_s:8.3f}  {len(findings)} findings: "
          f"{len(fix.applied)} applied, {len(fix.refused)} refused; {fix_s / parse_s:.1f}x parse")
    print(f"{'fix_source, one copy of each seed':<34} {few_s:8.3f}  {len(few)} findings in 3 functions "
          "(a real executor's case)")
    print(f"{'libcst command (code+fix+re-parse)':<34} {command_s:8.3f}  for reference: the tool hands over and "
          "takes back a parsed module")
    verdict = "PASS" if fix_s <= TARGET_SECONDS else "FAIL"
    print(f"{'target (fix <= 5 s)':<34} {TARGET_SECONDS:8.3f}  {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
