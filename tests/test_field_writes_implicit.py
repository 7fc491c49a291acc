"""The implicit flow of an assignment as a field write reads it
(``fieldwrites.field_writes``: without the tests that only decide what is
copied, ``copies.copies_itself``) is worked out only for an assignment that
writes a field: a method's assignments to local names write none, and most
of its statements are such (issue 13).  The field it writes under a test
the rank decides still differs, and the collective it guards is a finding."""

import textwrap

from cslint.analysis import fieldwrites
from cslint.api import check_source

MODULE = """
    import torch.distributed as dist


    class Worker:
        def configure(self, t):
            if dist.get_rank() == 0:
                local = t * 2
                scaled = [local]
                self.active = scaled
            if self.active:
                dist.all_reduce(t)
"""


def test_only_an_assignment_writing_a_field_works_out_its_implicit_flow(monkeypatch):
    asked = []
    real = fieldwrites.copies_itself

    def noting(value, target, imports):
        asked.append(target.lineno)
        return real(value, target, imports)

    monkeypatch.setattr(fieldwrites, "copies_itself", noting)
    findings = check_source(textwrap.dedent(MODULE)).findings
    assert sorted(set(asked)) == [10]
    # the field written where the rank is 0 still decides the collective
    assert [(f.code, f.line) for f in findings] == [("CSL101", 12)]
