"""The integrations bench judges only comparisons that measured something.

semgrep skips paths under a virtual environment without a word; a run that
scanned no file must not count as "faster than cslint" (an earlier table
compared cslint with a semgrep run that had read none of the torch package).
"""

from __future__ import annotations

import json
import os

from bench_scripts import load_bench


def test_semgrep_note_counts_scanned_files():
    bench = load_bench("integrations")
    output = json.dumps({"results": [{}, {}], "paths": {"scanned": ["a.py", "b.py", "c.py"]}})
    assert bench.semgrep_note(output) == (3, "3 files scanned, 2 matches")
    assert bench.semgrep_note("not json") == (None, "no JSON output")


def test_a_semgrep_run_that_scanned_nothing_is_not_compared():
    bench = load_bench("integrations")
    cold = bench.Row("torch", "cslint cold (--no-cache)", wall=3.0)
    empty = bench.Row("torch", "semgrep (1 pattern rule)", wall=1.5, extra={"scanned": 0})
    lines = bench.verdicts([cold, empty])
    assert any(line.startswith("n/a") and "semgrep scanned no file" in line for line in lines), lines
    real = bench.Row("torch", "semgrep (1 pattern rule)", wall=5.0, extra={"scanned": 2281})
    lines = bench.verdicts([cold, real])
    assert any(line.startswith("PASS") and "faster than semgrep" in line for line in lines), lines
    slow = bench.Row("torch", "cslint cold (--no-cache)", wall=6.0)
    lines = bench.verdicts([slow, real])
    assert any(line.startswith("FAIL") and "faster than semgrep" in line for line in lines), lines


def test_sources_are_copied_out_of_the_tree(tmp_path):
    bench = load_bench("integrations")
    tree = tmp_path / "site-packages" / "pkg"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.py").write_text("x = 1\n")
    (tree / "sub" / "b.py").write_text("y = 2\n")
    (tree / "data.bin").write_bytes(b"\0")
    copy = bench.copy_sources(str(tree), str(tmp_path / "scratch"))
    found = sorted(os.path.relpath(os.path.join(d, n), copy) for d, _, names in os.walk(copy) for n in names)
    assert found == ["a.py", os.path.join("sub", "b.py")]
    assert "site-packages" not in copy


def test_the_semgrep_verdict_uses_the_paired_ratio_when_there_is_one():
    bench = load_bench("integrations")
    cold = bench.Row("vllm", "cslint cold (--no-cache)", wall=5.2)
    semgrep = bench.Row("vllm", "semgrep (1 pattern rule)", wall=5.0, extra={"scanned": 3604})
    paired = bench.Row("vllm", bench.PAIRED_SEMGREP, extra={"ratio": 0.93},
                       note="ratio 0.930, median of 5 alternating pairs (0.910-0.950)")
    lines = bench.verdicts([cold, semgrep, paired])
    assert any(line.startswith("PASS") and "0.930" in line for line in lines), lines
    slower = bench.Row("vllm", bench.PAIRED_SEMGREP, extra={"ratio": 1.04},
                       note="ratio 1.040, median of 5 alternating pairs (1.010-1.080)")
    lines = bench.verdicts([cold, semgrep, slower])
    assert any(line.startswith("FAIL") and "faster than semgrep" in line for line in lines), lines
