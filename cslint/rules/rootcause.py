"""Root-cause reporting: one finding per guard, not one per collective site.

A rank-local condition usually decides several collective call sites: an
early ``return`` skips every collective after it, a branch holds a whole
exchange.  Reported site by site, one cause reads as a dozen findings.  Here
the findings of one guard (same file, function, controlling statement and
rule) become one: the first site in source order carries the finding, its
``sites`` list every site the guard decides, and its message says how many
more there are and where.  ``report = "per-site"`` (``--report per-site``)
keeps one finding per site, which is what ``cslint fix`` rewrites.

A finding whose condition reads a divergence only downstream of another
finding's condition (every flow through a field set inside it: the doubt
:data:`READ_DOWNSTREAM`) is left out here: the other finding is where the
ranks part, and the per-site report still shows it.  That finding lists it
(``downstream``, found through the left-out finding's typed ``upstream``
reference) and its message says how many and where.
"""

from __future__ import annotations

import dataclasses

from ..model import DownstreamRef, Finding, SiteRef

ROOT_CAUSE = "root-cause"
PER_SITE = "per-site"
REPORT_MODES = (ROOT_CAUSE, PER_SITE)

#: the doubt of a finding that reads a divergence reported upstream, and nothing else
READ_DOWNSTREAM = "read-downstream"

#: sites listed by line in a message before "..." takes over
MAX_LINES_IN_MESSAGE = 6


def _guard_key(finding: Finding):
    """What makes findings one root cause, or None for a finding that
    stands alone (no guard: CSL001, CSL002)."""
    if finding.guard is None or not finding.guard_kind:
        return None
    return (finding.path, finding.function, finding.code, finding.guard_kind, finding.guard)


def site_of(finding: Finding) -> SiteRef:
    return SiteRef(finding.line, finding.column, finding.end_line, finding.end_column, finding.callee,
                   finding.collective, finding.group)


def group_by_root_cause(findings: list) -> list:
    """One finding per guard (see the module docstring), findings read
    only downstream left out; other findings unchanged.  The result is in the order of the input's first members."""
    groups: dict = {}
    order: list = []
    folded: list = []
    for finding in findings:
        if finding.confidence is not None and any(d.kind == READ_DOWNSTREAM for d in finding.confidence.doubts):
            folded.append(finding)
            continue
        key = _guard_key(finding)
        if key is None:
            order.append([finding])
            continue
        group = groups.get(key)
        if group is None:
            group = groups[key] = []
            order.append(group)
        group.append(finding)
    return _listing_downstream([members[0] if len(members) == 1 else _merged(members) for members in order], folded)


def _listing_downstream(found: list, folded: list) -> list:
    """``found`` with each finding that a left-out finding's ``upstream``
    names listing it (``downstream``, in path and line order) and saying so
    in its message; a left-out finding whose upstream one is not reported
    (another selection, below the confidence asked for) is listed nowhere."""
    at: dict = {}
    for index, finding in enumerate(found):
        if finding.guard is not None:
            at.setdefault((finding.path, finding.guard.line), []).append(index)
    refs: dict = {}
    for finding in folded:
        upstream = finding.upstream
        candidates = at.get((upstream.path, upstream.guard_line), ()) if upstream is not None else ()
        if not candidates:
            continue
        index = next((i for i in candidates if upstream.line in _lines(found[i])), candidates[0])
        ref = DownstreamRef(finding.path, finding.line, finding.column, finding.code, finding.function,
                            finding.collective, finding.condition)
        listed = refs.setdefault(index, [])
        if ref not in listed:
            listed.append(ref)
    for index, listed in sorted(refs.items()):
        listed.sort(key=lambda ref: (ref.path, ref.line, ref.column, ref.code))
        finding = found[index]
        places = [str(ref.line) if ref.path == finding.path else f"{ref.path}:{ref.line}" for ref in listed]
        places = list(dict.fromkeys(places))
        text = ", ".join(places[:MAX_LINES_IN_MESSAGE]) + (", ..." if len(places) > MAX_LINES_IN_MESSAGE else "")
        noun = "finding reads" if len(listed) == 1 else "findings read"
        message = f"{finding.message}; {len(listed)} more {noun} this divergence only downstream ({text})"
        found[index] = dataclasses.replace(finding, message=message, downstream=list(finding.downstream) + listed)
    return found


def _lines(finding: Finding) -> set:
    return {finding.line} | {site.line for site in finding.sites}


def _merged(members: list) -> Finding:
    members = sorted(members, key=lambda f: (f.line, f.column, f.collective))
    first = members[0]
    sites = []
    for finding in members:
        site = site_of(finding)
        if site not in sites:
            sites.append(site)
    if len(sites) == 1:
        return first
    others = sites[1:]
    numbers = list(dict.fromkeys(site.line for site in others))
    lines = ", ".join(str(line) for line in numbers[:MAX_LINES_IN_MESSAGE])
    if len(numbers) > MAX_LINES_IN_MESSAGE:
        lines += ", ..."
    noun = "site" if len(others) == 1 else "sites"
    where = "line" if len(numbers) == 1 else "lines"
    message = f"{first.message}; the same guard decides {len(others)} more collective call {noun} ({where} {lines})"
    return dataclasses.replace(first, message=message, sites=sites)
