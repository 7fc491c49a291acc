"""CFG, post-dominance and control dependence on the shapes that matter."""

import ast
import textwrap

from cslint.analysis.cfg import build_cfg
from cslint.analysis.controldependence import (
    control_closure, control_dependence, postdominators, reachable, reverse_postorder,
)


def _graph(source):
    func = ast.parse(textwrap.dedent(source)).body[0]
    cfg = build_cfg(func)
    return func, cfg, control_dependence(cfg)


def _node(cfg, func, text):
    """The CFG node of the statement whose source is ``text``."""
    for node in ast.walk(func):
        if isinstance(node, ast.stmt) and ast.unparse(node).split("\n")[0].strip() == text:
            found = cfg.node_of(node)
            assert found is not None, text
            return found
    raise AssertionError(f"no statement {text!r}")


def _deps(cfg, cd, node):
    return {(ast.unparse(cfg.test_of.get(d, cfg.nodes[d].stmt)).split("\n")[0], label)
            for d, label in cd.get(node, ())}


def test_if_else_and_join():
    func, cfg, cd = _graph("""
        def f(a):
            if a:
                x()
            else:
                y()
            z()
    """)
    assert _deps(cfg, cd, _node(cfg, func, "x()")) == {("if a:", True)}
    assert _deps(cfg, cd, _node(cfg, func, "y()")) == {("if a:", False)}
    assert _deps(cfg, cd, _node(cfg, func, "z()")) == set()


def test_early_return_controls_everything_after():
    func, cfg, cd = _graph("""
        def f(a):
            if a:
                return
            z()
    """)
    assert _deps(cfg, cd, _node(cfg, func, "z()")) == {("if a:", False)}


def test_loop_body_break_and_continue():
    func, cfg, cd = _graph("""
        def f(items, c, d):
            for i in items:
                if c:
                    continue
                body()
                if d:
                    break
                tail()
            after()
    """)
    body = _node(cfg, func, "body()")
    assert ("if c:", False) in _deps(cfg, cd, body)
    tail = _node(cfg, func, "tail()")
    assert ("if d:", False) in _deps(cfg, cd, tail)
    closure = {ast.unparse(cfg.test_of[d]).split("\n")[0] for d, _ in control_closure(cd, tail)}
    assert {"if c:", "if d:", "for i in items:"} <= closure
    assert _deps(cfg, cd, _node(cfg, func, "after()")) == set()


def test_while_true_event_loop_has_post_dominators():
    func, cfg, cd = _graph("""
        def loop(self):
            while True:
                fetch()
                if not self.queue:
                    continue
                step()
    """)
    ipdom = postdominators(cfg)
    step = _node(cfg, func, "step()")
    assert ipdom[step] is not None
    assert ("if not self.queue:", False) in _deps(cfg, cd, step)
    assert not any(text.startswith("if") for text, _ in _deps(cfg, cd, _node(cfg, func, "fetch()")))


def test_try_handler_that_swallows_creates_exception_edges():
    func, cfg, cd = _graph("""
        def f():
            try:
                work()
                coll()
            except OSError:
                recover()
            after()
    """)
    coll = _node(cfg, func, "coll()")
    work = _node(cfg, func, "work()")
    assert any(label == "raise" for _, label in cfg.nodes[work].succs)
    assert (work, None) in cd.get(coll, ())
    recover = _node(cfg, func, "recover()")
    assert (work, "raise") in cd.get(recover, ())
    assert _deps(cfg, cd, _node(cfg, func, "after()")) == set()


def test_reraising_handler_adds_no_divergence():
    func, cfg, cd = _graph("""
        def f():
            try:
                work()
                coll()
            except OSError:
                log()
                raise
    """)
    assert cd.get(_node(cfg, func, "coll()"), set()) == set()


def test_finally_runs_on_the_normal_path():
    func, cfg, cd = _graph("""
        def f(a):
            try:
                work()
            finally:
                cleanup()
            after()
    """)
    assert cfg.finally_owner.get(_node(cfg, func, "cleanup()")) is not None
    assert _deps(cfg, cd, _node(cfg, func, "after()")) == set()


def test_match_cases_and_assert():
    func, cfg, cd = _graph("""
        def f(cmd, ok):
            match cmd:
                case "a":
                    a()
                case _:
                    b()
            assert ok
            c()
            try:
                assert ok
                d()
            except AssertionError:
                pass
    """)
    a_deps = cd.get(_node(cfg, func, "a()"))
    assert a_deps and all(label is True for _, label in a_deps)
    # an assert outside a handled try is an invariant, not a rank-local exit
    assert not any(cfg.nodes[dep].kind == "assert" for dep, _ in cd.get(_node(cfg, func, "c()"), ()))
    assert any(cfg.nodes[dep].kind == "assert" for dep, _ in cd.get(_node(cfg, func, "d()"), ()))


def test_mode_folding_drops_infeasible_branch():
    source = textwrap.dedent("""
        def f(self):
            if self.enable_attention_dp:
                coll()
            after()
    """)
    func = ast.parse(source).body[0]
    off = build_cfg(func, lambda test: False if ast.unparse(test) == "self.enable_attention_dp" else None)

    coll = off.node_of(func.body[0].body[0])
    assert coll not in reachable(off)


def test_reverse_postorder_both_ways():
    """One walk serves the dataflow (from the entry along the edges) and the
    post-dominators (from the exit against them): each node comes before
    those it leads to but along an edge back to a loop's head, and a node
    the walk cannot reach is left out."""
    func, cfg, _cd = _graph("""
        def f(xs):
            for x in xs:
                if x:
                    continue
                work(x)
            done()
            return
            dead()
    """)
    forward = reverse_postorder(cfg, cfg.entry)
    assert forward[0] == cfg.entry and len(set(forward)) == len(forward)
    position = {v: i for i, v in enumerate(forward)}
    loop_heads = {v for v in forward if cfg.nodes[v].kind == "loop"}
    for v in forward:
        for w, _label in cfg.nodes[v].succs:
            assert position[w] > position[v] or w in loop_heads, (v, w)
    backward = reverse_postorder(cfg, cfg.exit, backwards=True)
    assert backward[0] == cfg.exit
    dead = _node(cfg, func, "dead()")
    assert dead in backward and dead not in forward  # (nothing reaches a statement after ``return``)


def test_a_handler_that_does_not_swallow_has_no_edge_in():
    func, cfg, _cd = _graph("""
        def f():
            try:
                work()
            except OSError:
                raise
            except ValueError:
                recover()
    """)
    handlers = {ast.unparse(handler.type): node for node, handler in cfg.test_of.items()
                if isinstance(handler, ast.ExceptHandler)}
    assert cfg.nodes[handlers["OSError"]].preds == [] and cfg.nodes[handlers["ValueError"]].preds != []
