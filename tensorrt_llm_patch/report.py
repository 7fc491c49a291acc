"""Human-readable renderings of an apply run: ``report.md`` and the terminal summary.

``report.json`` is :meth:`ApplyReport.to_json`; this module only formats.
The Markdown report is meant for review alongside ``patch.diff``: what the
analysis found in this version of the tree, each hazard with its explanation
chain, and what was done about it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from cslint.paths import under_root

if TYPE_CHECKING:  # types only: the apply module imports this one
    from .apply import ApplyReport, Hazard

OUTCOME_TEXT = {
    "fixed": "fixed",
    "refused": "not fixed (refused)",
    "held-back": "not fixed (unsafe fix held back)",
    "outside-include": "not fixed (outside the include set)",
    "not-analysable": "not analysable",
    "not-planned": "not fixed (no fix offered)",
    "review": "not fixed: for review (the analysis is not sure enough)",
}

#: the order the report shows the outcomes in: what changed first
OUTCOME_ORDER = ("fixed", "held-back", "refused", "not-planned", "review", "outside-include", "not-analysable")


def every_rank_now(hazard: Hazard) -> str:
    """What every rank of the group does at the site after the patch, in a sentence."""
    f = hazard.finding
    if hazard.outcome == "fixed" and hazard.effect:
        return hazard.effect
    return f"unchanged: whether a rank reaches `{f.callee or f.collective}` still depends on `{f.condition}`"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fix_label(hazard: Hazard) -> str:
    if hazard.outcome == "fixed":
        return f"**fixed** with `{hazard.strategy}` ({'safe' if hazard.safe else 'unsafe'})"
    if hazard.outcome == "held-back":
        return f"**not fixed**: `{hazard.strategy}` fix is unsafe and only safe fixes were allowed"
    return f"**{OUTCOME_TEXT.get(hazard.outcome, hazard.outcome)}**"


def render_markdown(report: ApplyReport) -> str:
    """The full review report for one apply run."""
    data = report.to_json()
    counts = data["counts"]
    lines: list[str] = []
    add = lines.append
    add("# TensorRT-LLM collective-safety patch report")
    add("")
    add(f"- Tree: `{data['tree']}` ({data['origin']})")
    described = data.get("git_describe")
    git_note = f"; git {described}" if described and data["version_source"] != "git describe" else ""
    add(f"- TensorRT-LLM version: **{data['tensorrt_llm_version']}** (from {data['version_source'] or 'n/a'}{git_note})")
    add(f"- Status: **{data['status']}**")
    add(f"- Analysed: {data['analysed_files']} file(s) under {', '.join(f'`{p}`' for p in data['analysed_paths'])}"
        f" with presets {', '.join(data['presets'])}")
    add(f"- Rewritten: files under {', '.join(f'`{p}`' for p in data['include'])}")
    add(f"- Strategy: `{data['strategy']}`, exit mode `{data['exit_mode']}`, "
        f"{'safe and unsafe fixes' if data['unsafe_fixes'] else 'safe fixes only'}; a site is rewritten "
        f"when the analysis' confidence is at least **{data['min_confidence']}**")
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in data["timings_s"].items())
    add(f"- Wall time: {data['wall_time_s']:.2f} s ({timings})")
    add("")
    add("Everything below comes from the analysis of this tree as it is; no function")
    add("names, bodies or line numbers are built into the tool.")
    add("")

    add("## Summary")
    add("")
    outcomes = sorted({o for per in counts["by_rule_outcome"].values() for o in per})
    if counts["hazards"]:
        add("| rule | hazards | " + " | ".join(outcomes) + " |")
        add("| --- | ---: | " + " | ".join("---:" for _ in outcomes) + " |")
        for code, total in counts["by_rule"].items():
            per = counts["by_rule_outcome"].get(code, {})
            add(f"| {code} | {total} | " + " | ".join(str(per.get(o, 0)) for o in outcomes) + " |")
        add(f"| **all** | **{counts['hazards']}** | "
            + " | ".join(f"**{counts['by_outcome'].get(o, 0)}**" for o in outcomes) + " |")
    else:
        add("No hazards found.")
    add("")
    consensus = [h for h in report.hazards if h.outcome == "fixed" and h.strategy == "consensus"]
    if consensus:
        add(f"Cost: {len({h.finding.guard for h in consensus})} consensus gate(s) each add one collective "
            "every time their site runs (once per pass of the loop that holds them).")
        add("")
    if report.status == "nothing-to-do":
        if counts["hazards"]:
            add("**Nothing to do:** no finding in the include set has an applicable fix "
                "(the tree may already be patched); see the reasons below.")
        else:
            add("**Nothing to do:** the analysis reports no hazard in this tree.")
        add("")

    add("## Changed files")
    add("")
    if data["changed_files"]:
        add("| file | fixes | original sha256 | patched sha256 |")
        add("| --- | ---: | --- | --- |")
        for c in data["changed_files"]:
            add(f"| `{c['path']}` | {c['fixes']} | `{c['original_sha256'][:12]}` | `{c['patched_sha256'][:12]}` |")
        add("")
        add("Apply from the tree root with `git apply patch.diff` or `patch -p1 < patch.diff`.")
    else:
        add("None.")
    add("")

    add("## Sites rewritten")
    add("")
    if data["sites"]:
        add("| site | condition | strategy | every rank now | cost | findings |")
        add("| --- | --- | --- | --- | --- | ---: |")
        for site in data["sites"]:
            add(f"| `{site['path']}:{site['guard_line']}` `{site['function']}` | `{_cell(site['condition'])}` | "
                f"{site['strategy']} ({'safe' if site['safe'] else 'unsafe'}) | {_cell(site['every_rank_now'])} | "
                f"{site['cost']} | {len(site['findings'])} |")
        add("")
        for site in data["sites"]:
            add(f"Why `{site['function']}` (line {site['guard_line']}) is a hazard:")
            add("")
            for link in site["why"]:
                add(f"1. `{link['path']}:{link['line']}` {link['note']}")
            add("")
    else:
        add("None: no finding was sure enough and fixable; see the reasons below.")
        add("")

    add("## Hazards")
    add("")
    by_file: dict[str, list] = defaultdict(list)
    for hazard in report.hazards:
        by_file[hazard.relpath].append(hazard)
    if not by_file:
        add("None.")
        add("")
    for relpath in sorted(by_file):
        add(f"### `{relpath}`")
        add("")
        order = {outcome: i for i, outcome in enumerate(OUTCOME_ORDER)}
        for hazard in sorted(by_file[relpath], key=lambda h: (order.get(h.outcome, len(order)), h.finding.line)):
            f = hazard.finding
            where = f"{f.function or '<module>'}"
            add(f"#### {f.code} in `{where}` (line {f.line}): `{f.collective}` over `{f.group}`")
            add("")
            add(f"{f.message}")
            add("")
            if f.condition:
                add(f"- Controlling condition ({f.guard_kind or 'guard'}): `{_cell(f.condition)}`")
            add(f"- Outcome: {_fix_label(hazard)}")
            if hazard.reason:
                add(f"- Why: {hazard.reason}")
            if f.confidence is not None:
                doubts = "; ".join(d.note for d in f.confidence.doubts)
                add(f"- Confidence: {f.confidence.level}{' (' + doubts + ')' if doubts else ''}")
            add(f"- Every rank now: {every_rank_now(hazard)}")
            hint = f.fix
            if hint is not None and hazard.outcome != "fixed":
                add(f"- Recommended by the analysis: `{hint.strategy}` "
                    f"({'safe' if hint.safe else 'unsafe'}){': ' + hint.reason if getattr(hint, 'reason', '') else ''}")
            if f.chain:
                add("- Chain:")
                for link in f.chain:
                    link_path = _relative_link(link.path, report.tree)
                    add(f"  1. `{link_path}:{link.line}` {link.note}")
            add("")
    if data["errors"]:
        add("## Files that could not be read")
        add("")
        for error in data["errors"]:
            add(f"- `{error['path']}`: {error['message']}")
        add("")
    return "\n".join(lines).rstrip() + "\n"


def _relative_link(path: str, root: Any) -> str:
    return under_root(path, str(root), resolve=True) or str(path)


def summary_lines(report: ApplyReport) -> list[str]:
    """The few lines the command prints when it finishes."""
    data = report.to_json()
    counts = data["counts"]
    rules = ", ".join(f"{code} {n}" for code, n in counts["by_rule"].items()) or "none"
    outcomes = ", ".join(f"{o} {n}" for o, n in counts["by_outcome"].items()) or "none"
    lines = [
        f"tensorrt_llm_patch: TensorRT-LLM {data['tensorrt_llm_version']} at {data['tree']}",
        (f"  analysed {data['analysed_files']} file(s) in {data['wall_time_s']:.2f} s; "
         f"hazards {counts['hazards']} ({rules})"),
        f"  outcomes: {outcomes}",
    ]
    if report.status == "nothing-to-do":
        lines.append("  nothing to do: no applicable fix (already patched or clean)")
    else:
        lines.append(f"  changed {len(report.changed_files)} file(s): "
                     + ", ".join(c.relpath for c in report.changed_files))
    if report.out_dir:
        lines.append(f"  wrote {report.out_dir}/ (patch.diff, report.md, report.json"
                     f"{', full patched tree' if report.full_copy else ', changed files'})")
    elif report.write and report.status != "nothing-to-do":
        lines.append(f"  replaced files in place (originals kept as .orig); reports in {report.report_dir}/")
    return lines
