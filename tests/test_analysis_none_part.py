"""Whether a call's result is None is a part of its own (issue 14): a helper
that hands back this rank's rows of a tensor or None, None chosen by a
setting alone, returns a value whose None-ness is agreed while its contents
and shape are this rank's; a caller's ``out is not None`` reads that part
alone, also through a helper that hands back one of its parameters (whether
that is None is whether the caller's argument is).  None chosen by the rank,
or a returned value that may itself be None on some ranks, still parts the
ranks."""

import textwrap

from cslint.api import check_source

HELPER = """
    import torch
    import torch.distributed as dist


    class Exchange:
        def __init__(self, group, enabled):
            self.group = group
            self.rank = dist.get_rank(group)
            self.world = dist.get_world_size(group)
            self.enabled = enabled
            self.checked = set()
            self.cache = {{}}
            self.verify = set()

        def pipelined(self, x, key, attend_into=None):
            if {declined}:
                return None
            rows = x.shape[0]
            into = attend_into is not None and attend_into(self.rank)
            if into:
                full = torch.empty(self.world * rows, x.shape[1])
                merged = full[self.rank * rows:(self.rank + 1) * rows]
            else:
                merged = {other}
            if key not in self.checked:
                self.checked.add(key)
                return merged.contiguous()
            if key in self.verify:
                reference = {reference}
                return self._first_sight(merged, reference)
            return merged

        def _first_sight(self, merged, reference):
            same = torch.tensor([int(torch.equal(merged, reference))])
            dist.all_reduce(same, op=dist.ReduceOp.MIN, group=self.group)
            if same.item():
                return merged
            return reference


    def attention(ex, x, key):
        out = ex.pipelined(x, key)
        if out is not None:
            return out
        dist.all_reduce(x, group=ex.group)
        return x


    def attention_inline(ex, x, key):
        out = ex.pipelined(x, key)
        return out if out is not None else fallback(ex, x)


    def fallback(ex, x):
        dist.all_reduce(x, group=ex.group)
        return x
"""

AGREED = dict(declined="not self.enabled", other="torch.empty(rows, x.shape[1])",
              reference="torch.zeros(rows, x.shape[1])")


def _found(**parts):
    source = textwrap.dedent(HELPER.format(**parts))
    return sorted({(f.line, f.code) for f in check_source(source, report="per-site").findings})


def test_none_chosen_by_a_setting_is_agreed_whatever_the_value_holds():
    assert _found(**AGREED) == []


def test_none_chosen_by_the_rank_still_parts_the_ranks():
    found = _found(**{**AGREED, "declined": "self.rank == 0"})
    assert {code for _, code in found} >= {"CSL102", "CSL101"}


def test_a_returned_value_that_may_be_none_on_some_ranks_still_parts_the_ranks():
    # ``self.cache.get(...)`` is None where this rank cached nothing
    found = _found(**{**AGREED, "other": "self.cache.get(self.rank)"})
    assert {code for _, code in found} >= {"CSL102", "CSL101"}


def test_a_parameter_handed_back_is_none_where_the_callers_argument_is():
    # ``_first_sight`` hands back one of its parameters: never None where the
    # caller passes two tensors, which is all its None part reads
    assert _found(**AGREED) == []
    found = _found(**{**AGREED, "reference": "self.cache.get(self.rank)"})
    assert {code for _, code in found} >= {"CSL102", "CSL101"}


REBOUND = HELPER + """

    def attention_core(ex, x, key, result, compressed):
        if not compressed:
            out = ex.pipelined(x, key)
            {between}
            if out is not None:
                return out
        if compressed:
            out, lse = result
        else:
            out = result
        dist.all_reduce(out, group=ex.group)
        return out
"""


def _found_rebound(between="pass", **parts):
    source = textwrap.dedent(REBOUND.format(between=between, **{**AGREED, **parts}))
    return sorted({(f.line, f.code) for f in check_source(source, report="per-site").findings
                   if f.function == "attention_core"})


def test_a_name_bound_otherwise_elsewhere_reads_the_none_part_of_the_binding_reaching_the_test():
    # ``out`` is also unpacked on another path; the one binding reaching the
    # test is the helper's result, and reads or calls between change which
    # object it is no more than nothing does
    assert _found_rebound() == []
    assert _found_rebound(between="ex.checked.add(out.shape)") == []


def test_a_binding_between_or_none_chosen_by_the_rank_still_parts_the_ranks():
    assert {code for _, code in _found_rebound(declined="self.rank == 0")} == {"CSL102"}
    # a second binding reaching the test: its own structure, as before
    rebound = _found_rebound(between="out = ex.cache.get(ex.rank) if key else out")
    assert {code for _, code in rebound} == {"CSL102"}


LOOPED = HELPER + """

    def attention_retried(ex, x, key, tries):
        out = ex.pipelined(x, key)
        for _ in range(tries):
            if out is not None:
                return out
            out = ex.cache.get(ex.rank)
        dist.all_reduce(x, group=ex.group)
        return x
"""


def test_a_binding_later_in_a_loop_reaches_its_test_on_the_next_pass():
    source = textwrap.dedent(LOOPED.format(**AGREED))
    found = {f.code for f in check_source(source, report="per-site").findings if f.function == "attention_retried"}
    assert "CSL102" in found or "CSL101" in found

