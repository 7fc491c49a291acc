"""`cslint fix` on the command line: registration, and every finding's outcome printed."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

from cslint.api import check_paths
from cslint.cli import main

from codemods.driver import plan_fixes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One finding of each outcome without --unsafe-fixes:
#   line 8: an early exit before a barrier -> always-enter, safe (applied)
#   lines 14, 15: a branch on a random draw around two collectives -> consensus, unsafe (held back)
#   line 20: a collective after local work a handler catches -> no automatic fix (refused)
MIXED = textwrap.dedent("""\
    import random
    import torch.distributed as dist


    def flush(pending):
        if dist.get_rank() == 0:
            return None
        dist.barrier()
        return len(pending)


    def spin(t):
        if random.random() < 0.5:
            dist.all_reduce(t)
            dist.barrier()
        return t


    def step(batch, t):
        try:
            load(batch)
            dist.all_reduce(t)
        except OSError:
            return None
""")


def _imports_of(path: str) -> set[str]:
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_cslint_package_never_imports_the_codemods():
    offenders = []
    for directory, _dirs, files in os.walk(os.path.join(ROOT, "cslint")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                if any(m == "codemods" or m.startswith("codemods.") for m in _imports_of(path)):
                    offenders.append(os.path.relpath(path, ROOT))
    assert offenders == []


def test_importing_the_cli_loads_no_codemod_module():
    code = ("import sys, cslint.cli\n"
            "loaded = sorted(m for m in sys.modules if m == 'codemods' or m.startswith('codemods.'))\n"
            "print(','.join(loaded))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == ""


def test_fix_is_a_registered_subcommand(capsys):
    assert main(["fix", "--help"]) == 0
    assert "--unsafe-fixes" in capsys.readouterr().out


def _outcomes(stderr: str) -> dict[int, str]:
    by_line = {}
    for line in stderr.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit():
            assert int(parts[1]) not in by_line, f"line {parts[1]} reported twice"
            by_line[int(parts[1])] = parts[3]
    return by_line


def test_every_finding_is_printed_as_fixed_held_back_or_refused(tmp_path, capsys):
    path = tmp_path / "mixed.py"
    path.write_text(MIXED, encoding="utf-8")
    lines = sorted(f.line for f in check_paths([str(path)], report="per-site").findings)
    assert lines == [8, 14, 15, 22]
    # reported by root cause, the two sites under one guard are one finding; fix rewrites every site
    grouped = {f.line: f for f in check_paths([str(path)]).findings}
    assert sorted(grouped) == [8, 14, 22] and [site.line for site in grouped[14].sites] == [14, 15]
    status = main(["fix", "--no-cache", str(path)])
    err = capsys.readouterr().err
    outcomes = _outcomes(err)
    assert sorted(outcomes) == lines
    assert "fixed by always-enter (safe)" in outcomes[8]
    assert all("held back" in outcomes[n] and "--unsafe-fixes" in outcomes[n] for n in (14, 15))
    assert "not fixed:" in outcomes[22] and "cslint explain CSL104" in outcomes[22]
    assert "1 fixed, 2 held back as unsafe, 1 not fixed" in err
    assert status == 1  # a diff to apply

    main(["fix", "--no-cache", "--unsafe-fixes", str(path)])
    outcomes = _outcomes(capsys.readouterr().err)
    assert sorted(outcomes) == lines
    assert "fixed by consensus (unsafe)" in outcomes[15] and "not fixed:" in outcomes[22]
    assert "fixed by always-enter (safe)" in outcomes[8]


def test_plan_fixes_returns_what_it_holds_back(tmp_path):
    path = tmp_path / "mixed.py"
    path.write_text(MIXED, encoding="utf-8")
    result = check_paths([str(path)], report="per-site")
    plan = plan_fixes(result, unsafe=False)
    assert sorted(h.finding.line for h in plan.held_back) == [14, 15]
    assert not any(h.safe for h in plan.held_back)
    assert all(a.safe for a in plan.applied)
    every = [a.finding for a in plan.applied] + [h.finding for h in plan.held_back] + [r.finding for r in plan.refused]
    assert sorted(f.line for f in every) == sorted(f.line for f in result.findings)
    assert "    if random.random() < 0.5:\n" in plan.files[0].fixed  # the held-back rewrite is not in the text
    everything = plan_fixes(result, unsafe=True)
    assert not everything.held_back and "    if random.random() < 0.5:\n" not in everything.files[0].fixed


def test_fix_from_json_gives_the_same_rewrite_as_fixing_the_paths(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mixed.py").write_text(MIXED, encoding="utf-8")
    main(["check", "--no-cache", "--format", "json", "--report", "per-site", "-o", "report.json", "mixed.py"])
    main(["check", "--no-cache", "--format", "json", "-o", "by-guard.json", "mixed.py"])
    capsys.readouterr()
    assert main(["fix", "--no-cache", "--unsafe-fixes", "mixed.py"]) == 1
    direct = capsys.readouterr()
    # another directory: the report's paths are found beside the report
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["fix", "--unsafe-fixes", "--from-json", str(tmp_path / "report.json")]) == 1
    from_json = capsys.readouterr()
    assert from_json.out.replace("../", "") == direct.out and "+++ b/" in direct.out
    assert _outcomes(from_json.err).keys() == _outcomes(direct.err).keys()
    # a report by root cause names one site per guard; the guard's fix is the same rewrite
    assert main(["fix", "--unsafe-fixes", "--from-json", str(tmp_path / "by-guard.json")]) == 1
    assert capsys.readouterr().out.replace("../", "") == direct.out


def test_from_json_rejects_what_is_not_a_report(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "findings": [{"code": "CSL101"}]}', encoding="utf-8")
    assert main(["fix", "--from-json", str(bad)]) == 2
    assert "not a cslint JSON report" in capsys.readouterr().err
