"""A tensor factory whose written-out size has a zero among its dimensions
fails only as its operands say (issue 14 §2.2, uniform-exception).

``torch.empty(0, dtype=torch.int64)`` holds no elements: making it takes
none of this rank's memory, on whatever device, so a handler around it is
taken alike on every rank given the same operands
(``raises._holds_no_elements``).  A factory of a size the code computes, or
of a written-out size with no zero, may exhaust this node's memory and
stays a local failure.  Each VALID shape sits beside the INVALID one that
must still be reported."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch
    import torch.distributed as dist


    def empty_marker(group):                                   # VALID
        try:
            marker = torch.empty(0, dtype=torch.int64)
        except Exception:
            return None
        dist.barrier(group=group)
        return marker


    def empty_rows(group):                                     # VALID
        try:
            rows = torch.zeros((0, 4), device="cuda")
        except Exception:
            return None
        dist.barrier(group=group)
        return rows


    def empty_filled(group):                                   # VALID
        try:
            filled = torch.full((0,), -1.0)
        except Exception:
            return None
        dist.barrier(group=group)
        return filled


    def sized(count, group):                                   # INVALID: its size is the code's
        try:
            buffer = torch.empty(count, dtype=torch.int64)
        except Exception:
            return None
        dist.barrier(group=group)
        return buffer


    def partly_sized(count, group):                            # INVALID: a dimension not written out
        try:
            buffer = torch.zeros((0, count))
        except Exception:
            return None
        dist.barrier(group=group)
        return buffer


    def written_out(group):                                    # INVALID: no zero among its dimensions
        try:
            buffer = torch.ones(4096, 4096, device="cuda")
        except Exception:
            return None
        dist.barrier(group=group)
        return buffer
"""


def test_a_factory_of_no_elements_fails_only_by_its_operands():
    findings = check_source(textwrap.dedent(SOURCE), report="per-site").findings
    assert sorted(f.function for f in findings) == ["partly_sized", "sized", "written_out"], \
        [(f.function, f.line, f.message) for f in findings]
