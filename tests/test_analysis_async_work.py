"""An in-place collective asked to run asynchronously agrees its buffer only
where its handle is waited on (issue 12; analysis/asyncwork.py).

``dist.all_reduce(flag, group=g, async_op=True)`` returns before the
reduction completes: read before ``work.wait()``, ``flag`` may still hold this
rank's own value, so a test of it that sends some ranks out early parts the
group.  Kept silent: the handle waited on before the read, ``async_op=False``,
a handle handed on to a list that is waited on later (not followed: agreed at
the call, as a blocking collective is).  A handle put into a list nothing reads
again agrees nothing; a helper of the module agrees its caller's buffer through
an asynchronous collective only where it waits on the handle itself."""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_source

_STEP = """
    import torch
    import torch.distributed as dist


    def step(x, group, sync):
        flag = x.sum().reshape(1) if dist.get_rank(group) == 0 else torch.zeros(1)
        {reduce}
        if flag.item() > 0:
            return None
        dist.barrier(group=group)
"""


def _early_exits(reduce: str) -> list:
    source = textwrap.dedent(_STEP).replace("{reduce}", textwrap.indent(textwrap.dedent(reduce), " " * 4).strip())
    return [f.line for f in check_source(source, report="per-site").findings if f.code == "CSL102"]


REPORTED = {
    "dropped": "dist.all_reduce(flag, group=group, async_op=True)",
    "an_unknown_async_op": "dist.all_reduce(flag, group=group, async_op=sync)",
    "bound_never_waited": """
        work = dist.all_reduce(flag, group=group, async_op=True)
    """,
    "waited_on_one_path": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        if sync:
            work.wait()
    """,
    "waited_on_another_handle": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        other = dist.all_reduce(x, group=group, async_op=True)
        other.wait()
    """,
    # the name holds another tensor where the wait is: the wait finishes the first one
    "the_buffer_name_bound_again_before_the_wait": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        flag = x.sum().reshape(1) if dist.get_rank(group) == 1 else torch.zeros(1)
        work.wait()
    """,
}


def test_a_wait_in_a_loop_finishes_the_previous_step_s_tensor():
    # overlap: each step waits on the reduction the step before started, while its own flag is fresh
    source = textwrap.dedent("""
        import torch
        import torch.distributed as dist


        def steps(xs, group):
            for i, x in enumerate(xs):
                flag = x.sum().reshape(1) if dist.get_rank(group) == 0 else torch.zeros(1)
                if i > 0:
                    work.wait()
                    if flag.item() > 0:
                        dist.barrier(group=group)
                work = dist.all_reduce(flag, group=group, async_op=True)
    """)
    assert [f.code for f in check_source(source, report="per-site").findings] == ["CSL101"]


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_buffer_read_before_its_handle_is_waited_on_differs(name):
    assert len(_early_exits(REPORTED[name])) == 1, name


def test_a_buffer_read_before_the_wait_differs():
    source = textwrap.dedent("""
        import torch
        import torch.distributed as dist


        def step(x, group):
            flag = x.sum().reshape(1) if dist.get_rank(group) == 0 else torch.zeros(1)
            work = dist.all_reduce(flag, group=group, async_op=True)
            if flag.item() > 0:
                return None
            work.wait()
            dist.barrier(group=group)
    """)
    assert [f.line for f in check_source(source, report="per-site").findings if f.code == "CSL102"] == [12]


SILENT = {
    "blocking": "dist.all_reduce(flag, group=group)",
    "async_op_false": "dist.all_reduce(flag, group=group, async_op=False)",
    "waited": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        work.wait()
    """,
    "waited_in_both_arms": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        if sync:
            work.wait()
        else:
            work.wait()
    """,
    # handed on to a list waited on later: not followed, agreed at the call
    "handed_to_a_list": """
        handles = []
        work = dist.all_reduce(flag, group=group, async_op=True)
        handles.append(work)
        for handle in handles:
            handle.wait()
    """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_buffer_read_after_its_handle_is_waited_on_agrees(name):
    assert _early_exits(SILENT[name]) == [], name


@pytest.mark.xfail(strict=True, reason="a handle name bound twice is not followed: its buffers are read as agreed "
                                       "at the call (analysis/asyncwork.py)")
def test_a_handle_name_bound_twice_is_not_followed():
    assert len(_early_exits("""
        work = dist.all_reduce(x, group=group, async_op=True)
        work.wait()
        work = dist.all_reduce(flag, group=group, async_op=True)
    """)) == 1


#: handles put into a list that nothing reads again: nothing waits on them, as on a dropped one
NEVER_WAITED_LISTS = {
    "a_display": """
        handles = [dist.all_reduce(flag, group=group, async_op=True)]
    """,
    "appended": """
        handles = []
        handles.append(dist.all_reduce(flag, group=group, async_op=True))
    """,
}


@pytest.mark.parametrize("name", sorted(NEVER_WAITED_LISTS))
def test_a_handle_in_a_list_nothing_reads_agrees_nothing(name):
    assert len(_early_exits(NEVER_WAITED_LISTS[name])) == 1, name


#: lists read again (waited on in a loop, handed on): not followed, agreed at the call as a blocking collective
READ_LISTS = {
    "waited_in_a_loop": """
        handles = []
        handles.append(dist.all_reduce(flag, group=group, async_op=True))
        for handle in handles:
            handle.wait()
    """,
    "handed_on": """
        handles = [dist.all_reduce(flag, group=group, async_op=True)]
        torch.futures.wait_all(handles)
    """,
}


@pytest.mark.parametrize("name", sorted(READ_LISTS))
def test_a_handle_in_a_list_read_again_stays_agreed_at_the_call(name):
    assert _early_exits(READ_LISTS[name]) == [], name


_HELPER = """
    import torch
    import torch.distributed as dist


    def agree(flag, group):
        {reduce}


    def step(x, group):
        flag = x.sum().reshape(1) if dist.get_rank(group) == 0 else torch.zeros(1)
        agree(flag, group)
        if flag.item() > 0:
            return None
        dist.barrier(group=group)
"""


def _helper_early_exits(reduce: str) -> list:
    source = textwrap.dedent(_HELPER).replace("{reduce}", textwrap.indent(textwrap.dedent(reduce), " " * 4).strip())
    return [f.line for f in check_source(source, report="per-site").findings if f.code == "CSL102"]


#: a helper of the module whose asynchronous collective its caller's buffer is handed to: agreed once the call
#: is back only where the helper waits on the handle itself
HELPERS_NOT_WAITING = {
    "dropped": "dist.all_reduce(flag, group=group, async_op=True)",
    "returned": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        return work
    """,
    "waited_on_one_path": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        if group is not None:
            work.wait()
    """,
    "the_handle_name_bound_again": """
        work = dist.all_reduce(flag, group=group, async_op=True)
        work = None
        work.wait()
    """,
}


@pytest.mark.parametrize("name", sorted(HELPERS_NOT_WAITING))
def test_a_helper_s_asynchronous_collective_not_waited_on_agrees_nothing(name):
    assert len(_helper_early_exits(HELPERS_NOT_WAITING[name])) == 1, name


@pytest.mark.parametrize("reduce", ["""
        work = dist.all_reduce(flag, group=group, async_op=True)
        work.wait()
    """, "dist.all_reduce(flag, group=group)"])
def test_a_helper_that_waits_on_its_handle_agrees_the_caller_s_buffer(reduce):
    assert _helper_early_exits(reduce) == []
