"""The whole-tree fixpoint steps only the functions whose tables the
hazards may read (cslint/analysis/demand.py), and finds what stepping every
function finds."""

import textwrap

from cslint.analysis.facts import extract_file_facts, summarised
from cslint.analysis.hazards import find_hazards
from cslint.analysis.program import Program
from cslint.analysis.stepreads import stepped
from cslint.analysis.records import is_pending
from cslint.analysis.uniformity import UniformityInfo
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

MODULE = textwrap.dedent("""
    import torch.distributed as dist

    def scale(x):
        return x * 2

    def label_of(x):
        return "rank %d" % x

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

    def lonely(t):
        if dist.get_rank() == 0:
            dist.barrier()
""")

def _program() -> Program:
    files = [extract_file_facts("pkg/work.py", MODULE.encode(), Settings(), KNOWLEDGE, module="pkg.work")]
    return Program(files, KNOWLEDGE)


def _hazards(program: Program) -> list:
    program.solve()
    return [repr(h) for h in find_hazards(UniformityInfo(program))]


def test_the_fixpoint_steps_what_the_hazards_read():
    program = _program()
    names = {fn.qualname for fn in stepped(program)}
    # the condition reads self.active: its writer, and the return of what it calls
    assert {"Worker.configure", "scale"} <= names
    # run passes sync its calling context; run's own reach is what sync reaches
    assert {"Worker.run", "Worker.sync"} <= names
    # what describe writes and returns, and what label_of returns, nothing reads
    assert not names & {"Worker.describe", "label_of"}
    assert "lonely" in names  # a function with conditions is stepped (what its step reads is read)


def test_stepping_the_demanded_functions_finds_what_stepping_all_finds():
    found = _hazards(_program())
    everything = _program()
    everything.demanded = list(everything.funcs.values())
    assert [h.split("function=", 1)[1].split(",", 1)[0] for h in found] == ["'Worker.sync'", "'lonely'"]
    assert "`self.active` is assigned from it in `Worker.configure`" in found[0]
    assert found == _hazards(everything)


RELAYING = textwrap.dedent("""
    import torch.distributed as dist

    def scale(x):
        return x * 2

    def doubled_default():
        return scale(2)

    class Worker:
        def configure(self):
            self.active = scale(dist.get_rank()) == 0

        def sync(self, t):
            if self.active:
                dist.all_reduce(t)
""")


class _Filler:
    """Works pending summaries out from the infos their extraction kept."""

    def __init__(self, deferred: dict):
        self.deferred = deferred

    def fill(self, stubs) -> None:
        for stub in stubs:
            if is_pending(stub):
                stub.settle(summarised(*self.deferred[stub.position]))


def _stepped(lazy: bool) -> list:
    deferred = {} if lazy else None
    facts = extract_file_facts("pkg/relay.py", RELAYING.encode(), Settings(), KNOWLEDGE, module="pkg.relay",
                               deferred=deferred)
    filler = _Filler(deferred or {})
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    return [fn.qualname for fn in stepped(Program([facts], KNOWLEDGE))]


def test_a_pending_summary_is_stepped_as_the_same_summary_extracted_at_once():
    # ``doubled_default`` passes ``scale`` a constant: its call reads as one
    # it passes arguments to before its walk (the superset the demand asks
    # about while it is pending), and its summary keeps no such site, so its
    # step writes nothing read: stepped neither way, whether the fact cache
    # made its summary at once or the pass worked it out when asked
    eager, lazy = _stepped(lazy=False), _stepped(lazy=True)
    assert "scale" in eager and "doubled_default" not in eager
    assert lazy == eager
