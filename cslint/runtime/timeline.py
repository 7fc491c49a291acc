"""Per-rank timeline of collectives as a hand-written SVG (no plotting library).

One lane per rank; one box per collective in the order the rank issued them,
coloured by call path (the same site has the same colour on every rank).  The
column of the diverging collective is marked, the boxes at the divergence are
outlined in red, and a collective a rank is stuck in is hatched.
"""

from __future__ import annotations

import html
import zlib

BOX_W, BOX_H, GAP = 96, 34, 6
LANE_H = BOX_H + 18
LEFT, TOP = 92, 58


def _colour(key: str) -> str:
    hue = zlib.crc32(key.encode()) % 360
    return f"hsl({hue},62%,78%)"


def _label(entry: dict) -> tuple[str, str]:
    path = entry.get("callpath") or []
    func = path[0]["function"].split(".")[-1] if path else entry.get("op", "?")
    caller = path[1]["function"].split(".")[-1] if len(path) > 1 else ""
    return func, f"{entry['op']} #{entry['seq']}" + (f" < {caller}" if caller else "")


def render_svg(diagnosis, *, max_columns: int = 14) -> str:
    """The SVG text for `diagnosis` (a `cslint.runtime.report.Diagnosis`)."""
    lanes = []
    for state in diagnosis.ranks:
        entries = state.entries()
        cut = len(entries)
        for i, entry in enumerate(entries):
            if entry["group"] == diagnosis.group and entry["seq"] == diagnosis.seq:
                cut = i
                break
        lanes.append((state, entries, cut))
    # align every lane so that its diverging collective (or its end) sits in one column
    before = max((min(cut, max_columns - 4) for _, _, cut in lanes), default=0)
    columns = before + 4
    width = LEFT + columns * (BOX_W + GAP) + 20
    height = TOP + len(lanes) * LANE_H + 40
    out = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">'),
        ('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
         'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#c00" stroke-width="2"/>'
         '</pattern></defs>'),
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    title = "collective timeline per rank"
    if diagnosis.diverged:
        title += f" - ranks part at group '{diagnosis.group}' collective #{diagnosis.seq} ({diagnosis.kind})"
    out.append(f'<text x="10" y="20" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    split_x = LEFT + before * (BOX_W + GAP) - GAP / 2
    if diagnosis.diverged:
        out.append(f'<line x1="{split_x}" y1="{TOP - 16}" x2="{split_x}" y2="{TOP + len(lanes) * LANE_H}" '
                   'stroke="#c00" stroke-width="2" stroke-dasharray="5,3"/>')
        out.append(f'<text x="{split_x + 4}" y="{TOP - 20}" fill="#c00">ranks part here</text>')
    for lane_no, (state, entries, cut) in enumerate(lanes):
        y = TOP + lane_no * LANE_H
        out.append(f'<text x="8" y="{y + BOX_H / 2 + 4}" font-weight="bold">rank {state.rank}</text>')
        out.append(f'<text x="8" y="{y + BOX_H / 2 + 16}" fill="#555">{html.escape(state.status)}</text>')
        start = max(0, cut - before)
        shown = entries[start: start + columns - (before - (cut - start))]
        offset = before - (cut - start)
        for i, entry in enumerate(shown):
            x = LEFT + (offset + i) * (BOX_W + GAP)
            func, sub = _label(entry)
            key = f"{entry['op']}|{entry['group']}|{entry.get('digest')}"
            at_split = entry["group"] == diagnosis.group and entry["seq"] == diagnosis.seq
            stroke = "#c00" if (at_split or entry.get("stuck")) else "#666"
            sw = 2.5 if (at_split or entry.get("stuck")) else 1
            out.append(f'<g><title>{html.escape(_tooltip(entry))}</title>')
            out.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="4" '
                       f'fill="{_colour(key)}" stroke="{stroke}" stroke-width="{sw}"/>')
            if entry.get("stuck"):
                out.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="4" '
                           'fill="url(#hatch)" fill-opacity="0.35"/>')
            out.append(f'<text x="{x + 4}" y="{y + 14}">{html.escape(func[:17])}</text>')
            out.append(f'<text x="{x + 4}" y="{y + 27}" fill="#333" font-size="8">{html.escape(sub[:24])}</text>')
            out.append('</g>')
        if cut >= len(entries) and diagnosis.diverged:
            x = LEFT + before * (BOX_W + GAP)
            out.append(f'<text x="{x + 4}" y="{y + BOX_H / 2 + 4}" fill="#c00">(never reached)</text>')
    legend_y = TOP + len(lanes) * LANE_H + 18
    out.append(f'<text x="10" y="{legend_y}" fill="#555">same colour = same call path; red outline = '
               'collective at the divergence; hatched = stuck waiting</text>')
    out.append('</svg>')
    return "\n".join(out)


def _tooltip(entry: dict) -> str:
    chain = " <- ".join(f"{f['function']} {f['path']}:{f['line']}" for f in entry.get("callpath", []))
    return f"{entry['op']} group={entry['group']} seq={entry['seq']} payload={entry.get('payload')}\n{chain}"


def write_svg(diagnosis, path: str) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render_svg(diagnosis))
    return path
