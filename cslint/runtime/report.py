"""Merge per-rank sanitizer state files and name where the ranks parted.

`diagnose(report_dir)` reads ``rank<R>.json`` files, lines the ranks'
collectives up per group and sequence number, finds the first position where
they disagree (different call paths, or some ranks there and others not) and
reports, per rank, the collective it was at.  Where `cslint.api.check_paths`
is available it runs the static analysis on the source files in the call
paths and links each rank's site to the finding on the same line (or in the
same function).

    python -m cslint.runtime.report REPORT_DIR [--svg timeline.svg] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from dataclasses import dataclass, field


@dataclass
class RankState:
    rank: int
    status: str
    message: str
    current: dict | None
    history: list[dict]
    stack: list[dict]
    raw: dict

    def entries(self) -> list[dict]:
        """History plus the collective the rank is stuck in (if any), in order."""
        out = list(self.history)
        if self.current is not None and (not out or (out[-1]["group"], out[-1]["seq"]) != (self.current["group"], self.current["seq"])):
            out.append(dict(self.current, stuck=True))
        return out

    @property
    def position(self) -> dict | None:
        entries = self.entries()
        return entries[-1] if entries else None


@dataclass
class RankSite:
    """Where one rank stood at the divergence."""

    rank: int
    status: str
    entry: dict | None  # the rank's collective at the diverging position, if it reached it
    at: dict | None  # where the rank actually is (stuck collective, or last one)
    findings: list[dict] = field(default_factory=list)

    def describe(self) -> str:
        def fmt(e: dict) -> str:
            chain = " <- ".join(f"{f['function']} ({os.path.basename(f['path'])}:{f['line']})"
                                for f in e.get("callpath", [])[:3])
            return f"{e['op']}[{e['group']}#{e['seq']}] at {chain}"

        if self.entry is not None:
            text = fmt(self.entry)
        elif self.at is not None:
            text = f"never reached it; {'stuck in' if self.at.get('stuck') else 'last collective'} {fmt(self.at)}"
        else:
            text = "no collective recorded"
        return f"rank {self.rank} ({self.status}): {text}"


@dataclass
class Diagnosis:
    report_dir: str
    ranks: list[RankState]
    group: str | None = None
    seq: int | None = None
    sites: list[RankSite] = field(default_factory=list)
    kind: str = "none"  # mismatch | missing | timeout | none
    findings_checked: bool = False
    findings_error: str = ""
    elapsed: float = 0.0

    @property
    def diverged(self) -> bool:
        return self.kind != "none"

    def diverging_functions(self) -> dict[int, str]:
        """rank -> the function that tells its collective apart from the other ranks'.

        The innermost frames the ranks share (a wrapper such as
        `_allgather_model_parallel_status`) are skipped; the first frame that
        differs names the site.
        """
        paths = {}
        for site in self.sites:
            entry = site.entry or site.at
            paths[site.rank] = [(f["function"], f["line"]) for f in (entry or {}).get("callpath", [])]
        common = 0
        if len(paths) > 1 and all(paths.values()):
            shortest = min(len(p) for p in paths.values())
            while common < shortest and len({p[common] for p in paths.values()}) == 1:
                common += 1
        out = {}
        for rank, path in paths.items():
            if path:
                out[rank] = path[min(common, len(path) - 1)][0]
        return out

    def callpath_functions(self) -> dict[int, list[str]]:
        out = {}
        for site in self.sites:
            entry = site.entry or site.at
            out[site.rank] = [f["function"] for f in (entry or {}).get("callpath", [])]
        return out

    def linked_findings(self) -> list[dict]:
        seen, out = set(), []
        for site in self.sites:
            for finding in site.findings:
                key = (finding["path"], finding["line"], finding["code"])
                if key not in seen:
                    seen.add(key)
                    out.append(finding)
        return out

    def to_json(self) -> dict:
        return {
            "report_dir": self.report_dir, "kind": self.kind, "group": self.group, "seq": self.seq,
            "ranks": {str(r.rank): r.status for r in self.ranks},
            "sites": [{"rank": s.rank, "status": s.status, "entry": s.entry, "at": s.at, "findings": s.findings}
                      for s in self.sites],
            "findings_checked": self.findings_checked, "findings_error": self.findings_error,
        }

    def text(self) -> str:
        lines = [f"cslint.runtime report ({self.report_dir}): {len(self.ranks)} rank file(s)"]
        if not self.diverged:
            lines.append("  no divergence found: " + ", ".join(f"rank {r.rank} {r.status}" for r in self.ranks))
            return "\n".join(lines)
        what = {"mismatch": "ranks called different collectives",
                "missing": "some ranks never reached this collective",
                "timeout": "ranks stalled"}[self.kind]
        lines.append(f"  divergence on group '{self.group}' at collective #{self.seq}: {what}")
        for site in self.sites:
            lines.append("    " + site.describe())
            for finding in site.findings:
                message = finding["message"]
                if len(message) > 200:
                    message = message[:197] + "..."
                lines.append(f"      static finding {finding['code']} {finding['path']}:{finding['line']} "
                             f"({finding.get('function', '')}): {message}")
        if not self.findings_checked and self.findings_error:
            lines.append(f"  (static findings not linked: {self.findings_error})")
        return "\n".join(lines)


def load_states(report_dir: str) -> list[RankState]:
    states = []
    for path in sorted(glob.glob(os.path.join(report_dir, "rank*.json"))):
        try:
            with open(path) as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            continue
        states.append(RankState(int(data.get("rank", -1)), data.get("status", "?"), data.get("message", ""),
                                data.get("current"), data.get("history", []), data.get("stack", []), data))
    states.sort(key=lambda s: s.rank)
    return states


def _key(entry: dict) -> tuple:
    return (entry["op"], entry["group"], entry["digest"])


def _find_divergence(states: list[RankState]) -> tuple[str | None, int | None, str]:
    """The earliest (by start time) group/seq at which the ranks disagree."""
    per_group: dict[str, dict[int, dict[int, dict]]] = {}
    for state in states:
        for entry in state.entries():
            per_group.setdefault(entry["group"], {}).setdefault(entry["seq"], {})[state.rank] = entry
    candidates = []
    declared = {}
    for state in states:
        for label, ranks in (state.raw.get("groups") or {}).items():
            declared.setdefault(label, set()).update(ranks)
    present = {s.rank for s in states}
    for group, by_seq in per_group.items():
        members = {rank for entries in by_seq.values() for rank in entries}
        members |= declared.get(group, set()) & present
        for seq in sorted(by_seq):
            entries = by_seq[seq]
            keys = {_key(e) for e in entries.values()}
            if len(keys) > 1:
                candidates.append((min(e["t_start"] for e in entries.values()), group, seq, "mismatch"))
                break
            missing = members - set(entries)
            # a rank that is missing an entry only diverged if its history reaches back that far
            lagging = [r for r in missing if _history_covers(states, r, group, seq)]
            if lagging:
                candidates.append((min(e["t_start"] for e in entries.values()), group, seq, "missing"))
                break
    if not candidates:
        stuck = [s for s in states if s.status == "timeout"]
        if stuck:
            cur = stuck[0].current or {}
            return cur.get("group"), cur.get("seq"), "timeout"
        return None, None, "none"
    candidates.sort()
    _, group, seq, kind = candidates[0]
    return group, seq, kind


def _history_covers(states: list[RankState], rank: int, group: str, seq: int) -> bool:
    """Whether `rank` provably never reached collective `seq` of `group`."""
    state = next(s for s in states if s.rank == rank)
    sequence = state.raw.get("sequence")
    if isinstance(sequence, dict):  # the next sequence number of each group: exact
        return int(sequence.get(group, 0)) <= seq
    seqs = [e["seq"] for e in state.entries() if e["group"] == group]
    if seqs:
        # an older window (min > seq) says nothing; a rank whose last one is before seq is behind
        return max(seqs) < seq
    limit = state.raw.get("history_limit")
    return limit is None or len(state.history) < limit


def _frames_of(entry: dict | None, stack: list[dict]) -> list[dict]:
    frames = list((entry or {}).get("callpath", []))
    return frames + [f for f in stack if f not in frames]


def _link_findings(sites: list[RankSite], states: list[RankState], source_filter) -> tuple[bool, str]:
    try:
        from cslint.api import check_paths
    except Exception as exc:  # noqa: BLE001 - the analyzer is optional here
        return False, f"cslint.api unavailable ({exc})"
    by_rank = {s.rank: s for s in states}
    files = set()
    site_frames = {}
    for site in sites:
        entry = site.entry or site.at
        stack = by_rank[site.rank].stack if site.entry is None else []
        frames = _frames_of(entry, stack)
        frames = [f for f in frames if os.path.isfile(f["path"]) and source_filter(f["path"])]
        site_frames[site.rank] = frames
        files.update(os.path.realpath(f["path"]) for f in frames)
    if not files:
        return False, "no source files in the call paths"
    try:
        result = check_paths(sorted(files))
    except Exception as exc:  # noqa: BLE001
        return False, f"static analysis failed: {exc}"
    findings = [f.to_json() | {"abs": os.path.realpath(f.path)} for f in result.findings]
    for site in sites:
        matched = []
        for frame in site_frames[site.rank]:
            real = os.path.realpath(frame["path"])
            for finding in findings:
                if finding["abs"] == real and finding["line"] == frame["line"] and finding not in matched:
                    matched.append(finding)
        if not matched:
            for frame in site_frames[site.rank][:2]:
                real = os.path.realpath(frame["path"])
                for finding in findings:
                    if (finding["abs"] == real and finding.get("function")
                            and finding["function"].split(".")[-1] == frame["function"].split(".")[-1]
                            and finding not in matched):
                        matched.append(finding)
        site.findings = [{k: v for k, v in f.items() if k != "abs"} for f in matched]
    return True, ""


def _default_source_filter(path: str) -> bool:
    parts = os.path.normpath(path).split(os.sep)
    return not any(p in ("site-packages", "dist-packages") for p in parts) and "cslint" + os.sep + "runtime" not in path


def diagnose(report_dir: str, *, link_findings: bool = True, source_filter=None) -> Diagnosis:
    """Merge the rank files in `report_dir` into a `Diagnosis`."""
    started = time.monotonic()
    states = load_states(report_dir)
    diagnosis = Diagnosis(report_dir, states)
    if not states:
        diagnosis.elapsed = time.monotonic() - started
        return diagnosis
    group, seq, kind = _find_divergence(states)
    diagnosis.group, diagnosis.seq, diagnosis.kind = group, seq, kind
    if kind != "none":
        for state in states:
            entry = None
            for e in state.entries():
                if e["group"] == group and e["seq"] == seq:
                    entry = e
            diagnosis.sites.append(RankSite(state.rank, state.status, entry, state.position))
        if link_findings:
            diagnosis.findings_checked, diagnosis.findings_error = _link_findings(
                diagnosis.sites, states, source_filter or _default_source_filter)
    diagnosis.elapsed = time.monotonic() - started
    return diagnosis


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cslint.runtime.report", description="Merge sanitizer state files.")
    parser.add_argument("report_dir")
    parser.add_argument("--svg", help="write the per-rank timeline here")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--no-findings", action="store_true", help="do not run the static analysis")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.report_dir):
        print(f"error: {args.report_dir}: no such directory", file=sys.stderr)
        return 2
    diagnosis = diagnose(args.report_dir, link_findings=not args.no_findings)
    print(json.dumps(diagnosis.to_json(), indent=1) if args.json else diagnosis.text())
    if args.svg:
        from .timeline import write_svg

        write_svg(diagnosis, args.svg)
    return 1 if diagnosis.diverged else 0


if __name__ == "__main__":
    sys.exit(main())
