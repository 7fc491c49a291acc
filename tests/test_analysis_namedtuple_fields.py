"""A class derived from ``typing.NamedTuple`` is built as a dataclass is
(issue 14, §2.1/§2.6): ``State(batch=..., hidden=...)`` binds each argument
to its own field, so reading ``state.batch`` reads what was passed for the
batch, not the hidden states a stage holds only where it is not the last
one, and a rank passed for the batch reaches the read, which it did not
while the call ran no function of the tree.  It is still a tuple of its
fields: unpacking or indexing it reads what it was built with."""

import textwrap

from cslint.api import check_source

STAGES = """
    from typing import NamedTuple

    import torch.distributed as dist


    class StepState(NamedTuple):
        batch: int
        hidden: object = None


    class Runner:
        def __init__(self, group):
            self.is_last_stage = dist.get_rank() == dist.get_world_size() - 1
            self.group = group
            self.state = None

        def execute(self, batch):
            hidden = None
            if self.is_last_stage:
                hidden = [batch]
            self.state = StepState({arguments})

        def sample(self, tokens):
            if {read} > 0:
                dist.broadcast(tokens, src=0, group=self.group)
"""


def _found(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _line(source, text):
    return next(i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if text in line)


def _stages(arguments, read):
    return STAGES.format(arguments=arguments, read=read)


def test_a_field_reads_what_was_passed_for_it_not_the_other_fields():
    for arguments in ("batch=batch, hidden=hidden", "batch, hidden"):
        source = _stages(arguments, "self.state.batch")
        assert (_line(source, "dist.broadcast"), "CSL101") not in _found(source), arguments


def test_the_field_passed_a_stage_dependent_value_differs():
    source = _stages("batch=batch, hidden=hidden", "len(self.state.hidden or ())")
    assert (_line(source, "dist.broadcast"), "CSL101") in _found(source)


def test_a_rank_passed_for_a_field_reaches_its_read():
    for arguments in ("batch=dist.get_rank()", "dist.get_rank()"):
        source = _stages(arguments, "self.state.batch")
        assert (_line(source, "dist.broadcast"), "CSL101") in _found(source), arguments


def test_unpacking_or_indexing_reads_what_it_was_built_with():
    for read in ("self.state[0]", "list(self.state)[0]"):
        source = _stages("dist.get_rank(), hidden", read)
        assert (_line(source, "dist.broadcast"), "CSL101") in _found(source), read
