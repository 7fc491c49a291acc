"""Demand before extraction: a summarised function that writes no field is
left pending (cslint/analysis/records.py ``PendingFuncFacts``) and worked
out only when the whole-tree pass reads it; the findings are those of the
eager extraction."""

import ast
import textwrap

from cslint.analysis import facts as facts_module
from cslint.analysis.facts import extract_file_facts, summarised, writes_no_field
from cslint.analysis.function import FunctionInfo
from cslint.analysis.hazards import find_hazards
from cslint.analysis.program import Program
from cslint.analysis.records import is_pending
from cslint.analysis.scope import ModuleContext
from cslint.analysis.uniformity import UniformityInfo
from cslint.api import check_paths
from cslint.config import Settings
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


def test_a_summary_writing_no_field_waits_until_the_pass_reads_it():
    found, facts, filler, at_first = _hazards(lazy=True)
    # the field writers and the functions analysed in depth are extracted at once
    assert at_first == ["scale", "label_of", "unused_helper"]
    # the condition reads what scale returns: summarised when the demand reaches it
    assert filler.filled == ["scale"]
    # what label_of and unused_helper return is read by nobody: never summarised
    assert [fn.qualname for fn in facts.functions if is_pending(fn)] == ["label_of", "unused_helper"]
    assert found == _hazards(lazy=False)[0]
    assert [h.split("function=", 1)[1].split(",", 1)[0] for h in found] == ["'Worker.sync'"]


def test_a_filled_summary_reads_its_syntax_parts_once(monkeypatch):
    # its facts are worked out twice (pending at once, whole once filled):
    # what they read off the syntax alone is worked out the first time only
    asked: list = []
    real = facts_module.side_bindings

    def counting(info):
        asked.append(info.qualname)
        return real(info)

    monkeypatch.setattr(facts_module, "side_bindings", counting)
    found, facts, filler, _at_first = _hazards(lazy=True)
    assert filler.filled == ["scale"] and asked.count("scale") == 1
    # ... and the facts filled are those the eager extraction gives
    eager = {fn.qualname: fn for fn in _hazards(lazy=False)[1].functions}
    assert [fn for fn in facts.functions if fn.qualname == "scale"] == [eager["scale"]]


def _info(source: str) -> FunctionInfo:
    tree = ast.parse(textwrap.dedent(source))
    ctx = ModuleContext("m.py", "m", tree, KNOWLEDGE, Settings(), False)
    cls = tree.body[0]
    return FunctionInfo(ctx, cls.body[0], f"C.{cls.body[0].name}", "m:C", True, {})


def test_what_may_write_a_field_is_never_left_pending():
    assert writes_no_field(_info("class C:\n    def f(self):\n        return self.x + 1\n"))
    assert not writes_no_field(_info("class C:\n    def f(self):\n        self.xs.append(1)\n"))
    assert not writes_no_field(_info("class C:\n    def f(self, a):\n        self.a, (self.b, _) = a\n"))
    assert not writes_no_field(_info("class C:\n    def f(self, k):\n        self.table[k] = 1\n"))
    assert not writes_no_field(_info("class C:\n    def f(self):\n        n = self.counts.setdefault('a', 0)\n"))


def test_a_run_finds_what_the_eager_extraction_finds(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "work.py").write_text(MODULE)
    (package / "helpers.py").write_text("def unused(x):\n    return x + 1\n\ndef scale(x):\n    return x * 2\n")
    lazy = check_paths([str(tmp_path)], cache=False, jobs=1)
    monkeypatch.setattr(facts_module, "writes_no_field", lambda info: False)  # nothing left pending
    eager = check_paths([str(tmp_path)], cache=False, jobs=1)
    assert [f.to_json() for f in lazy.findings] == [f.to_json() for f in eager.findings]
    assert lazy.findings


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


class _OneAtATimeFiller(_BatchFiller):
    """A filler asked ahead whose answers come back one at a time (the first pending stub by name)."""

    def prefetch(self, stubs) -> None:
        self.requests.append(("ahead", [stub.qualname for stub in stubs if is_pending(stub)]))

    def settle_ready(self, stubs) -> None:
        waiting = sorted((stub for stub in stubs if is_pending(stub)), key=lambda stub: stub.qualname)
        self.requests.append(("ready", [stub.qualname for stub in waiting]))
        _Filler.fill(self, waiting[:1])


def test_the_returns_of_a_constructing_helper_are_followed_as_its_summary_comes_back():
    """The classes the deep sites construct do not wait for a whole level of
    helpers: the returns of the one back first are followed (and what they
    call asked ahead) while the other is still out; the classes found are
    those found a level at a time."""
    deferred: dict = {}
    facts = extract_file_facts("pkg/work.py", CONSTRUCTING.encode(), Settings(), KNOWLEDGE, module="pkg.work",
                               deferred=deferred)
    filler = _OneAtATimeFiller(deferred)
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
    # layout back first: what it returns (plan) is asked for while settings is still out
    assert filler.requests[:4] == [("ahead", ["settings", "layout"]), ("ready", ["layout", "settings"]),
                                   ("ahead", ["plan"]), ("ready", ["plan", "settings"])]


RETURNING = textwrap.dedent("""
    import torch.distributed as dist

    class Mailbox:
        def size(self):
            return 4

    def open_mailbox() -> Mailbox:
        box = Mailbox()
        return box

    def make_mailbox():
        return Mailbox()

    def describe(x):
        return open_mailbox().size() + make_mailbox().size() + x

    def relay(t, src_rank):
        dist.broadcast(t, src=src_rank)

    def step(t):
        if dist.get_rank() == 0:
            relay(t, 0)
""")


def test_what_an_annotated_function_returns_is_typed_without_its_summary():
    # typing ``open_mailbox().size()`` (the callers of every call, read for
    # ``relay``'s rank parameter) asks both factories what they return: the
    # annotation says it before any walk; ``make_mailbox``'s ``return`` is
    # typed as its walk types it
    deferred: dict = {}
    facts = extract_file_facts("pkg/mail.py", RETURNING.encode(), Settings(), KNOWLEDGE, module="pkg.mail",
                               deferred=deferred)
    filler = _Filler(deferred)
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    assert [fn.qualname for fn in facts.functions if is_pending(fn)] == [
        "Mailbox.size", "open_mailbox", "make_mailbox", "describe"]
    program = Program([facts], KNOWLEDGE)
    program.solve()
    found = [repr(h) for h in find_hazards(UniformityInfo(program))]
    assert filler.filled == ["make_mailbox"]
    eager = extract_file_facts("pkg/mail.py", RETURNING.encode(), Settings(), KNOWLEDGE, module="pkg.mail")
    program = Program([eager], KNOWLEDGE)
    program.solve()
    assert found == [repr(h) for h in find_hazards(UniformityInfo(program))]
    assert len(found) == 1


CARRYING = textwrap.dedent("""
    import torch.distributed as dist

    class Worker:
        def label(self, x):
            return "step %d" % x

        def sync(self, t):
            if dist.get_rank() == 0:
                dist.all_reduce(t)
""")


def test_a_summary_is_not_worked_out_to_look_for_a_broadcast_in_it():
    # a branch hazard in a method looks through the other methods of its
    # class for a broadcast carrying the condition's object
    # (UniformityInfo.schedule_carrier): a summarised method issues no
    # collective, so nothing of its summary is read there
    deferred: dict = {}
    facts = extract_file_facts("pkg/carry.py", CARRYING.encode(), Settings(), KNOWLEDGE, module="pkg.carry",
                               deferred=deferred)
    filler = _Filler(deferred)
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    assert [fn.qualname for fn in facts.functions if is_pending(fn)] == ["Worker.label"]
    program = Program([facts], KNOWLEDGE)
    program.solve()
    found = [repr(h) for h in find_hazards(UniformityInfo(program))]
    assert filler.filled == []
    eager = extract_file_facts("pkg/carry.py", CARRYING.encode(), Settings(), KNOWLEDGE, module="pkg.carry")
    program = Program([eager], KNOWLEDGE)
    program.solve()
    assert found == [repr(h) for h in find_hazards(UniformityInfo(program))]
    assert len(found) == 1
