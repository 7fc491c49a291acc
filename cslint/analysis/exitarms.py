"""The arm of a loop's test that leaves the loop on every path out of it.

In ``while True: ...; if done: flush(); break`` every path out of the loop
passes through the flush: it post-dominates the test, so control dependence
(:func:`cfg.control_dependence`) never counts the test as deciding it.  Yet
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
            back = coming_back[header] = _coming_back(cfg, header)
        if a.id not in back:
            continue  # no arm goes on: both leave
        for b, label in a.succs:
            if b in back or not _in_loop(loop_of, b, header):
                continue
            arm = _loop_nodes_from(cfg, b, header)
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


def _coming_back(cfg: CFG, header: int) -> set:
    """The body nodes of the loop at ``header`` from which a path leads back to it."""
    loop_of, nodes = cfg.loop_of, cfg.nodes
    seen = set()
    stack = [header]
    while stack:
        n = stack.pop()
        for p in nodes[n].preds:
            if p not in seen and p != header and _in_loop(loop_of, p, header):
                seen.add(p)
                stack.append(p)
    return seen


def _loop_nodes_from(cfg: CFG, start: int, header: int) -> set:
    """The body nodes of the loop at ``header`` reachable from ``start`` inside it."""
    loop_of, nodes = cfg.loop_of, cfg.nodes
    seen = {start}
    stack = [start]
    while stack:
        n = stack.pop()
        for s, _ in nodes[n].succs:
            if s not in seen and s != header and _in_loop(loop_of, s, header):
                seen.add(s)
                stack.append(s)
    return seen
