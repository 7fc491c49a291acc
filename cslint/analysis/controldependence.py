"""What decides whether a node of a control-flow graph (:mod:`~cslint.analysis.cfg`)
runs: the nodes reachable from its entry, every node's immediate
post-dominator, and control dependence.

Control dependence follows Ferrante, Ottenstein and Warren: node ``n`` is
control dependent on the edge ``a -> b`` when ``n`` post-dominates ``b`` but
not ``a``.  Iterating it (the closure computed by :func:`control_closure`) is
PARCOACH's iterated post-dominance frontier."""

from __future__ import annotations

from typing import Optional

from .cfg import CFG


def reachable(cfg: CFG) -> set:
    seen = {cfg.entry}
    stack = [cfg.entry]
    while stack:
        n = stack.pop()
        for s, _ in cfg.nodes[n].succs:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def postdominators(cfg: CFG) -> list:
    """Immediate post-dominator of every node (None for EXIT and for nodes
    that cannot reach it).

    Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast
    Dominance Algorithm") on the reverse graph: one immediate post-dominator
    per node and a walk up two chains to intersect them.  Memory is linear in
    the graph; post-dominator *sets* as bit sets took n^2 bits, 1 GB for the
    module-level code of a 4 MB file."""
    n = len(cfg.nodes)
    order = reverse_postorder(cfg, cfg.exit, backwards=True)  # EXIT first
    number = [-1] * n  # position in that order: a dominator comes first
    for position, v in enumerate(order):
        number[v] = position
    ipdom: list = [None] * n
    ipdom[cfg.exit] = cfg.exit
    nodes = cfg.nodes
    changed = True
    while changed:
        changed = False
        for v in order:
            if v == cfg.exit:
                continue
            new = None
            for s, _ in nodes[v].succs:
                if ipdom[s] is None:  # not processed yet, or cannot reach EXIT
                    continue
                if new is None:
                    new = s
                    continue
                a, b = s, new
                while a != b:  # walk up the tree to the common post-dominator
                    while number[a] > number[b]:
                        a = ipdom[a]
                    while number[b] > number[a]:
                        b = ipdom[b]
                new = a
            if new is not None and ipdom[v] != new:
                ipdom[v] = new
                changed = True
    ipdom[cfg.exit] = None
    return ipdom


def reverse_postorder(cfg: CFG, start: int, backwards: bool = False) -> list:
    """The nodes a depth-first walk from ``start`` reaches, in reverse
    post-order: along the edges (``succs``, ``(node, label)`` pairs), or
    against them (``preds``, node ids) where ``backwards``: each node before
    those it leads to, but along an edge back to a loop's head."""
    nodes = cfg.nodes
    seen = {start}
    order = []
    stack = [(start, iter(nodes[start].preds if backwards else nodes[start].succs))]
    while stack:
        v, it = stack[-1]
        advanced = False
        for w in it:
            if not backwards:
                w = w[0]
            if w not in seen:
                seen.add(w)
                stack.append((w, iter(nodes[w].preds if backwards else nodes[w].succs)))
                advanced = True
                break
        if not advanced:
            order.append(v)
            stack.pop()
    order.reverse()
    return order


def control_dependence(cfg: CFG, ipdom: Optional[list] = None) -> dict:
    """node id -> set of (decision node id, edge label) it is directly
    control dependent on."""
    if ipdom is None:
        ipdom = postdominators(cfg)
    cd: dict = {}
    for a in cfg.nodes:
        if len(a.succs) < 2:
            continue
        stop = ipdom[a.id]
        for b, label in a.succs:
            runner = b
            guard = 0
            while runner is not None and runner != stop and guard <= len(cfg.nodes):
                cd.setdefault(runner, set()).add((a.id, label))
                if runner == a.id:
                    break
                runner = ipdom[runner]
                guard += 1
    return cd


def control_closure(cd: dict, node: int) -> list:
    """All decisions a node is (transitively) control dependent on, nearest
    first (breadth-first over the CD relation): the iterated post-dominance
    frontier."""
    out: list = []
    seen = {node}
    frontier = [node]
    while frontier:
        nxt = []
        for n in frontier:
            for dep, label in sorted(cd.get(n, ()), key=lambda x: (x[0], str(x[1]))):
                if dep not in seen:
                    seen.add(dep)
                    out.append((dep, label))
                    nxt.append(dep)
        frontier = nxt
    return out
