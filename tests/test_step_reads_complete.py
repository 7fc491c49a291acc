"""Every table entry a step of the whole-tree fixpoint reads is among the
entries :func:`~cslint.analysis.stepreads.table_reads` says it may read
(program.solve steps a function again only for a change of those, and skips
a reader whose last step came after the change): a field of an object a
factory built, read through what the construction passes (the factory's own
fields); the fields a call on ``self`` hands its callee
(selfcalls.note_handed); the collectives a call reaches whose result a field
takes under its caller's conditions (Program._collective_span); what a
function of a file read only for its summary returns of what it calls."""

import textwrap

from cslint.analysis.callercontext import reads_no_context
from cslint.analysis.facts import extract_file_facts
from cslint.analysis.program import Program
from cslint.analysis.stepreads import table_reads
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

#: ``Runner`` is stepped before ``Planner`` fills the field its factory reads
RUNNER = textwrap.dedent("""
    import torch.distributed as dist
    from pkg.pick import chosen


    class Sizing:
        def __init__(self, budget):
            self.budget = budget


    class Runner:
        def __init__(self, group):
            self.planner = Planner()
            self.group = group
            self.budget = 0
            self.ready = False

        def prepare(self, t):
            sizing = self.planner.plan(t)
            self.budget = sizing.budget

        def run(self, t):
            if self.budget > 0:
                dist.all_reduce(t)

        def settle(self, t):
            if self.ready:
                self.total = agreed(t)
            self.ready = self.planner.level > 0
            self._flush(t)

        def _slices(self):
            return self.budget + 1

        def refresh(self):
            self.slices = self._slices()

        def step(self, t):
            if leader():
                self.settle(t)
                self.refresh()
            if self.slices > 1:
                dist.all_reduce(t)

        def _flush(self, t):
            if self.ready:
                dist.barrier(group=self.group)

        def pick(self, t):
            self.picked = chosen(t)
            if self.picked:
                dist.all_reduce(t)


    def agreed(t):
        dist.all_reduce(t)
        return t


    def leader():
        return dist.get_rank() == 0


    class Planner:
        def __init__(self):
            self.budget = 0
            self.level = 0

        def plan(self, t):
            return Sizing(budget=self.budget + t)

        def measure(self):
            self.budget = dist.get_rank()
            self.level = dist.get_rank()
""")

#: read only for its summary: nothing in it reaches a collective
PICK = textwrap.dedent("""
    from pkg.runner import leader


    def chosen(t):
        return leader() and t
""")

_TABLES = {"fields": lambda k: ("field", k[0], k[1]), "rets": lambda k: ("ret", k[0]),
           "params": lambda k: ("param", k[0]), "ctx": lambda k: ("ctx", k[0]), "reach": lambda k: ("reach", k[0])}


class _Recorded(dict):
    """A table that notes, while a step is under way, the entries read."""

    def __init__(self, table, entry, reads):
        super().__init__(table)
        self.entry, self.reads = entry, reads

    def get(self, key, default=None):
        if self.reads.step is not None:
            self.reads.found.setdefault(self.reads.step.key, set()).add(self.entry(key))
        return super().get(key, default)


class _Reads:
    step = None

    def __init__(self):
        self.found = {}


def _solved_with_reads():
    files = [extract_file_facts("pkg/runner.py", RUNNER.encode(), Settings(), KNOWLEDGE, module="pkg.runner")]
    callees = (extract_file_facts("pkg/pick.py", PICK.encode(), Settings(), KNOWLEDGE, module="pkg.pick",
                                  raising=frozenset({"chosen"})),)
    program = Program(files, KNOWLEDGE, callee_files=callees)
    reads = _Reads()
    for name, entry in _TABLES.items():
        setattr(program, name, _Recorded(getattr(program, name), entry, reads))
    step = program._step

    def noted(fn, v, mode):
        reads.step = fn
        try:
            return step(fn, v, mode)
        finally:
            reads.step = None

    program._step = noted
    program.solve()
    return program, reads.found


def _missed(program, found) -> dict:
    out = {}
    for key, entries in found.items():
        fn = program.funcs[key]
        missed = {entry for entry in entries - table_reads(program, fn)
                  # what it writes: its own returns and reach, a callee's parameters it passes to
                  if not (entry[0] in ("ret", "reach") and entry[1] == fn.key)
                  and not (entry[0] == "param" and entry[1] != fn.key)
                  and not (entry[0] == "ctx" and reads_no_context(fn))}
        if missed:
            out[fn.qualname] = sorted(missed)
    return out


def test_every_entry_a_step_reads_is_a_read_of_its_step():
    program, found = _solved_with_reads()
    assert {program.funcs[key].qualname for key in found} >= {"Runner.prepare", "Runner.settle", "Runner.pick"}
    missed = _missed(program, found)
    assert missed == {}


def test_the_factory_construction_reads_the_factory_s_field():
    program, _found = _solved_with_reads()
    prepare = next(fn for fn in program.funcs.values() if fn.qualname == "Runner.prepare")
    assert ("field", program.resolver.family("pkg.runner:Planner"), "budget") in table_reads(program, prepare)
