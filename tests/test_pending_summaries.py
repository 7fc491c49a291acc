"""Demand before extraction: a summarised function is left pending
(cslint/analysis/records.py ``PendingFuncFacts``) and worked out only when
the whole-tree pass reads it, or asks about a field its statements may
write (cslint/analysis/fieldwriters.py); the findings are those of the
eager extraction."""

import ast
import textwrap

from cslint.analysis import facts as facts_module
from cslint.analysis.facts import extract_file_facts, summarised, written_fields
from cslint.analysis.function import FunctionInfo
from cslint.analysis.hazards import find_hazards
from cslint.analysis.program import Program
from cslint.analysis.records import is_pending
from cslint.analysis.scope import ModuleContext
from cslint.analysis.uniformity import UniformityInfo
from cslint.api import check_paths
from cslint.config import Settings
from cslint.engine import workers as workers_module
from cslint.engine.gather import constructed_classes
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

MODULE = textwrap.dedent("""
    import torch.distributed as dist

    def scale(x):
        return x * 2

    def label_of(x):
        return "rank %d" % x

    def unused_helper(x):
        return x - 1

    class Worker:
        def configure(self):
            self.active = scale(dist.get_rank()) == 0

        def sync(self, t):
            if self.active:
                dist.all_reduce(t)

        def describe(self):
            self.label = label_of(dist.get_rank())
            return self.label

        def run(self, t):
            self.configure()
            self.sync(t)

    class Journal:
        def record(self, x):
            self.entries.append(label_of(x))
""")


class _Filler:
    """Works pending summaries out from the infos extraction kept, counting them."""

    def __init__(self, deferred: dict):
        self.deferred = deferred
        self.filled: list = []

    def fill(self, stubs) -> None:
        for stub in stubs:
            if is_pending(stub):
                self.filled.append(stub.qualname)
                stub.settle(summarised(*self.deferred[stub.position]))


def _hazards(lazy: bool):
    deferred = {} if lazy else None
    facts = extract_file_facts("pkg/work.py", MODULE.encode(), Settings(), KNOWLEDGE, module="pkg.work",
                               deferred=deferred)
    filler = _Filler(deferred or {})
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    at_first = [fn.qualname for fn in facts.functions if is_pending(fn)]
    program = Program([facts], KNOWLEDGE)
    program.solve()
    found = [repr(h) for h in find_hazards(UniformityInfo(program))]
    return found, facts, filler, at_first


def test_a_summary_waits_until_the_pass_reads_it_or_a_field_it_may_write():
    found, facts, filler, at_first = _hazards(lazy=True)
    # the functions analysed in depth are extracted at once, every summary waits
    assert at_first == ["scale", "label_of", "unused_helper", "Worker.configure", "Worker.describe",
                        "Journal.record"]
    # the condition reads self.active, which configure may write, and configure's
    # value reads what scale returns: summarised when the demand reaches them;
    # describe when the hazard looks at the methods of sync's class
    assert sorted(filler.filled) == ["Worker.configure", "Worker.describe", "scale"]
    # the journal's entries, and what label_of and unused_helper return, are read by nobody
    assert [fn.qualname for fn in facts.functions if is_pending(fn)] == ["label_of", "unused_helper",
                                                                         "Journal.record"]
    assert found == _hazards(lazy=False)[0]
    assert [h.split("function=", 1)[1].split(",", 1)[0] for h in found] == ["'Worker.sync'"]


def _info(source: str) -> FunctionInfo:
    tree = ast.parse(textwrap.dedent(source))
    ctx = ModuleContext("m.py", "m", tree, KNOWLEDGE, Settings(), False)
    cls = tree.body[0]
    return FunctionInfo(ctx, cls.body[0], f"C.{cls.body[0].name}", "m:C", True, False, {})


def test_the_fields_a_summary_may_write_are_read_off_its_statements():
    def written(body: str) -> set:
        return set(written_fields(_info(f"class C:\n    def f(self, a, k):\n        {body}\n")))

    assert written("return self.x + 1") == set()
    assert written("self.model.forward(a)") == set()  # no mutator: the field keeps its object
    assert written("other.table[k] = 1") == set()  # another object's field
    assert written("self.xs.append(1)") == {"xs"}
    assert written("self.a, (self.b, _) = a") == {"a", "b"}
    assert written("self.table[k] = 1") == {"table"}
    assert written("n = self.counts.setdefault('a', 0)") == {"counts"}
    assert written("del self.cache") == {"cache"}


def test_only_an_assignment_of_a_call_or_a_name_may_type_a_field():
    info = _info("class C:\n    def f(self, a):\n        self.x = make(a)\n        self.y, self.z = a, 1\n"
                 "        self.n = a + 1\n        self.xs.append(a)\n")
    assert written_fields(info) == {"x", "y", "z", "n", "xs"}
    assert info.typed_fields == {"x", "y", "z"}


def test_a_run_finds_what_the_eager_extraction_finds(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "work.py").write_text(MODULE)
    (package / "helpers.py").write_text("def unused(x):\n    return x + 1\n\ndef scale(x):\n    return x * 2\n")
    lazy = check_paths([str(tmp_path)], cache=False, jobs=1)

    def at_once(*args, deferred=None, **kwargs):  # nothing left pending
        return extract_file_facts(*args, **kwargs)

    monkeypatch.setattr(workers_module, "extract_file_facts", at_once)
    eager = check_paths([str(tmp_path)], cache=False, jobs=1)
    assert [f.to_json() for f in lazy.findings] == [f.to_json() for f in eager.findings]
    assert lazy.findings


FIELDS = textwrap.dedent("""
    import torch.distributed as dist

    class Reducer:
        def run(self, t):
            dist.all_reduce(t)

    class Trainer:
        def __init__(self, group):
            self.group = group
            self.todo = []
            self.slots = {}

        def plan(self):
            self.todo.append(dist.get_rank())

        def book(self, key):
            self.slots[key] = (dist.get_rank(), key)

        def rebuild(self):
            self.reducer = Reducer()

        def step(self, t):
            rank, key = self.slots.get("a")
            if rank == 0:
                self.reducer.run(t)
            if self.todo:
                dist.barrier(group=self.group)

    class Unread:
        def note(self, x):
            self.seen.append(x)
""")



def _findings(tmp_path, monkeypatch, source: str, lazy: bool) -> list:
    (tmp_path / "fields.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    if not lazy:
        def at_once(*args, deferred=None, **kwargs):  # nothing left pending
            return extract_file_facts(*args, **kwargs)

        monkeypatch.setattr(workers_module, "extract_file_facts", at_once)
    return [f.to_json() for f in check_paths(["fields.py"], cache=False, jobs=1).findings]


def test_the_questions_about_a_field_work_out_the_pending_summaries_that_may_write_it(tmp_path, monkeypatch):
    # the field of an element stored (plan), of entry positions (book), of a
    # type (rebuild): each question asks the summaries that may write the
    # field, pending or not, and nothing else
    filled: list = []
    real_fill = workers_module.Workers.fill

    def noting_fill(self, stubs):
        filled.extend(stub.qualname for stub in stubs if is_pending(stub))
        return real_fill(self, stubs)

    monkeypatch.setattr(workers_module.Workers, "fill", noting_fill)
    lazy = _findings(tmp_path, monkeypatch, FIELDS, lazy=True)
    assert {"Trainer.plan", "Trainer.book", "Trainer.rebuild"} <= set(filled)
    assert "Unread.note" not in filled
    assert lazy == _findings(tmp_path, monkeypatch, FIELDS, lazy=False)
    # what self.reducer holds is read off rebuild alone (no name-only match for
    # ``run``): the reduction is found; an element stored adds to the list's
    # length alike on every rank: the barrier is not
    assert [(f["code"], f["line"]) for f in lazy] == [("CSL101", 26)]


def _nested_sum(depth: int) -> str:
    # a left-deep chain of additions parses (the parser does not recurse on
    # it) but nests the summary walk past the interpreter's recursion limit
    return "x" + " + 1" * depth


def _findings_with_and_without_the_fact_cache(tmp_path, monkeypatch, source: str):
    (tmp_path / "work.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    cached = check_paths(["work.py"], cache=True, jobs=1)  # eager extraction, written to .cslint_cache/
    lazy = check_paths(["work.py"], cache=False, jobs=1)
    return [f.to_json() for f in cached.findings], [f.to_json() for f in lazy.findings]


def test_a_summary_too_deep_to_walk_gives_the_same_findings_with_or_without_the_cache(tmp_path, monkeypatch):
    # the deep helper reaches no collective and writes no field: left pending
    # without the cache and never read, summarised at once with it; the file
    # was CSL001 with the cache and clean of CSL001 without it
    source = textwrap.dedent(f"""
        import torch.distributed as dist

        class Box:
            def deep(self, x):
                return {_nested_sum(1500)}

        def step(t):
            if dist.get_rank() == 0:
                return
            dist.all_reduce(t)
        """)
    cached, lazy = _findings_with_and_without_the_fact_cache(tmp_path, monkeypatch, source)
    assert cached == lazy
    assert [f["code"] for f in lazy] == ["CSL102"]


def test_a_function_reaching_a_collective_too_deep_to_walk_is_csl001_either_way(tmp_path, monkeypatch):
    source = textwrap.dedent(f"""
        import torch.distributed as dist

        def step(t, x):
            y = {_nested_sum(1500)}
            if dist.get_rank() == 0:
                return y
            dist.all_reduce(t)
        """)
    cached, lazy = _findings_with_and_without_the_fact_cache(tmp_path, monkeypatch, source)
    assert cached == lazy
    assert [f["code"] for f in lazy] == ["CSL001"]


CONSTRUCTING = textwrap.dedent("""
    import torch.distributed as dist
    from pkg import conf

    def settings(rank):
        return conf.Settings.for_model(rank)

    def plan(rank):
        return conf.Plan(rank)

    def layout(rank):
        return plan(rank)

    def step(t):
        rank = dist.get_rank()
        if settings(rank).degree > 1 and layout(rank).ready:
            dist.all_reduce(t)
""")


class _BatchFiller(_Filler):
    """A filler that notes each request's pending functions."""

    def __init__(self, deferred: dict):
        super().__init__(deferred)
        self.requests: list = []

    def fill(self, stubs) -> None:
        self.requests.append([stub.qualname for stub in stubs if is_pending(stub)])
        super().fill(stubs)


def test_the_classes_deep_sites_construct_fill_the_returns_they_follow_a_level_at_a_time():
    deferred: dict = {}
    facts = extract_file_facts("pkg/work.py", CONSTRUCTING.encode(), Settings(), KNOWLEDGE, module="pkg.work",
                               deferred=deferred)
    filler = _BatchFiller(deferred)
    functions: dict = {}
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
        functions.setdefault((fn.module, fn.qualname), []).append(fn)
    conditions = [cond.atoms for fn in facts.functions if fn.deep
                  for variant in fn.variants.values() for site in variant.sites for cond in site.conds]
    made: set = set()
    constructed_classes(conditions, functions, made, set())
    assert made == {"pkg.conf.Settings.for_model", "pkg.conf.Plan"}
    # both helpers the condition calls in one request (in file order), then what one of them returns
    assert filler.requests == [["settings", "layout"], ["plan"]]
