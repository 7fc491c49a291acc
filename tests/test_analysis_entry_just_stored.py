"""A group read back from the entry the statement before stored is the
value stored there, not a pick among the container's entries.

``self._groups[name] = init_group(...)`` then ``dist.barrier(group=
self._groups[name])``: the key holds this rank's own id, yet nothing runs
between the store and the read, so every rank reads the group it has just
made, whatever key it made it under; what the store's value names decides
(a helper's return: not read whole, as a group handed in).  Kept reported:
a key other than the stored one, a call between the store and the read
(also inside the collective's own earlier argument), an ``await`` or a
``yield`` before the read (another task or the generator's caller may
rewrite the entry meanwhile), a stored value the rank picks itself, a key
rebound between them."""

import textwrap

import pytest

from cslint.api import check_source

_HEAD = """
    import torch.distributed as dist
    from vllm.distributed import get_tensor_model_parallel_rank
    from .groups import init_group, swap_entries

    groups = [dist.new_group(backend="gloo"), dist.new_group(backend="nccl")]
"""


def _lines(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted(f.line for f in check_source(source, report="per-site").findings)


READ_BACK = {
    "field_entry": """
        class Exporter:
            def __init__(self):
                self._groups = {}
                self.tp_rank = get_tensor_model_parallel_rank()

            def connect(self, prefix, port):
                name = f"{prefix}_{port}_{self.tp_rank}"
                self._groups[name] = init_group(port, name)
                dist.barrier(group=self._groups[name])
    """,
    "local_entry_through_a_local": """
        def connect(registry, prefix):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            group = registry[name]
            dist.barrier(group=group)
    """,
}


@pytest.mark.parametrize("name", sorted(READ_BACK))
def test_the_entry_just_stored_is_the_stored_value(name):
    assert _lines(READ_BACK[name]) == []


STILL_REPORTED = {
    "another_key_read": ("""
        def connect(registry, prefix):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            peer = f"{prefix}_{get_tensor_model_parallel_rank() + 1}"
            registry[name] = init_group(prefix, name)
            dist.barrier(group=registry[peer])
    """, [12]),
    "a_call_between": ("""
        def connect(registry, prefix):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            swap_entries(registry)
            dist.barrier(group=registry[name])
    """, [12]),
    "a_call_in_an_earlier_argument": ("""
        def connect(registry, prefix, x):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            dist.all_reduce(swap_entries(registry, x), group=registry[name])
    """, [11]),
    "the_stored_value_is_picked_by_rank": ("""
        def connect(registry, prefix):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = groups[get_tensor_model_parallel_rank() % 2]
            dist.barrier(group=registry[name])
    """, [11]),
    "an_await_before_the_read": ("""
        async def connect(registry, prefix, pending):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            dist.all_reduce(await pending, group=registry[name])
    """, [11]),
    "an_async_comprehension_before_the_read": ("""
        async def connect(registry, prefix, stream):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            dist.all_reduce([chunk async for chunk in stream], group=registry[name])
    """, [11]),
    "a_yield_before_the_read": ("""
        def connect(registry, prefix):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            dist.all_reduce((yield name), group=registry[name])
    """, [11]),
    "the_key_rebound_between": ("""
        def connect(registry, prefix):
            name = f"{prefix}_{get_tensor_model_parallel_rank()}"
            registry[name] = init_group(prefix, name)
            name = f"{prefix}_{get_tensor_model_parallel_rank() + 1}"
            dist.barrier(group=registry[name])
    """, [12]),
}


@pytest.mark.parametrize("name", sorted(STILL_REPORTED))
def test_an_entry_not_just_stored_stays_reported(name):
    body, lines = STILL_REPORTED[name]
    assert _lines(body) == lines
