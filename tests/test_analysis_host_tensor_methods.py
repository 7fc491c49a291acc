"""A method that reads a tensor made on the host (``packed.tolist()`` after
an all-reduce of a flag tensor built with ``torch.tensor``) runs on the host
alone: whether it fails follows the tensor and its arguments, the same on
every rank given the same, so a caller's handler of it is no rank-local
exit (``raises.host_tensor_method``).

The shape: a background loop receives each ticket by broadcast, agrees a
hit count with a MIN all-reduce of a host tensor, reads the result back as
a list, and returns from the loop in a handler.  Each valid shape is paired
with one where the read can fail on one rank only (the tensor lives on this
rank's device, or the method moves it there), which must still be reported."""

import textwrap

from cslint.api import check_source

_PREFETCH = """
    import torch
    import torch.distributed as dist


    class HostPool:
        def __init__(self, size):
            self.released = 0
            self.size = size

        def free(self, pages):
            self.released += len(pages)


    class Prefetcher:
        def __init__(self, group, size):
            self.group = group
            self.pool = HostPool(size)

        def _agree_hits(self, hits):
            packed = torch.tensor(hits + [0], dtype=torch.int{device})
            dist.all_reduce(packed, op=dist.ReduceOp.MIN, group=self.group)
            reduced = packed.{read}()
            return int(reduced[0])

        def serve(self, tickets):
            is_source = self.group.rank() == 0
            while True:
                objs = [tickets.get() if is_source else None]
                try:
                    dist.broadcast_object_list(objs, src=0, group=self.group)
                    pages = objs[0]
                    count = self._agree_hits(pages)
                    self.pool.free(pages[count:])
                except Exception:
                    return
                finally:
                    if is_source:
                        tickets.task_done()
"""


def _findings(device="", read="tolist"):
    source = textwrap.dedent(_PREFETCH.replace("{device}", device).replace("{read}", read))
    return [(f.code, f.line, f.source) for f in check_source(source).findings]


def test_reading_an_agreed_host_tensor_back_fails_alike_everywhere():
    assert _findings() == []
    assert _findings(read="sum") == []
    assert _findings(device=', device="cpu"') == []


def test_reading_a_tensor_on_this_ranks_device_may_fail_there_alone():
    assert _findings(device=', device="cuda"') == [("CSL104", 31, "packed.tolist")]


def test_moving_a_host_tensor_to_the_device_may_fail_there_alone():
    assert _findings(read="cuda") == [("CSL104", 31, "packed.cuda")]


def test_a_name_also_bound_to_something_else_is_not_a_host_tensor():
    source = _PREFETCH.replace("            reduced = packed.{read}()",
                               "            packed = hits.view() if hits else packed\n"
                               "            reduced = packed.{read}()")
    findings = [(f.code, f.source) for f in check_source(textwrap.dedent(
        source.replace("{device}", "").replace("{read}", "tolist"))).findings]
    assert findings == [("CSL104", "packed.tolist")]


def _with_match(case_body):
    source = _PREFETCH.replace("            reduced = packed.{read}()",
                               "            match hits:\n"
                               "                case [packed]:\n"
                               "                    pass\n"
                               "                case _:\n"
                               f"                    {case_body}\n"
                               "            reduced = packed.{read}()")
    return [(f.code, f.source) for f in check_source(textwrap.dedent(
        source.replace("{device}", "").replace("{read}", "tolist"))).findings]


def test_a_name_a_case_pattern_binds_is_not_a_host_tensor():
    # ``case [packed]`` binds an element of the list, maybe on this rank's device; a later case's own
    # host tensor (a block read after the pattern's) once made it one
    assert _with_match("packed = torch.tensor([0])") == [("CSL104", "packed.tolist")]
    assert _with_match("pass") == [("CSL104", "packed.tolist")]
