"""A verdict agreed over a group about whether a value is None (issue 14):
past an exit on it, the ranks still there agree on that value's None-ness.
Each VALID shape sits beside the INVALID shape that must still be reported."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


AGREED = """
    import torch
    import torch.distributed as dist

    def all_ranks(group, flag):
        value = torch.tensor(int(flag))
        dist.all_reduce(value, op=dist.ReduceOp.MIN, group=group)
        return bool(value.item())

    def only_here(group, flag):
        return flag

    def agreed_workspace(group, create):
        try:
            workspace = create()
        except RuntimeError:
            workspace = None
        if not all_ranks(group, workspace is not None):
            return None
        return workspace

    def local_workspace(group, create):
        try:
            workspace = create()
        except RuntimeError:
            workspace = None
        if not only_here(group, workspace is not None):
            return None
        return workspace

    def agreed_in_arm(group, create, x):
        try:
            buffer = create()
        except RuntimeError:
            buffer = None
        if all_ranks(group, buffer is not None and x > 0):
            if buffer is not None:
                dist.all_reduce(x)             # VALID: every rank holds a buffer here
        else:
            if buffer is not None:
                dist.all_reduce(x)             # INVALID: some ranks hold one, others not
        return x

    class Layer:
        def __init__(self, group, create):
            self.fused = agreed_workspace(group, create)
            self.local = local_workspace(group, create)

        def forward(self, x):
            if self.fused is not None:
                dist.all_reduce(x)             # VALID: agreed before it was returned
            if self.local is not None:
                dist.all_reduce(x)             # INVALID: the verdict is this rank's own
            return x
"""


def test_an_exit_on_an_agreed_none_test_makes_the_none_ness_uniform():
    found = _lines(AGREED)
    source = textwrap.dedent(AGREED).splitlines()
    valid = [i + 1 for i, text in enumerate(source) if "# VALID" in text]
    invalid = [i + 1 for i, text in enumerate(source) if "# INVALID" in text]
    assert valid and invalid
    assert not set(valid) & set(found), found
    assert set(invalid) <= set(found), found


SIZES = """
    import os
    import torch
    import torch.distributed as dist

    def all_ranks(flag):
        value = torch.tensor(int(flag))
        dist.all_reduce(value, op=dist.ReduceOp.MIN)
        return bool(value.item())

    def step(path):
        try:
            batch = os.listdir(path)
        except OSError:
            batch = None
        if not all_ranks(batch is not None):
            return
        for item in batch:
            dist.all_reduce(item)          # INVALID: only None-ness is agreed, not the length
"""


def test_an_agreed_none_test_leaves_the_length_rank_local():
    assert _lines(SIZES) == [19]


FALLBACK = """
    import os
    import torch
    import torch.distributed as dist

    def all_ranks(flag):
        value = torch.tensor(int(flag))
        dist.all_reduce(value, op=dist.ReduceOp.MIN)
        return bool(value.item())

    def opaque_check(buffer):
        return buffer.ok()

    def agreed(create, x):
        try:
            buffer = create()
        except RuntimeError:
            buffer = None
        if not all_ranks(buffer is not None):
            return
        if opaque_check(buffer):
            dist.all_reduce(x)             # VALID: every rank made its buffer the same way

    def with_fallback(create, x):
        try:
            buffer = create()
        except RuntimeError:
            buffer = None
        if buffer is None:
            buffer = os.listdir("/tmp")
        if not all_ranks(buffer is not None):
            return
        if len(buffer) > 2:
            dist.all_reduce(x)             # INVALID: some ranks hold the fallback listing
"""


def test_the_decision_behind_an_agreed_none_test_no_longer_counts():
    found = _lines(FALLBACK)
    source = textwrap.dedent(FALLBACK).splitlines()
    valid = [i + 1 for i, text in enumerate(source) if "# VALID" in text]
    invalid = [i + 1 for i, text in enumerate(source) if "# INVALID" in text]
    assert not set(valid) & set(found), found
    assert set(invalid) <= set(found), found


PRESET = """
    import torch
    import torch.distributed as dist

    def all_ranks(flag):
        value = torch.tensor(int(flag))
        dist.all_reduce(value, op=dist.ReduceOp.MIN)
        return bool(value.item())

    def only_here(flag):
        return flag

    def opaque_check(handle):
        return handle.ready()

    def agreed(create, share, x):
        buffer = None
        try:
            buffer = create()
        except RuntimeError:
            pass
        if not all_ranks(buffer is not None):
            return
        handle = None
        try:
            handle = share(buffer)
        except RuntimeError:
            pass
        if not all_ranks(handle is not None and bool(handle.address)):
            return
        if opaque_check(handle):
            dist.all_reduce(x)             # VALID: every rank past the verdicts holds both

    def local(create, share, x):
        buffer = None
        try:
            buffer = create()
        except RuntimeError:
            pass
        if not only_here(buffer is not None):
            return
        if opaque_check(buffer):
            dist.all_reduce(x)             # INVALID: the verdict is this rank's own
"""


def test_an_agreed_none_test_vouches_for_a_name_a_failure_left_as_it_was_before_the_try():
    # `x = None` before the `try` and a handler that falls through: the failure that
    # skipped the body's binding is what left the name None (skipped.py), and the
    # agreed verdict speaks for it as for a `x = None` in the handler
    found = _lines(PRESET)
    source = textwrap.dedent(PRESET).splitlines()
    valid = [i + 1 for i, text in enumerate(source) if "# VALID" in text]
    invalid = [i + 1 for i, text in enumerate(source) if "# INVALID" in text]
    assert valid and invalid
    assert not set(valid) & set(found), found
    assert set(invalid) <= set(found), found
