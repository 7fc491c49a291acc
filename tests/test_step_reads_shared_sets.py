"""What a step of the whole-tree fixpoint may read (stepreads.table_reads) is
worked out once per atom set: atom sets share parts (one local handed to
several calls, then returned), and a set equal to one read before adds
nothing it did not add then, so it is not read again (issue 13).  The entries are
those of reading every set, conditions included (demand.want reads a step's
entries and its conditions' together)."""

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


def _sync(program):
    return next(fn for fn in program.funcs.values() if fn.qualname == "Worker.sync")


def test_a_set_shared_by_several_calls_and_the_return_is_read_once():
    program = _program()
    sync = _sync(program)
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
    sync = _sync(program)
    conditions: set = set()
    reads = table_reads(program, sync, conditions)
    assert reads == table_reads(program, sync)
    family = program.resolver.family("pkg.work:Worker")
    assert {("field", family, "width"), ("field", family, "group")} <= reads | conditions
