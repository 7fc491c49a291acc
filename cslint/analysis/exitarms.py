"""The arm of a loop's test that leaves the loop on every path out of it.

In ``while True: ...; if done: flush(); break`` every path out of the loop
passes through the flush: it post-dominates the test, so control dependence
(:func:`controldependence.control_dependence`) never counts the test as deciding it.  Yet
the ranks that take the arm run it on this pass while the others go on to
the next one; guards.py adds the test for the arm's sites."""

from __future__ import annotations

from .cfg import CFG, TEST


def exit_arm_deciders(cfg: CFG, ipdom: list) -> dict:
    """node id -> [(test node, edge label, loop header)]: for an ``if`` inside
    a loop whose one arm always leaves the loop (it can no longer come back to
    the header) while the other goes on, the nodes of the leaving arm that
    post-dominate the test.  Plain control dependence never counts the test
    as deciding them (every path out of the loop passes through them, as in
    ``while True: ... if done: flush(); break``), yet the ranks that take the
    arm run it on this pass while the others start the next one."""
    nodes, loop_of = cfg.nodes, cfg.loop_of
    coming_back: dict = {}  # loop header -> the nodes of its body that can reach it again
    found: dict = {}
    for a in nodes:
        header = loop_of.get(a.id)
        if a.kind != TEST or header is None or len(a.succs) < 2:
            continue
        back = coming_back.get(header)
        if back is None:
            back = coming_back[header] = _linked(cfg, header, header, forward=False)
        if a.id not in back:
            continue  # no arm goes on: both leave
        for b, label in a.succs:
            if b in back or not _in_loop(loop_of, b, header):
                continue
            arm = _linked(cfg, b, header, forward=True) | {b}
            runner = ipdom[a.id]
            while runner is not None and runner in arm:
                found.setdefault(runner, []).append((a.id, label, header))
                runner = ipdom[runner]
    return found


def _in_loop(loop_of: dict, n: int, header: int) -> bool:
    """Whether node ``n`` was built inside the body of the loop at ``header`` (nested loops included)."""
    inner = loop_of.get(n)
    while inner is not None and inner != header:
        inner = loop_of.get(inner)
    return inner == header


def _linked(cfg: CFG, start: int, header: int, forward: bool) -> set:
    """The body nodes of the loop at ``header`` that a path inside the body
    links to ``start``: those it leads to from ``start`` (``forward``), or
    those from which it leads to ``start`` (``start`` only where a path
    comes back to it; the header never)."""
    loop_of, nodes = cfg.loop_of, cfg.nodes
    seen = set()
    stack = [start]
    while stack:
        n = stack.pop()
        for m in (s for s, _ in nodes[n].succs) if forward else nodes[n].preds:
            if m not in seen and m != header and _in_loop(loop_of, m, header):
                seen.add(m)
                stack.append(m)
    return seen
