"""``python -m tensorrt_llm_patch validate``: multi-rank validation on the executor replica.

    python -m tensorrt_llm_patch validate [--backend mpi|gloo|nccl] [--ranks N] [--draft-len K]
        [--fill-gate on|off] [--pp] [--spec asym|sym] [--scenario drain|fault|overlap] [--matrix]
        [--out DIR] [--tree DIR] [--json]

For each configuration it runs the replica (``examples/trtllm_replica``)
twice on real collectives: the original source with the runtime sanitizer,
and the source as rewritten by the codemods (`tensorrt_llm_patch.apply.apply_tree`,
never a hand-patched copy).  It prints an outcome table:

- an unpatched configuration that hangs must be caught by the sanitizer, with
  the diverging site on every rank (and the static finding it links to);
- every patched configuration must complete;
- in every completed run, the tokens of each request must equal the
  single-rank reference run (``--backend local``).

Every sanitized run draws its ranks' collective timeline:
``<out>/<config>/{unpatched,patched}/timeline.svg`` (where the ranks parted,
or that they kept in step to the end).

As in the incident, only the asymmetric spec config with ``draft_len >= 3``
is expected to hang unpatched.  The scenarios (``--scenario``) add the other
hazards of the real executor on the symmetric burst, each expected to hang
unpatched: ``drain`` (serve until a shutdown request, then every rank leaves
once its own requests are drained), ``fault`` (a fatal forward error on one
rank: it fails its requests and leaves; patched, the failed requests are
answered with the failure and every other request with the reference tokens)
and ``overlap`` (the overlap scheduler's KV-pool rebalance consumes a
previous batch one rank cleared and another kept).  ``--matrix`` runs ranks 2
and 4 (only the given number with ``--ranks N``), draft_len 2 and 3, fill
gate on and off, the PP variant and the three scenarios.

Exit status:

    0   every configuration behaved as expected
    1   validation failed (a hang not caught, a patched run that did not
        complete, tokens different from the reference, or an unexpected outcome)
    2   usage error (ranks < 2, unknown backend, bad draft length...)
    4   the replica tree does not exist or has no run_gen_server.py
    13  backend not available (mpiexec or mpi4py missing for mpi; torch missing
        for gloo/nccl; fewer CUDA GPUs than ranks for nccl)
    14  the patched leg could not run (the apply API is missing or failed);
        the unpatched results are still printed
    130 interrupted (Ctrl-C)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .validate_runner import (
    CAUGHT,
    COMPLETED,
    DEFAULT_TREE,
    ENTRY,
    SCENARIOS,
    RunConfig,
    RunResult,
    find_mpiexec,
    run_config,
)

#: the outputs of a request answered with an error (the replica's FAILED_OUTPUT)
FAILED = [-1]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_TREE = 4
EXIT_BACKEND = 13
EXIT_NO_PATCH = 14
EXIT_INTERRUPTED = 130  # SIGINT, the shell's convention (128 + 2)

PROG = "python -m tensorrt_llm_patch validate"


class ValidateError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: message + exit status 2, no traceback
        raise ValidateError(EXIT_USAGE, message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Run the executor replica unpatched and patched on real collectives.")
    p.add_argument("--backend", default="mpi", help="mpi (default), gloo or nccl")
    p.add_argument("--ranks", type=int, default=None,
                   help="GEN ranks (>= 2; default 2; with --matrix: only this many, instead of 2 and 4)")
    p.add_argument("--draft-len", type=int, default=3)
    p.add_argument("--fill-gate", default="on", help="on or off (off = TLLM_BENCHMARK_REQ_QUEUES_SIZE=0)")
    p.add_argument("--pp", action="store_true", help="pipeline-parallel GEN server (transfer-status gate)")
    p.add_argument("--spec", default="asym", help="asym (drafter on GEN only, default) or sym")
    p.add_argument("--scenario", default="", help="drain, fault or overlap (see below); default: the burst")
    p.add_argument("--matrix", action="store_true",
                   help="ranks 2,4 (or --ranks) x draft_len 2,3 x fill gate on,off, plus PP, plus the scenarios "
                        "drain, fault and overlap")
    p.add_argument("--tree", default=str(DEFAULT_TREE), help="the replica tree (default: examples/trtllm_replica)")
    p.add_argument("--out", default=None, help="output directory (default: a new temporary directory)")
    p.add_argument("--model", default="auto", help="auto, torch or numpy")
    p.add_argument("--requests", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=6)
    p.add_argument("--timeout", type=float, default=60.0, help="hard limit per run, seconds")
    p.add_argument("--sanitizer-timeout", type=float, default=2.0, help="stall threshold of the watchdog")
    p.add_argument("--no-patched", action="store_true", help="run the unpatched leg only")
    p.add_argument("--no-findings", action="store_true", help="do not link static findings in the report")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    return p


def _check_args(args) -> None:
    if args.backend not in ("mpi", "gloo", "nccl"):
        raise ValidateError(EXIT_USAGE, f"unknown backend {args.backend!r}; choose mpi, gloo or nccl")
    if args.ranks is not None and args.ranks < 2:
        raise ValidateError(EXIT_USAGE, f"--ranks {args.ranks}: a collective hazard needs at least 2 ranks")
    if args.draft_len < 0:
        raise ValidateError(EXIT_USAGE, "--draft-len must be >= 0")
    if args.fill_gate not in ("on", "off"):
        raise ValidateError(EXIT_USAGE, f"--fill-gate {args.fill_gate!r}: choose on or off")
    if args.spec not in ("asym", "sym"):
        raise ValidateError(EXIT_USAGE, f"--spec {args.spec!r}: choose asym or sym")
    if args.scenario and args.scenario not in SCENARIOS:
        raise ValidateError(EXIT_USAGE, f"--scenario {args.scenario!r}: choose {', '.join(SCENARIOS)}")
    if args.scenario and args.pp:
        raise ValidateError(EXIT_USAGE, "--scenario runs the attention-DP server; leave out --pp")
    if args.model not in ("auto", "torch", "numpy"):
        raise ValidateError(EXIT_USAGE, f"--model {args.model!r}: choose auto, torch or numpy")
    if args.requests < 1 or args.max_new_tokens < 1 or args.timeout <= 0:
        raise ValidateError(EXIT_USAGE, "--requests, --max-new-tokens and --timeout must be positive")
    tree = Path(args.tree)
    if not (tree / ENTRY).is_file():
        raise ValidateError(EXIT_NO_TREE, f"{tree}: not a replica tree (no {ENTRY})")


def _cuda_gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _check_backend(args) -> str | None:
    """Returns the mpiexec path for mpi; raises when the backend cannot run."""
    needed = max(matrix_ranks(args)) if args.matrix else single_ranks(args)
    if args.backend == "mpi":
        mpiexec = find_mpiexec()
        if mpiexec is None:
            raise ValidateError(EXIT_BACKEND, "backend mpi: mpiexec not found (install the mpich wheel: "
                                              "pip install mpi4py mpich)")
        try:
            import mpi4py  # noqa: F401
        except ImportError:
            raise ValidateError(EXIT_BACKEND, "backend mpi: mpi4py is not installed") from None
        return mpiexec
    if importlib.util.find_spec("torch") is None:
        raise ValidateError(EXIT_BACKEND, f"backend {args.backend}: torch is not installed")
    if args.backend == "nccl":
        gpus = _cuda_gpus()
        if gpus < needed:
            raise ValidateError(EXIT_BACKEND, f"backend nccl needs one CUDA GPU per rank: {needed} rank(s), "
                                              f"{gpus} GPU(s) visible")
    import torch.distributed as tdist

    if not tdist.is_available():
        raise ValidateError(EXIT_BACKEND, f"backend {args.backend}: this torch has no torch.distributed")
    return None


def single_ranks(args) -> int:
    return getattr(args, "ranks", None) or 2


def matrix_ranks(args) -> tuple:
    """The rank counts of ``--matrix``: 2 and 4, or the one ``--ranks`` names."""
    ranks = getattr(args, "ranks", None)
    return (2, 4) if ranks is None else (ranks,)


def configs_for(args) -> list[RunConfig]:
    if not args.matrix:
        return [RunConfig(args.backend, single_ranks(args), args.draft_len, args.fill_gate, args.pp, args.spec,
                          getattr(args, "scenario", ""))]
    out = []
    for ranks in matrix_ranks(args):
        for draft_len in (2, 3):
            for gate in ("on", "off"):
                out.append(RunConfig(args.backend, ranks, draft_len, gate, False, "asym"))
        for draft_len in (2, 3):
            out.append(RunConfig(args.backend, ranks, draft_len, "off", True, "asym"))
        # the scenarios run the symmetric, gate-off burst, which completes by itself: what parts the
        # ranks is the scenario's own hazard
        for scenario in SCENARIOS:
            out.append(RunConfig(args.backend, ranks, 2, "off", False, "sym", scenario))
    out.append(RunConfig(args.backend, max(matrix_ranks(args)), 3, "on", False, "sym"))
    return out


def _model_for(args) -> str:
    if args.model != "auto":
        return args.model
    if args.backend == "mpi":
        # torch costs seconds of import per rank on a CPU machine; use it when it does GPU work
        # (under MPI, ranks share the GPUs when there are fewer GPUs than ranks)
        return "torch" if _cuda_gpus() >= 1 else "numpy"
    return "torch"


def make_patched_tree(tree: Path, dest: Path) -> tuple[Path | None, str]:
    """The codemods' output for `tree` as a complete runnable copy (or the reason there is none)."""
    try:
        from .apply import apply_tree
    except ImportError as exc:
        return None, f"apply API not available ({exc})"
    if dest.exists():
        shutil.rmtree(dest)
    try:
        report = apply_tree(str(tree), out=str(dest), full_copy=True)
    except Exception as exc:  # noqa: BLE001 - any failure of the other leg is reported, not raised
        return None, f"apply_tree failed: {type(exc).__name__}: {exc}"
    if not (dest / ENTRY).is_file():
        return None, f"apply_tree wrote no runnable tree (status {getattr(report, 'status', '?')})"
    return dest, f"apply_tree: {getattr(report, 'status', '?')}, {len(getattr(report, 'applied', []))} fix(es)"


def tokens_as_expected(cfg: RunConfig, result: RunResult, reference: dict) -> bool:
    """Every request answered with the reference tokens; in the fault scenario, the requests of the
    faulting rank may instead be answered with the failure (the one that faulted must be)."""
    if cfg.faulting_rank is None:
        return result.outputs == reference
    if set(result.outputs) != set(reference):
        return False
    failed = {rid for rid, tokens in result.outputs.items() if tokens == FAILED}
    if not failed or any(result.owners.get(rid) != cfg.faulting_rank for rid in failed):
        return False
    return all(result.outputs[rid] == tokens for rid, tokens in reference.items() if rid not in failed)


def _verdict(cfg: RunConfig, unpatched: RunResult, patched: RunResult | None, reference: dict) -> list[str]:
    """Problems with this configuration (empty: as expected)."""
    problems = []
    if cfg.expect_hang:
        if unpatched.outcome != CAUGHT:
            problems.append(f"unpatched: expected a caught hang, got {unpatched.outcome}")
    elif unpatched.outcome != COMPLETED:
        problems.append(f"unpatched: expected to complete, got {unpatched.outcome}")
    elif not tokens_as_expected(cfg, unpatched, reference):
        problems.append("unpatched: tokens differ from the single-rank reference")
    if patched is not None:
        if patched.outcome != COMPLETED:
            problems.append(f"patched: expected to complete, got {patched.outcome}")
        elif not tokens_as_expected(cfg, patched, reference):
            problems.append("patched: tokens differ from the single-rank reference")
    return problems


def _tokens_cell(cfg: RunConfig, result: RunResult | None, reference: dict) -> str:
    if result is None:
        return "-"
    if result.outcome != COMPLETED:
        return "-"
    if not tokens_as_expected(cfg, result, reference):
        return "DIFFER"
    failed = sum(1 for tokens in result.outputs.values() if tokens == FAILED)
    return f"identical ({failed} failed by the fault)" if failed else "identical"


def _outcome_cell(result: RunResult | None) -> str:
    if result is None:
        return "skipped"
    if result.outcome == CAUGHT and result.detect_seconds is not None:
        return f"{CAUGHT} ({result.detect_seconds:.1f}s)"
    if result.outcome not in (COMPLETED, CAUGHT):
        return f"{result.outcome} rc={result.returncode}"
    return result.outcome


def format_sites(sites: dict[int, str]) -> str:
    """``{0: "A.f", 1: "A.g", 2: "A.g"}`` -> ``f(0); g(1,2)``."""
    by_function: dict[str, list[int]] = {}
    for rank, function in sorted(sites.items()):
        by_function.setdefault(function.split(".")[-1], []).append(rank)
    return "; ".join(f"{fn}({','.join(map(str, ranks))})" for fn, ranks in by_function.items()) or "-"


def render_table(rows: list[dict]) -> str:
    headers = ["config", "unpatched", "diverging sites: function(ranks)", "patched", "tokens unpatched/patched",
               "verdict"]
    table = [headers]
    for row in rows:
        site_text = format_sites(row["unpatched"].sites())
        tokens = [_tokens_cell(row["config"], row["unpatched"], row["reference"]),
                  _tokens_cell(row["config"], row["patched"], row["reference"])]
        table.append([
            row["config"].name, _outcome_cell(row["unpatched"]), site_text, _outcome_cell(row["patched"]),
            "/".join(tokens), "ok" if not row["problems"] else "FAIL",
        ])
    widths = [max(len(r[i]) for r in table) for i in range(len(headers))]
    lines = []
    for n, r in enumerate(table):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run_validation(args, out: Path, mpiexec: str | None) -> tuple[int, list[dict], str]:
    tree = Path(args.tree).resolve()
    model = _model_for(args)
    common = {"model": model, "requests": args.requests, "max_new_tokens": args.max_new_tokens,
              "sanitizer_timeout": args.sanitizer_timeout, "timeout": args.timeout, "mpiexec": mpiexec,
              "link_findings": not args.no_findings}
    reference_run = run_config(RunConfig("local", 1, args.draft_len, "off", False, args.spec), tree,
                               out / "reference", sanitize=False, **common)
    if reference_run.outcome != COMPLETED:
        raise ValidateError(EXIT_FAILED, f"the single-rank reference run failed ({reference_run.outcome}); "
                                         f"log: {out / 'reference' / 'run.log'}")
    reference = reference_run.outputs
    patched_tree, patch_note = (None, "patched leg disabled (--no-patched)")
    if not args.no_patched:
        patched_tree, patch_note = make_patched_tree(tree, out / "patched-tree")
    rows = []
    for cfg in configs_for(args):
        base = out / cfg.slug
        unpatched = run_config(cfg, tree, base / "unpatched", **common)
        patched = run_config(cfg, patched_tree, base / "patched", **common) if patched_tree else None
        problems = _verdict(cfg, unpatched, patched, reference)
        rows.append({"config": cfg, "unpatched": unpatched, "patched": patched, "reference": reference,
                     "problems": problems})
    failed = any(row["problems"] for row in rows)
    code = EXIT_FAILED if failed else (EXIT_NO_PATCH if patched_tree is None and not args.no_patched else EXIT_OK)
    return code, rows, patch_note


def _print_details(rows: list[dict], out: Path) -> None:
    for row in rows:
        for leg in ("unpatched", "patched"):
            result = row[leg]
            if result is None or result.diagnosis is None:
                continue
            print(f"\n[{row['config'].name}, {leg}]")
            print(result.diagnosis)
        for problem in row["problems"]:
            print(f"  FAIL {row['config'].name}: {problem}")
    timelines = [row[leg].svg for row in rows for leg in ("unpatched", "patched") if row[leg] and row[leg].svg]
    if timelines:
        print("\ntimelines (one lane per rank; open in a browser):")
        for path in timelines:
            print(f"  {path}")


def _json(rows: list[dict], code: int, patch_note: str, out: Path) -> dict:
    def leg(result: RunResult | None):
        if result is None:
            return None
        return {"outcome": result.outcome, "returncode": result.returncode, "seconds": round(result.seconds, 3),
                "detect_seconds": result.detect_seconds, "sites": result.sites(),
                "diagnosis": result.diagnosis.to_json() if result.diagnosis is not None else None,
                "timeline": result.svg}
    return {"exit": code, "out": str(out), "patch": patch_note,
            "configs": [{"config": row["config"].name, "expect_hang": row["config"].expect_hang,
                         "unpatched": dict(leg(row["unpatched"]) or {}, tokens_match=_match(row, "unpatched")),
                         "patched": dict(leg(row["patched"]), tokens_match=_match(row, "patched"))
                         if row["patched"] is not None else None,
                         "problems": row["problems"]} for row in rows]}


def _match(row: dict, which: str):
    result = row[which]
    if result is None or result.outcome != COMPLETED:
        return None
    return tokens_as_expected(row["config"], result, row["reference"])


def main(argv: list[str]) -> int:
    """Entry point of ``validate``; returns the exit status documented above."""
    try:
        args = build_parser().parse_args(argv)
        _check_args(args)
        mpiexec = _check_backend(args)
        out = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="trtllm-validate-"))
        out.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        code, rows, patch_note = run_validation(args, out, mpiexec)
    except ValidateError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        print(json.dumps(_json(rows, code, patch_note, out), indent=1))
        return code
    print(f"replica: {args.tree}\npatched tree: {patch_note}\noutput: {out}\n")
    print(render_table(rows))
    _print_details(rows, out)
    verdict = {EXIT_OK: "all configurations behaved as expected", EXIT_FAILED: "VALIDATION FAILED",
               EXIT_NO_PATCH: "unpatched leg as expected; the patched leg could not run"}[code]
    print(f"\n{verdict} ({time.monotonic() - started:.1f} s)")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
