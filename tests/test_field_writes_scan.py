"""What a statement writes into the fields of ``self``
(``fieldwrites.field_writes``) is looked for only in a function the call
scan saw write one (``FunctionScan.scan_calls``' ``may_write_field``: a
store into or a deletion of ``self.attr``, a store into an attribute's
element, a method called on ``self.attr``): a module function and a method
that only reads its fields write none, and their statements are not read
again for writes (issue 13).  A method that writes a field from the rank
still makes the collective it guards a finding."""

import textwrap

from cslint.analysis import transfer
from cslint.api import check_source

MODULE = """
    import torch.distributed as dist


    def scale(x):
        y = x * 2
        y += 1
        return y


    class Worker:
        def configure(self):
            self.active = scale(dist.get_rank()) == 0

        def sync(self, t):
            local = [t]
            if self.active:
                dist.all_reduce(local[0])

        def describe(self, names):
            names.append(self.active)
            return names
"""


def test_only_a_function_that_writes_a_field_is_read_for_field_writes(monkeypatch):
    asked = []
    real = transfer.field_writes

    def noting(flow_transfer, s, flow, fields, field_types):
        asked.append(flow_transfer.info.qualname)
        return real(flow_transfer, s, flow, fields, field_types)

    monkeypatch.setattr(transfer, "field_writes", noting)
    findings = check_source(textwrap.dedent(MODULE)).findings
    assert set(asked) == {"Worker.configure"}
    # the field the rank decides still guards the collective
    assert [(f.code, f.line) for f in findings] == [("CSL101", 18)]
