"""The fields of ``self`` a method stores a worked-on value into
(``rootside.derived_stores``: ``self.rank = rank // tp`` is no rank's id of
the group) are read from the assignments the call scan notes on its one walk
of the body (``FunctionScan.scan_calls``: the statements owning a
``self.attr`` store), not from a second walk of every statement list of the
method (issue 13): every extracted function has had its call scan, so there
is no walk to fall back on.  The same fields come out as from that walk, and
a queue made where a rank worked on is 0 is still reported
(tests/test_analysis_root_side.py)."""

import ast
import textwrap

from cslint.analysis import rootside
from cslint.analysis.astwalk import statement_lists
from cslint.analysis.function import FunctionInfo
from cslint.analysis.scope import ModuleContext
from cslint.config import Settings
from cslint.presets import load_presets
from tests.test_analysis_root_side import _ROOT_ONLY, _server

KNOWLEDGE = load_presets(["torch_distributed"])

METHOD = """
    class Server:
        def setup(self, rank, tp, xs, flag, store):
            self.rank = rank // tp
            self.plain = rank
            self.asked = store.get_rank(tp)
            self.nested = store.get(len(xs))
            first = self.picked = xs[0] if flag else None
            self.typed: int = rank % tp
            self.declared: int
            self.count += rank
            self.left, self.right = rank, tp
            self.made = [0 for self.looped in xs]
            try:
                with store.lock():
                    self.held = rank + 1
            except OSError:
                self.failed = tp * 2
            for x in xs:
                if x:
                    self.last = x.value()
                else:
                    self.other = (x, rank)
            match flag:
                case True:
                    self.matched = -rank

            def inner():
                self.hidden = rank + tp

            class Inner:
                def method(self):
                    self.also_hidden = rank - 1

            return first, inner, Inner
"""


def _method(source: str) -> FunctionInfo:
    tree = ast.parse(textwrap.dedent(source))
    ctx = ModuleContext("m.py", "m", tree, KNOWLEDGE, Settings(), False)
    cls = tree.body[0]
    func = cls.body[0]
    return FunctionInfo(ctx, func, f"{cls.name}.{func.name}", ("m", cls.name), True, {})


def test_the_derived_stores_are_read_from_the_call_scan_alone():
    info = _method(METHOD)
    info.scan_calls()
    assert rootside.derived_stores(info) == ("failed", "held", "made", "matched", "nested", "other", "picked",
                                             "rank", "typed")
    info.self_assignments = []  # (as a scan that met no assignment to a field of ``self`` notes it)
    assert rootside.derived_stores(info) == ()


def test_the_scan_gives_the_fields_a_walk_of_every_statement_list_gives():
    scanned = _method(METHOD)
    scanned.scan_calls()
    walked = _method(METHOD)  # never scanned: handed every statement of its statement lists instead
    assert walked.self_assignments is None
    walked.self_assignments = [stmt for stmts in statement_lists(walked.body) for stmt in stmts]
    assert rootside.derived_stores(scanned) == rootside.derived_stores(walked)
    plain = _method("class C:\n    def f(self, rank):\n        self.rank = rank\n        return self.rank\n")
    plain.scan_calls()
    assert plain.self_assignments and rootside.derived_stores(plain) == ()


def test_a_queue_made_where_a_rank_worked_on_is_0_is_still_reported(tmp_path):
    # rank // 2 is 0 on two ranks (the negative of tests/test_analysis_root_side.py)
    lines = _server(tmp_path, _ROOT_ONLY, ("self.rank = rank", "self.rank = rank // 2"))
    assert lines == [55, 58, 59, 60, 62]


def test_a_rank_worked_on_and_stored_through_a_tuple_target_is_derived():
    info = _method("""
    class Server:
        def setup(self, rank, tp, pair):
            self.rank, self.spare = rank // 2, 0
            (self.block, _) = divmod(rank, tp)
            [self.first, *self.rest] = pair
            self.left, (self.inner, self.outer) = rank, (tp, rank - 1)
            self.kept, self.size = rank, tp
    """)
    info.scan_calls()
    assert rootside.derived_stores(info) == ("block", "first", "outer", "rank", "rest")


def test_a_queue_made_where_a_rank_worked_on_through_a_tuple_is_0_is_reported(tmp_path):
    # rank // 2 (or divmod's quotient) is 0 on two ranks: the loop runs on both, unpaired
    for stored in ("self.rank, self.spare = rank // 2, 0", "(self.rank, _) = divmod(rank, 2)"):
        sub = tmp_path / str(len(stored))
        sub.mkdir()
        assert _server(sub, _ROOT_ONLY, ("self.rank = rank", stored)) == [55, 58, 59, 60, 62]


def test_a_rank_id_stored_through_a_tuple_of_plain_reads_stays_paired(tmp_path):
    assert _server(tmp_path, _ROOT_ONLY, ("self.rank = rank", "self.rank, self.spare = rank, 0")) == []
