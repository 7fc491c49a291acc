"""Per-rank timeline of one group's collectives as a hand-written SVG (no plotting library).

One lane per rank, one column per sequence number of the group: the column
of collective #n holds what each rank did as its n-th collective on that
group, so ranks in step fill a column with the same box.  A box shows a
letter for its call path (same call path, same letter and colour on every
rank; the legend spells the path out) and the collective's op.  Where the
ranks part, a red line marks the column, the boxes there are outlined in
red, a collective a rank is stuck in is hatched, and a rank that never got
there says so.  Without a divergence the picture shows the group's last
collectives: the ranks kept in step to the end.

The group shown is the one where the ranks parted, else the busiest one.
"""

from __future__ import annotations

import html
import os
import zlib

from .fingerprint import user_frames

BOX_W, BOX_H, GAP = 104, 42, 8
LANE_H = BOX_H + 14
LEFT, TOP = 112, 70
LEGEND_LINE = 17
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"


def _colour(key: str) -> str:
    hue = zlib.crc32(key.encode()) % 360
    return f"hsl({hue},60%,80%)"


def _path_key(entry: dict) -> str:
    frames = user_frames(entry.get("callpath", []))
    return entry.get("op", "?") + "|" + "|".join(f"{os.path.basename(f['path'])}:{f['line']}" for f in frames[:3])


def _frame_text(frame: dict) -> str:
    return f"{frame['function'].split('.')[-1]} ({os.path.basename(frame['path'])}:{frame['line']})"


def _path_texts(entries: dict[str, dict]) -> dict[str, str]:
    """Legend text per call path.  Where paths of one op share their innermost frames (a wrapper such as
    `_allgather_model_parallel_status`), the text starts at the first frame that tells them apart."""
    frames = {key: user_frames(entry.get("callpath", [])) for key, entry in entries.items()}
    out = {}
    for key, entry in entries.items():
        mine = [(f["path"], f["line"]) for f in frames[key]]
        shared = 0
        for other, entry2 in entries.items():
            if other == key or entry2.get("op") != entry.get("op"):
                continue
            theirs = [(f["path"], f["line"]) for f in frames[other]]
            n = 0
            while n < min(len(mine), len(theirs)) and mine[n] == theirs[n]:
                n += 1
            shared = max(shared, n)
        op = entry.get("op", "?")
        if not mine:
            out[key] = op
        elif 0 < shared < len(mine):
            chain = " \u2190 ".join(_frame_text(f) for f in frames[key][shared:shared + 2])
            out[key] = f"{op} in {chain}, via {frames[key][0]['function'].split('.')[-1]}"
        else:
            out[key] = f"{op} in " + " \u2190 ".join(_frame_text(f) for f in frames[key][:3])
    return out


def _letters(n: int) -> list[str]:
    """A, B, ..., Z, AA, AB, ...: spreadsheet column names."""
    out = []
    for index in range(n):
        label, rest = "", index
        while rest >= 0:
            label = chr(ord("A") + rest % 26) + label
            rest = rest // 26 - 1
        out.append(label)
    return out


def _group_to_show(diagnosis) -> str | None:
    if diagnosis.diverged and diagnosis.group:
        return diagnosis.group
    counts: dict[str, int] = {}
    for state in diagnosis.ranks:
        for entry in state.entries():
            counts[entry["group"]] = counts.get(entry["group"], 0) + 1
    members: dict[str, set] = {}
    for state in diagnosis.ranks:
        for entry in state.entries():
            members.setdefault(entry["group"], set()).add(state.rank)
    # the group most ranks share, then the busiest: a one-rank group says nothing about lockstep
    return max(counts, key=lambda g: (len(members[g]), counts[g], g)) if counts else None


def render_svg(diagnosis, *, columns: int = 8, before: int = 5) -> str:
    """The SVG text for `diagnosis` (a `cslint.runtime.report.Diagnosis`)."""
    group = _group_to_show(diagnosis)
    lanes = []
    for state in diagnosis.ranks:
        lanes.append((state, {e["seq"]: e for e in state.entries() if e["group"] == group}))
    seqs = sorted({seq for _, by_seq in lanes for seq in by_seq})
    if diagnosis.diverged and diagnosis.seq is not None:
        split = diagnosis.seq
        shown = [s for s in seqs if s < split][-before:]
        shown += [split] + [s for s in seqs if s > split][: max(0, columns - len(shown) - 1)]
    else:
        split = None
        shown = seqs[-columns:]
    # call paths in order of first appearance, lettered
    first: dict[str, dict] = {}
    for seq in shown:
        for _, by_seq in lanes:
            entry = by_seq.get(seq)
            if entry is not None:
                first.setdefault(_path_key(entry), entry)
    keys = list(first)
    texts = _path_texts(first)
    letter = dict(zip(keys, _letters(len(keys))))
    # wide enough for the boxes, the subtitle and the legend (about 6.3 px per character at 11 px)
    legend_w = 56 + int(6.3 * max((len(t) for t in texts.values()), default=0))
    width = min(max(LEFT + max(len(shown), 1) * (BOX_W + GAP) + 24, 640, legend_w, 600), 1100)
    lanes_bottom = TOP + len(lanes) * LANE_H
    legend_top = lanes_bottom + 34
    height = legend_top + (len(keys) + 1) * LEGEND_LINE + 16
    out = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="12">'),
        ('<defs><pattern id="hatch" width="7" height="7" patternUnits="userSpaceOnUse" '
         'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="7" stroke="#b00" stroke-width="2"/>'
         '</pattern></defs>'),
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    if diagnosis.diverged:
        what = {"mismatch": "different collectives", "missing": "some ranks never got there",
                "timeout": "stalled"}.get(diagnosis.kind, diagnosis.kind)
        title = f"Ranks part at collective #{diagnosis.seq} of group {group} ({what})"
    elif shown:
        title = f"Ranks in step: the last {len(shown)} collectives of group {group}"
    else:
        title = "No collective recorded"
    out.append(f'<text x="12" y="24" font-size="15" font-weight="bold">{html.escape(title)}</text>')
    out.append('<text x="12" y="42" fill="#555" font-size="11">one lane per rank, one column per collective '
               'of the group (its sequence number); a letter is a call path</text>')
    for col, seq in enumerate(shown):
        x = LEFT + col * (BOX_W + GAP)
        colour = "#b00" if seq == split else "#555"
        out.append(f'<text x="{x + BOX_W / 2}" y="{TOP - 8}" text-anchor="middle" fill="{colour}">#{seq}</text>')
    if split is not None and split in shown:
        x = LEFT + shown.index(split) * (BOX_W + GAP) - GAP / 2
        out.append(f'<line x1="{x}" y1="{TOP - 22}" x2="{x}" y2="{lanes_bottom}" stroke="#b00" stroke-width="2" '
                   'stroke-dasharray="6,4"/>')
    for lane_no, (state, by_seq) in enumerate(lanes):
        y = TOP + lane_no * LANE_H
        out.append(f'<text x="12" y="{y + 17}" font-weight="bold">rank {state.rank}</text>')
        out.append(f'<text x="12" y="{y + 32}" fill="#555" font-size="10">'
                   f'{html.escape(SHORT_STATUS.get(state.status, state.status))}</text>')
        for col, seq in enumerate(shown):
            x = LEFT + col * (BOX_W + GAP)
            entry = by_seq.get(seq)
            if entry is None:
                if seq == split:
                    out.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="none" '
                               'stroke="#b00" stroke-width="1.5" stroke-dasharray="4,3"/>')
                    out.append(f'<text x="{x + BOX_W / 2}" y="{y + 26}" text-anchor="middle" fill="#b00" '
                               'font-size="11">never got here</text>')
                continue
            key = _path_key(entry)
            at_split = seq == split
            stuck = bool(entry.get("stuck"))
            stroke, sw = ("#b00", 2.5) if at_split or stuck else ("#777", 1)
            out.append(f'<g><title>{html.escape(_tooltip(entry))}</title>')
            out.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="{_colour(key)}" '
                       f'stroke="{stroke}" stroke-width="{sw}"/>')
            if stuck:
                out.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="url(#hatch)" '
                           'fill-opacity="0.3"/>')
            out.append(f'<text x="{x + 8}" y="{y + 18}" font-size="14" font-weight="bold">'
                       f'{html.escape(letter[key])}</text>')
            op = entry.get("op", "?")
            out.append(f'<text x="{x + 8}" y="{y + 34}" font-size="10.5">{html.escape(_fit(op, 17))}</text>')
            if stuck:
                out.append(f'<text x="{x + BOX_W - 6}" y="{y + 16}" text-anchor="end" font-size="9" fill="#b00">'
                           'waiting</text>')
            out.append('</g>')
    out.append(f'<text x="12" y="{legend_top}" font-weight="bold">Call paths</text>')
    for i, key in enumerate(keys):
        y = legend_top + (i + 1) * LEGEND_LINE
        out.append(f'<rect x="12" y="{y - 12}" width="24" height="15" rx="3" fill="{_colour(key)}" stroke="#777"/>')
        out.append(f'<text x="24" y="{y}" text-anchor="middle" font-size="11" font-weight="bold">'
                   f'{html.escape(letter[key])}</text>')
        out.append(f'<text x="44" y="{y}" font-size="11">{html.escape(_fit(texts[key], (width - 56) // 6))}</text>')
    foot = legend_top + (len(keys) + 1) * LEGEND_LINE + 4
    if diagnosis.diverged:
        note = "red: the collective where the ranks part; hatched: the rank is still waiting in it"
        out.append(f'<text x="12" y="{foot}" fill="#555" font-size="10">{note}</text>')
    out.append('</svg>')
    return "\n".join(out)


SHORT_STATUS = {"mismatch": "check failed", "timeout": "stalled", "peer": "stopped", "finished": "finished"}


def _fit(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "\u2026"


def _tooltip(entry: dict) -> str:
    frames = user_frames(entry.get("callpath", []))
    chain = " <- ".join(f"{f['function']} {os.path.basename(f['path'])}:{f['line']}" for f in frames)
    return f"{entry['op']} group={entry['group']} seq={entry['seq']} payload={entry.get('payload')}\n{chain}"


def write_svg(diagnosis, path: str) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render_svg(diagnosis))
    return path
