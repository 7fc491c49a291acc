"""Merge per-rank sanitizer state files and name where the ranks parted.

`diagnose(report_dir)` reads ``rank<R>.json`` files, lines the ranks'
collectives up per group and sequence number, finds the first position where
they disagree (different call paths, or some ranks there and others not) and
reports, per rank, the collective it was at.  Where `cslint.api.check_paths`
is available it runs the static analysis on the source files in the call
paths and links each rank's site to the finding on the same line (or in the
same function).  ``print(diagnosis)`` shows the human report:

    python -m cslint.runtime report REPORT_DIR [--svg timeline.svg] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import textwrap
import time
from dataclasses import dataclass, field

from .fingerprint import user_frames


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


STATUS_WORDS = {
    "mismatch": "its check failed here",
    "timeout": "stalled here",
    "peer": "stopped when another rank reported",
    "finished": "finished normally",
}


def display_path(path: str) -> str:
    """A path as the report shows it: relative to the working directory when it lies below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith(os.pardir) else path


@dataclass
class RankSite:
    """Where one rank stood at the divergence."""

    rank: int
    status: str
    entry: dict | None  # the rank's collective at the diverging position, if it reached it
    at: dict | None  # where the rank actually is (stuck collective, or last one)
    findings: list[dict] = field(default_factory=list)
    stack: list[dict] = field(default_factory=list)  # the main thread's stack when the rank wrote its state

    @property
    def frames(self) -> list[dict]:
        """The user frames that led to the rank's collective at the divergence (or to where it is)."""
        entry = self.entry or self.at
        frames = user_frames((entry or {}).get("callpath", []))
        if not frames:
            frames = user_frames(self.stack)[:5]
        return frames

    def describe(self) -> str:
        """One line: the rank, its status and where it stood."""
        def fmt(e: dict) -> str:
            chain = " <- ".join(f"{f['function']} ({os.path.basename(f['path'])}:{f['line']})"
                                for f in user_frames(e.get("callpath", []))[:3])
            return f"{e['op']}[{e['group']}#{e['seq']}] at {chain}"

        if self.entry is not None:
            text = fmt(self.entry)
        elif self.at is not None:
            text = f"never reached it; {'stuck in' if self.at.get('stuck') else 'last collective'} {fmt(self.at)}"
        else:
            text = "no collective recorded"
        return f"rank {self.rank} ({self.status}): {text}"

    def _key(self) -> tuple:
        entry = self.entry or self.at or {}
        return (self.entry is not None, bool(entry.get("stuck")), entry.get("op"), entry.get("group"),
                entry.get("seq") if self.entry is None else None,
                tuple((f["path"], f["line"]) for f in self.frames))


def _ranks_label(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


@dataclass(repr=False)
class Diagnosis:
    """The merged report: ``print(diagnosis)`` shows it; `to_json` is the machine form."""

    report_dir: str
    ranks: list[RankState]
    group: str | None = None
    seq: int | None = None
    sites: list[RankSite] = field(default_factory=list)
    kind: str = "none"  # mismatch | missing | timeout | none
    findings_checked: bool = False
    findings_error: str = ""
    elapsed: float = 0.0
    findings: list[dict] = field(default_factory=list)  # linked static findings, each with "ranks" and "match"

    @property
    def diverged(self) -> bool:
        return self.kind != "none"

    def parting_depth(self) -> int:
        """How many innermost frames every rank's path shares (a wrapper such as
        `_allgather_model_parallel_status`): the frame below them is where the paths part."""
        paths = [[(f["function"], f["line"]) for f in site.frames] for site in self.sites]
        common = 0
        if len(paths) > 1 and all(paths):
            shortest = min(len(p) for p in paths)
            while common < shortest and len({p[common] for p in paths}) == 1:
                common += 1
        return common

    def diverging_functions(self) -> dict[int, str]:
        """rank -> the function that tells its collective apart from the other ranks' (the first frame
        below the ones they share)."""
        common = self.parting_depth()
        out = {}
        for site in self.sites:
            path = site.frames
            if path:
                out[site.rank] = path[min(common, len(path) - 1)]["function"]
        return out

    def callpath_functions(self) -> dict[int, list[str]]:
        return {site.rank: [f["function"] for f in site.frames] for site in self.sites}

    def linked_findings(self) -> list[dict]:
        return list(self.findings)

    def to_json(self) -> dict:
        return {
            "report_dir": self.report_dir, "kind": self.kind, "group": self.group, "seq": self.seq,
            "ranks": {str(r.rank): r.status for r in self.ranks},
            "sites": [{"rank": s.rank, "status": s.status, "entry": s.entry, "at": s.at, "frames": s.frames,
                       "findings": s.findings} for s in self.sites],
            "findings": self.findings,
            "findings_checked": self.findings_checked, "findings_error": self.findings_error,
        }

    def _grouped_sites(self) -> list[tuple[list[int], list[RankSite]]]:
        groups: dict[tuple, list[RankSite]] = {}
        for site in self.sites:
            groups.setdefault(site._key(), []).append(site)
        return sorted(((sorted(s.rank for s in members), members) for members in groups.values()),
                      key=lambda item: item[0])

    def text(self, width: int = 100) -> str:
        """The human report (what ``print(diagnosis)`` shows)."""
        if not self.ranks:
            return f"cslint.runtime report: no rank state files (rank*.json) in {self.report_dir}"
        if not self.diverged:
            lines = [f"cslint.runtime report: no divergence found in {len(self.ranks)} rank file(s) ({self.report_dir})"]
            for state in self.ranks:
                lines.append(f"  rank {state.rank}: {STATUS_WORDS.get(state.status, state.status)} after "
                             f"{state.raw.get('collectives', len(state.history))} collective(s)")
            return "\n".join(lines)
        what = {"mismatch": "they called different collectives",
                "missing": "some ranks never reached it",
                "timeout": "they stalled"}[self.kind]
        title = f"cslint.runtime report: the ranks parted at collective #{self.seq} of group '{self.group}': {what}."
        lines = [title, f"{len(self.ranks)} ranks; state files in {self.report_dir}", ""]
        for ranks, members in self._grouped_sites():
            site = members[0]
            statuses = sorted({STATUS_WORDS.get(m.status, m.status) for m in members})
            if site.entry is not None:
                where = f"in {site.entry['op']} #{site.entry['seq']}"
            elif site.at is not None:
                verb = "waiting in" if site.at.get("stuck") else "its last collective was"
                where = (f"never reached it; {verb} {site.at['op']} #{site.at['seq']} of group "
                         f"'{site.at['group']}'")
            else:
                where = "never reached it; no collective recorded"
            lines.append(f"{_ranks_label(ranks)} ({'; '.join(statuses)}): {where}")
            for i, frame in enumerate(site.frames):
                lead = "    at " if i == 0 else "       "
                lines.append(f"{lead}{display_path(frame['path'])}:{frame['line']} in {frame['function']}")
        if self.findings:
            by_line = any(f.get("match") == "line" for f in self.findings)
            lines += ["", "Static findings " + ("on these call paths" if by_line else
                                                "in the functions where the ranks part") + " (cslint check):"]
            for finding in self.findings:
                ranks = finding.get("ranks") or []
                on = f", on the path of {_ranks_label(ranks)}" if ranks else ""
                here = ", where the paths part" if finding.get("parting") else ""
                lines.append(f"  {display_path(finding['path'])}:{finding['line']}: {finding['code']}{on}{here}")
                lines += textwrap.wrap(finding["message"], width=width, initial_indent="      ",
                                       subsequent_indent="      ", break_on_hyphens=False)
        elif self.findings_checked:
            lines += ["", "cslint check reports nothing on these call paths."]
        elif self.findings_error:
            lines += ["", f"(static findings not linked: {self.findings_error})"]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        where = f" at #{self.seq} of group '{self.group}'" if self.diverged else ""
        return (f"<Diagnosis {self.kind}{where}: {len(self.ranks)} rank file(s) in {self.report_dir}; "
                "print() it for the report>")


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


def _link_findings(diagnosis: Diagnosis, source_filter) -> tuple[bool, str]:
    """Run the static analysis on the files of the ranks' call paths and link its findings.

    A finding on a line of some rank's call path is linked to the ranks whose
    path passes there.  Where no finding sits on any path, the findings in the
    functions where the ranks' paths part are shown instead."""
    try:
        from cslint.api import check_paths
    except Exception as exc:  # noqa: BLE001 - the analyzer is optional here
        return False, f"cslint.api unavailable ({exc})"
    site_frames = {}
    files = set()
    for site in diagnosis.sites:
        frames = [f for f in site.frames if os.path.isfile(f["path"]) and source_filter(f["path"])]
        site_frames[site.rank] = [(os.path.realpath(f["path"]), f["line"], f["function"]) for f in frames]
        files.update(real for real, _, _ in site_frames[site.rank])
    if not files:
        return False, "no source files in the call paths"
    try:
        result = check_paths(sorted(files), report="per-site")
    except Exception as exc:  # noqa: BLE001
        return False, f"static analysis failed: {exc}"
    findings = [(os.path.realpath(f.path), f.to_json()) for f in result.findings]
    parting = diagnosis.parting_depth()

    def link(matches) -> list[dict]:
        """Findings on some rank's frames; innermost first (the closer to where the paths part, the
        likelier the cause)."""
        linked = {}
        for site in diagnosis.sites:
            for real, finding in findings:
                depths = [i for i, frame in enumerate(site_frames[site.rank]) if matches(real, finding, frame)]
                if depths:
                    key = (finding["path"], finding["line"], finding["code"], finding.get("col", 0))
                    entry = linked.setdefault(key, dict(finding, ranks=[], depth=depths[0], parting=False))
                    entry["ranks"].append(site.rank)
                    entry["depth"] = min(entry["depth"], depths[0])
                    entry["parting"] = entry["parting"] or parting in depths
                    site.findings.append(finding)
        return sorted(linked.values(), key=lambda f: (f["depth"], f["path"], f["line"], f["code"]))

    def same_line(real, finding, frame) -> bool:
        return real == frame[0] and finding["line"] == frame[1]

    diagnosis.findings = [dict(f, match="line") for f in link(same_line)]
    if not diagnosis.findings:
        diverging = diagnosis.diverging_functions()

        def same_function(real, finding, frame) -> bool:
            function = (finding.get("function") or "").split(".")[-1]
            return real == frame[0] and function and function == frame[2].split(".")[-1] and \
                frame[2] in diverging.values()

        diagnosis.findings = [dict(f, match="function") for f in link(same_function)]
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
            diagnosis.sites.append(RankSite(state.rank, state.status, entry, state.position, stack=state.stack))
        if link_findings:
            diagnosis.findings_checked, diagnosis.findings_error = _link_findings(
                diagnosis, source_filter or _default_source_filter)
    diagnosis.elapsed = time.monotonic() - started
    return diagnosis


def main(argv=None, prog: str = "python -m cslint.runtime report") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="Merge the sanitizer's per-rank state files and "
                                     "print where the ranks parted.")
    parser.add_argument("report_dir")
    parser.add_argument("--svg", help="write the per-rank timeline here")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--no-findings", action="store_true", help="do not run the static analysis")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.report_dir):
        print(f"{prog}: error: {args.report_dir}: no such directory", file=sys.stderr)
        return 2
    diagnosis = diagnose(args.report_dir, link_findings=not args.no_findings)
    print(json.dumps(diagnosis.to_json(), indent=1) if args.json else diagnosis)
    if args.svg:
        from .timeline import write_svg

        write_svg(diagnosis, args.svg)
        if not args.json:
            print(f"\ntimeline: {args.svg}")
    return 1 if diagnosis.diverged else 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m cslint.runtime.report"))
