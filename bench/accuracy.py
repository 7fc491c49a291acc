"""Precision and recall of `cslint check` on the labelled corpus.

Prints one table per corpus part and per rule (TP, FP, FN, precision,
recall), then every false positive and false negative with file:line, so a
change to the analysis can be judged on the whole corpus at once.

    .venv/bin/python bench/accuracy.py [--json]

Targets (issue 2): recall >= 0.95 and precision >= 0.90 on each part.
The generated part's labels come from running the programs
(tests/corpus/label.py), not from the generator's markers.

The field corpus (tests/field: hangs fixed in real projects, and safe
look-alikes) is scored per case and printed after the two parts; it has no
target yet (issue 15).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
sys.path.insert(0, str(ROOT / "tests" / "field"))

import field_scoring
import scoring

TARGET_RECALL = 0.95
TARGET_PRECISION = 0.90


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="give up when the analysis takes longer (seconds)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        scores = scoring.score_all_in_subprocess(args.timeout)
    except RuntimeError as exc:
        print(f"cannot measure: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    field = _field_corpus(args.timeout)
    if field is None:
        return 2
    if args.json:
        report = {
            name: {"tp": len(s.tp), "fp": len(s.fp), "fn": len(s.fn), "tn": s.tn,
                   "precision": round(s.precision, 4), "recall": round(s.recall, 4),
                   "fp_items": [f"{i.path}:{i.line}" for i in s.fp],
                   "fn_items": [f"{i.path}:{i.line}" for i in s.fn]}
            for name, s in scores.items()}
        report["field"] = field_scoring.to_json(field)
        print(json.dumps(report, indent=1))
        return 0
    manifest = scoring.load_manifest()
    unsafe = sum(p["label"] == "unsafe" for p in manifest["programs"])
    files = len(list(scoring.REAL_SHAPES.rglob("*.py")))
    print(f"real_shapes: {len(scoring.markers(scoring.REAL_SHAPES))} marked hazard lines in {files} files; "
          f"generated: {len(manifest['programs'])} programs ({unsafe} unsafe / "
          f"{len(manifest['programs']) - unsafe} ok from runs on {manifest['rank_counts']} ranks)")
    print()
    print(scoring.format_table(scores))
    print()
    print("generated: unsafe programs caught, by the hazard the generator placed")
    for kind, (caught, total) in scoring.recall_by_hazard_kind(scores["generated"]).items():
        print(f"  {kind:24} {caught:3}/{total:<3}")
    print()
    print(f"analysis of both parts took {elapsed:.2f}s; targets: recall >= {TARGET_RECALL}, "
          f"precision >= {TARGET_PRECISION} (real_shapes and generated program level)")
    met = all(scores[p].recall >= TARGET_RECALL and scores[p].precision >= TARGET_PRECISION
              for p in ("real_shapes", "generated"))
    print("targets met" if met else "targets NOT met")
    print()
    print(field_scoring.format_report(field))
    return 0


def _field_corpus(timeout: float):
    """The field corpus's per-case verdicts, or None (after saying why) when
    the analysis fails or runs past `timeout`."""
    try:
        return field_scoring.score_field_in_subprocess(timeout)
    except RuntimeError as exc:
        print(f"cannot measure the field corpus: {exc}", file=sys.stderr)
        return None


if __name__ == "__main__":
    raise SystemExit(main())
