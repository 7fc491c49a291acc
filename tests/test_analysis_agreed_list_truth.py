"""The truth of a list a callee writes out (issue 14, values made uniform by
a collective).

A cache MIN-all-reduces how many of its pending offloads have completed on
every rank, asks its linker (a class of another module) for that many
results, ``[self.pop_result() for _ in range(count)]``, and all-reduces the
results only where the list it got is not empty.  Each result is this rank's
own (a local check of its storage), but the list is as long as the agreed
count on every rank of the group, and a list's truth is its length: the
test agrees.  A callee every ``return`` of which writes out a list
(``FuncFacts.returns_lists``) hands back a list, so the truth of its result
is its own structure read as a number (``callrefs.TRUTH_PART``), where the
tested value is a local bound to the call's result alone and only read
(``ownstructure.changeable_names``).

Each VALID shape sits beside the INVALID near-misses that must stay
reported: a count that is not agreed, or agreed over another group than the
collective's; a list changed after the call (an append through the name,
through another name bound to it, by a callee handed it; an element
deleted; the name bound again); a callee that may return a number, filters
what it returns, or is overridden by a subclass that returns something
else; an element of the list tested instead of the list."""

import textwrap

import pytest

from cslint.api import check_paths

LINKER = """
    import os
    import time

    import torch.distributed as dist


    class Linker:
        def __init__(self, deadline):
            self.results = []
            self.deadline = deadline

        def poll(self):
            # an offload completes on each rank in its own time; its result is this rank's own
            if os.path.exists(f"/tmp/offload.{len(self.results)}"):
                self.results.append(time.monotonic() < self.deadline)

        def pending(self):
            return len(self.results)

        def drain(self, group):
            # every rank waits for the others before it drops what is left
            dist.barrier(group=group)
            self.results.clear()

        def pop_result(self):
            return self.results.pop(0)

        def take(self, count):
            return [self.pop_result() for _ in range(count)]

        def take_or_none(self, count):
            if count == 0:
                return 0
            return [self.pop_result() for _ in range(count)]

        def take_done(self, count):
            return [ok for ok in self.results[:count] if ok]

"""

#: a subclass whose take returns this rank's successes alone
LOCAL_LINKER = """


    class LocalLinker(Linker):
        def take(self, count):
            return [ok for ok in self.results if ok]
"""

CACHE = """
    import time

    import torch
    import torch.distributed as dist

    from linker import Linker


    def fill(values):
        if time.monotonic() > 1.0:
            values.append(True)


    class Cache:
        def __init__(self, tp_group, dp_group, deadline):
            self.linker = Linker(deadline)
            self.tp_group = tp_group
            self.dp_group = dp_group

        def _agreed_count(self):
            counts = torch.tensor([self.linker.pending()], dtype=torch.int)
            dist.all_reduce(counts, op=dist.ReduceOp.MIN, group=self.tp_group)
            return int(counts.item())

        def commit(self, taken):
            flags = torch.tensor(taken, dtype=torch.int)
            dist.all_reduce(flags, op=dist.ReduceOp.MIN, group=self.tp_group)

        {method}
"""

#: name -> (the method, whether it must be reported)
SHAPES = {
    # VALID: the real shape, a local bound to the call, only read (tested, then turned into a tensor)
    "bound_and_read": (True, """
        def check(self):
            count = self._agreed_count()
            taken = self.linker.take(count)
            if taken:
                flags = torch.tensor(taken, dtype=torch.int)
                dist.all_reduce(flags, op=dist.ReduceOp.MIN, group=self.tp_group)
    """),
    # VALID: `not` of it, with an early exit
    "negated_exit": (True, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            if not taken:
                return
            dist.barrier(group=self.tp_group)
    """),
    # INVALID: the count is this rank's own
    "count_not_agreed": (False, """
        def check(self):
            taken = self.linker.take(self.linker.pending())
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: agreed over the tensor-parallel group, the collective runs over the data-parallel one
    "agreed_over_another_group": (False, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            if taken:
                dist.barrier(group=self.dp_group)
    """),
    # INVALID: a rank appends to the list after the call
    "appended": (False, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            if time.monotonic() > 1.0:
                taken.append(True)
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: appended through another name bound to the same list
    "appended_through_an_alias": (False, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            alias = taken
            if time.monotonic() > 1.0:
                alias.append(True)
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: a callee handed the list appends to it
    "appended_by_a_callee": (False, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            fill(taken)
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: an element deleted on some ranks
    "element_deleted": (False, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            if time.monotonic() > 1.0:
                del taken[0]
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: the name bound again to a list of its own
    "bound_again": (False, """
        def check(self):
            taken = self.linker.take(self._agreed_count())
            if time.monotonic() > 1.0:
                taken = []
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: the callee may return a number, whose truth is its value
    "callee_may_return_a_number": (False, """
        def check(self):
            taken = self.linker.take_or_none(self._agreed_count())
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: the callee filters by each rank's own result
    "callee_filters": (False, """
        def check(self):
            taken = self.linker.take_done(self._agreed_count())
            if taken:
                dist.barrier(group=self.tp_group)
    """),
    # INVALID: an element of the list tested, not the list
    "an_element_tested": (False, """
        def check(self):
            for ok in self.linker.take(self._agreed_count()):
                if ok:
                    dist.barrier(group=self.tp_group)
    """),
}


def _reported(tmp_path, method: str, linker: str = LINKER) -> list:
    (tmp_path / "linker.py").write_text(textwrap.dedent(linker))
    cache = textwrap.dedent(CACHE).replace("{method}", textwrap.indent(textwrap.dedent(method).strip(), "    ")[4:])
    (tmp_path / "cache.py").write_text(cache)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted({f.function for f in findings})


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_truth_of_a_list_of_agreed_length(tmp_path, name):
    quiet, method = SHAPES[name]
    reported = "Cache.check" in _reported(tmp_path, method)
    assert reported is not quiet


@pytest.mark.xfail(strict=True, reason="a call tested where it is made is read whole: the operands of an and/or "
                                       "keep their plain values (guards.py), which a condition's atoms must match")
def test_the_call_tested_where_it_is_made(tmp_path):
    method = """
        def check(self):
            if not self.linker.take(self._agreed_count()):
                return
            dist.barrier(group=self.tp_group)
    """
    assert "Cache.check" not in _reported(tmp_path, method)


def test_an_override_that_returns_another_list_keeps_it_reported(tmp_path):
    # the linker may be of a subclass whose take returns this rank's successes alone
    method = SHAPES["bound_and_read"][1]
    assert "Cache.check" in _reported(tmp_path, method, LINKER + LOCAL_LINKER)
