"""A status all-gathered over a group, and the work around it that cannot
fail on one rank alone (issue 14 §2.2).

The shape: a worker's coroutine catches its own local failure, all-gathers
a small status tensor over its group and raises on every rank when any rank
failed; a caller awaits it inside a ``try`` and enters a collective.  Three
things decide whether that caller's handler parts the ranks:

* ``await`` of a call the tree resolves runs that function's coroutine:
  what it raises is the function's own, which the call's atom already
  stands for (``Evaluator.raised_atoms``); awaiting anything else (a
  queue's ``get``) may still fail on one rank;
* the gather's buffers are made like the host status tensor
  (``torch.empty_like(mine)``: ``raises.host_tensor_like``), which fails
  as making that tensor did; buffers made like a weight may run out of
  memory on one rank;
* a test that asks this rank's id (``if dist.get_rank(g) == 0:`` inside
  the ``try``) cannot send one rank into the handler
  (``unfailing.asks_the_setup``; the CFG gives the test no exception edge),
  while a test that also calls what may fail still can.

Each VALID shape sits beside an INVALID one that must still be reported."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import asyncio

    import torch
    import torch.distributed as dist


    class Worker:
        def __init__(self, group, size, store):
            self.group = group
            self.size = size
            self.store = store
            self.inbox = asyncio.Queue()

        def _agree(self, failure, phase):
            code = 1 if failure is not None else 0
            mine = torch.tensor([code, phase], dtype=torch.int64)
            gathered = [torch.empty_like(mine) for _ in range(self.size)]
            dist.all_gather(gathered, mine, group=self.group)
            if any(row[0].item() != 0 for row in gathered):
                raise RuntimeError("a peer failed")
            return gathered

        def _agree_sized(self, failure, weight):
            mine = torch.tensor([1 if failure is not None else 0])
            buffers = [torch.zeros_like(weight) for _ in range(self.size)]
            dist.all_gather(buffers, weight, group=self.group)
            dist.all_reduce(mine, group=self.group)
            if mine.item() != 0:
                raise RuntimeError("a peer failed")
            return buffers

        async def _load(self, item):
            return item

        async def _checked_load(self, item):
            failure = None
            loaded = None
            try:
                loaded = await self._load(item)
            except Exception as error:
                failure = error
            self._agree(failure, 0)
            return loaded

        async def serve(self, item):
            try:
                loaded = await self._checked_load(item)
                dist.broadcast_object_list([loaded], src=0, group=self.group)  # VALID: every rank raises alike
            except Exception:
                return None
            return loaded

        async def serve_next(self):
            try:
                loaded = await self.inbox.get()
                dist.broadcast_object_list([loaded], src=0, group=self.group)  # INVALID: a library's awaitable
            except Exception:
                return None
            return loaded

        def gather(self, failure):
            try:
                self._agree(failure, 1)
                dist.barrier(group=self.group)  # VALID: buffers made like the host status
            except Exception:
                return False
            return True

        def gather_weights(self, weight):
            try:
                self._agree_sized(None, weight)
                dist.barrier(group=self.group)  # INVALID: buffers as large as a weight
            except Exception:
                return False
            return True

        def lead(self):
            leader = False
            try:
                if dist.get_rank(self.group) == 0:
                    leader = True
                dist.barrier(group=self.group)  # VALID: asking the rank fails on no rank alone
            except Exception:
                return None
            return leader

        def lead_stored(self):
            leader = False
            try:
                if dist.get_rank(self.group) == self.store.get("leader"):
                    leader = True
                dist.barrier(group=self.group)  # INVALID: the store's read may fail on one rank
            except Exception:
                return None
            return leader
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def _flagged():
    source = textwrap.dedent(SOURCE)
    findings = check_source(source, report="per-site").findings
    return source, {(f.line, f.code) for f in findings}


def test_only_the_shapes_that_fail_on_one_rank_are_reported():
    source, flagged = _flagged()
    assert sorted(line for line, _code in flagged) == _marked(source, "INVALID")
    assert _marked(source, "VALID")


def test_each_invalid_shape_keeps_its_rule():
    source, flagged = _flagged()
    awaited, weights, stored = _marked(source, "INVALID")
    assert (awaited, "CSL104") in flagged
    assert (weights, "CSL104") in flagged
    # the ``if`` has no exit: the barrier comes after it whichever way it goes, so only the failure of its test (the
    # store's read) decides the barrier, an exception (it was read as an early exit of the rank test before)
    assert (stored, "CSL104") in flagged
