"""What a step of the whole-tree fixpoint may read (stepreads.table_reads) is
worked out once per atom set: atom sets share parts (one local handed to
several calls, then returned), and a set equal to one read before adds
nothing it did not add then, so it is not read again (issue 13).  The entries are
those of reading every set, conditions included (demand.want reads a step's
entries and its conditions' together)."""

import copy
import textwrap

from cslint.analysis.facts import extract_file_facts
from cslint.analysis.program import Program
from cslint.analysis.stepreads import table_reads
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

SOURCE = textwrap.dedent("""
    import torch.distributed as dist


    class Worker:
        def __init__(self, group):
            self.group = group
            self.width = 4
            self.rows = []

        def sync(self, t):
            width = self.width
            self.pad(t, width)
            self.scale(t, width)
            self.clip(t, width)
            if width > 2:
                dist.all_reduce(t, group=self.group)
            return width

        def fold(self, t):
            scaled = self.scale(t, self.width)
            self.clip(t, scaled)
            dist.all_reduce(t, group=self.group)
            return scaled

        def pad(self, t, width):
            return t

        def scale(self, t, width):
            return t

        def clip(self, t, width):
            return t
""")


def _program() -> Program:
    files = [extract_file_facts("pkg/work.py", SOURCE.encode(), Settings(), KNOWLEDGE, module="pkg.work")]
    return Program(files, KNOWLEDGE)


def _function(program, qualname: str = "Worker.sync"):
    return next(fn for fn in program.funcs.values() if fn.qualname == qualname)


def test_a_set_shared_by_several_calls_and_the_return_is_read_once():
    program = _program()
    sync = _function(program)
    family = program.resolver.family
    asked = []

    def counted(class_key):
        asked.append(class_key)
        return family(class_key)

    program.resolver.family = counted
    conditions: set = set()
    reads = table_reads(program, sync, conditions)
    assert ("field", family("pkg.work:Worker"), "width") in reads
    # ``width`` read from the field: one set handed to all three calls, an equal one returned and tested,
    # read once, beside the group passed: two fields read (reading every set each time made seven)
    assert len(asked) == 2


def test_the_entries_read_are_those_of_every_set_read():
    program = _program()
    sync = _function(program)
    conditions: set = set()
    reads = table_reads(program, sync, conditions)
    assert reads == table_reads(program, sync)
    family = program.resolver.family("pkg.work:Worker")
    assert {("field", family, "width"), ("field", family, "group")} <= reads | conditions


def test_an_atom_equal_to_one_read_before_is_not_read_again():
    # atoms built apart (in another set, unpickled from another worker) may be equal and not the same object
    program = _program()
    fold = _function(program, "Worker.fold")
    variant = next(iter(fold.variants.values()))
    (result,) = [atom for atom in variant.returns if atom.tag == "R"]
    passed = next(site for site in variant.sites if site.ref is not None and site.ref.name == "clip")
    assert result in passed.args[1]
    param = next(arg for arg in passed.args if any(atom.tag == "P" for atom in arg))
    variant.returns = frozenset(copy.deepcopy(tuple(variant.returns))) | param  # another set, an equal call
    assert not any(atom is result for atom in variant.returns)
    resolve = program.resolver.resolve
    asked = []

    def counted(ref):
        asked.append(ref)
        return resolve(ref)

    program.resolver.resolve = counted
    reads = table_reads(program, fold)
    assert ("ret", _function(program, "Worker.scale").key) in reads
    # the call site's own reference, and the two equal results read once
    assert asked.count(result.ref) == 2
