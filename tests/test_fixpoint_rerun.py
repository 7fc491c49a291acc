"""A round of the whole-tree fixpoint steps a reader of a changed table
entry again only where its last step may have read the entry before the
change (cslint/analysis/program.py, Program.solve): a reader stepped after
the writer, in the same round, saw what the writer wrote already."""

import collections
import textwrap

from cslint.analysis.facts import extract_file_facts
from cslint.analysis.hazards import find_hazards
from cslint.analysis.program import Program
from cslint.analysis.uniformity import UniformityInfo
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

#: ``leader`` is stepped before ``gate_late`` and after ``gate_early`` (the
#: program's order is the order of definition)
MODULE = textwrap.dedent("""
    import torch.distributed as dist

    def gate_early(t):
        if leader():
            dist.all_reduce(t)

    def leader():
        return dist.get_rank() == 0

    def gate_late(t):
        if leader():
            dist.barrier()
""")


def _solved_counting_steps():
    files = [extract_file_facts("pkg/gates.py", MODULE.encode(), Settings(), KNOWLEDGE, module="pkg.gates")]
    program = Program(files, KNOWLEDGE)
    steps = collections.Counter()
    step = program._step

    def counted(fn, v, mode):
        steps[fn.qualname] += 1
        return step(fn, v, mode)

    program._step = counted
    program.solve()
    return program, steps


def test_a_reader_stepped_after_the_change_is_not_stepped_again():
    _program, steps = _solved_counting_steps()
    assert steps["gate_late"] == 1  # it read what ``leader`` returns after ``leader``'s step wrote it


def test_a_reader_stepped_before_the_change_is_stepped_again():
    _program, steps = _solved_counting_steps()
    assert steps["gate_early"] == 2  # its first step read ``leader``'s returns before they were written


def test_both_readers_find_their_hazard():
    program, _steps = _solved_counting_steps()
    found = sorted((h.function, h.collective) for h in find_hazards(UniformityInfo(program)))
    assert found == [("gate_early", "all_reduce"), ("gate_late", "barrier")]
