"""A failure recorded in a name, and the asserts that hold where it is None
(issue 14 §2.2).

The shape: a worker's coroutine builds a context inside a ``try`` whose
handler records the failure (``except Exception as error: failure =
error``), then, only where ``failure is None``, asserts the context was
built before using it, and finally agrees every rank's status over its
group, raising alike on every rank when one failed.  A caller awaits it
inside a ``try`` and enters a collective.

Where ``failure is None`` no handler ran, so the context holds what the
body built: when the builder declares one class as its return, the assert
holds wherever it is reached and raises on no rank
(``recorded.assert_holds_where_reached``).  When the builder may hand back
None, or a handler does not record its failure, or the record is bound to
something else between, the assert may fail on the ranks whose ``try`` did
not fail alone: still reported.

Each VALID shape sits beside INVALID ones that must still be reported."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch
    import torch.distributed as dist


    class Context:
        def __init__(self, items):
            self.items = items


    class Worker:
        def __init__(self, group, size, registry):
            self.group = group
            self.size = size
            self.registry = registry

        def _agree(self, failure, phase):
            code = 1 if failure is not None else 0
            mine = torch.tensor([code, phase], dtype=torch.int64)
            gathered = [torch.empty_like(mine) for _ in range(self.size)]
            dist.all_gather(gathered, mine, group=self.group)
            if any(row[0].item() != 0 for row in gathered):
                raise RuntimeError("a peer failed")
            return gathered

        async def _build(self, items) -> Context:
            return Context(items)

        async def _build_maybe(self, items):
            if items:
                return Context(items)
            return None

        async def _publish(self, context):
            await self.registry.publish(context)

        async def _prepare(self, items):
            context = None
            failure = None
            try:
                context = await self._build(items)
            except Exception as error:
                failure = error
            if failure is None:
                try:
                    await self._publish(context)
                except Exception as error:
                    failure = error
            if failure is None:
                assert context is not None
                phase = 0
            else:
                phase = 1
            self._agree(failure, phase)
            return context

        async def _prepare_maybe(self, items):
            context = None
            failure = None
            try:
                context = await self._build_maybe(items)
            except Exception as error:
                failure = error
            if failure is None:
                assert context is not None
                phase = 0
            else:
                phase = 1
            self._agree(failure, phase)
            return context

        async def _prepare_unrecorded(self, items):
            context = None
            failure = None
            phase = 0
            try:
                context = await self._build(items)
            except RuntimeError as error:
                failure = error
            except Exception:
                phase = 1
            if failure is None:
                assert context is not None
            self._agree(failure, phase)
            return context

        async def _prepare_retried(self, items):
            context = None
            failure = None
            try:
                context = await self._build(items)
            except Exception as error:
                failure = error
            if failure is not None and items:
                failure = None
            if failure is None:
                assert context is not None
            self._agree(failure, 0)
            return context

        async def serve(self, items):
            try:
                context = await self._prepare(items)
                dist.barrier(group=self.group)  # VALID: the assert holds where the build did not fail
            except Exception:
                return None
            return context

        async def serve_maybe(self, items):
            try:
                context = await self._prepare_maybe(items)
                dist.barrier(group=self.group)  # INVALID: the builder may hand back None
            except Exception:
                return None
            return context

        async def serve_unrecorded(self, items):
            try:
                context = await self._prepare_unrecorded(items)
                dist.barrier(group=self.group)  # INVALID: a handler records no failure
            except Exception:
                return None
            return context

        async def serve_retried(self, items):
            try:
                context = await self._prepare_retried(items)
                dist.barrier(group=self.group)  # INVALID: the record is cleared between
            except Exception:
                return None
            return context
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def _flagged():
    source = textwrap.dedent(SOURCE)
    findings = check_source(source, report="per-site").findings
    return source, {(f.line, f.code) for f in findings}


def test_only_asserts_that_may_fail_part_the_ranks():
    source, flagged = _flagged()
    assert sorted(line for line, _code in flagged) == _marked(source, "INVALID")
    assert _marked(source, "VALID")


def test_each_invalid_shape_is_reported_as_a_rank_local_exception():
    source, flagged = _flagged()
    for line in _marked(source, "INVALID"):
        assert (line, "CSL104") in flagged
