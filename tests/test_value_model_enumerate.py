"""The index of ``for i, x in enumerate(xs)`` counts the elements before
``x``: it reads how many elements ``xs`` has (its own structure, as the
loop's trip count does) and the ``start`` given, never an element.  So a
list whose elements hold a rank-local value (a host name, this rank's
share) still gives every rank the same indices, and an agreed table read
at them (``flags[i]``, a status all-reduced over the group) stays agreed;
while the element itself, a list of rank-local length, a rank-local start
and a loop that is not ``enumerate``'s still differ.  Loops and
comprehensions alike."""

from source_findings import barrier_finding as _barrier
from source_findings import codes as _codes

_LOOP = """
    import socket
    import torch.distributed as dist

    def serve(items, flags):
        host = socket.gethostname()
        rank = dist.get_rank()
        reqs = []
        for item in items:
            reqs.append((item, host))
        for i, req in enumerate(reqs):
            if {test}:
                dist.barrier()
"""


def test_an_agreed_table_read_at_the_index_is_alike():
    assert _codes(_LOOP.replace("{test}", "flags[i]")) == []


def test_the_index_itself_is_alike():
    assert _codes(_LOOP.replace("{test}", "i % 2 == 0")) == []


def test_the_element_still_differs():
    source = _LOOP.replace("{test}", "req[1] == 'node0'")
    assert _codes(source) == _barrier(source)


def test_a_list_of_rank_local_length_still_gives_differing_indices():
    source = _LOOP.replace("for item in items:", "for item in items[:rank]:").replace("{test}", "flags[i]")
    assert _codes(source) == _barrier(source)


def test_a_rank_local_start_still_differs():
    source = _LOOP.replace("enumerate(reqs)", "enumerate(reqs, rank)").replace("{test}", "flags[i]")
    assert _codes(source) == _barrier(source)


def test_a_pair_that_is_not_enumerate_s_still_differs():
    # the first name unpacks the element's first part (here the host), not a count of elements before it
    source = _LOOP.replace("enumerate(reqs)", "reqs").replace("reqs.append((item, host))", "reqs.append((host, item))") \
        .replace("{test}", "i[1] == 'node0'")
    assert "(host, item)" in source
    assert _codes(source) == _barrier(source)


def test_a_filter_at_the_index_of_a_comprehension_keeps_its_length_alike():
    source = _LOOP.replace("        for i, req in enumerate(reqs):\n            if {test}:",
                           "        picked = [req for i, req in enumerate(reqs) if flags[i]]\n        if len(picked) > 1:")
    assert "picked" in source
    assert _codes(source) == []


def test_an_element_taken_in_a_comprehension_still_differs():
    source = _LOOP.replace("        for i, req in enumerate(reqs):\n            if {test}:",
                           "        picked = [req[1] for i, req in enumerate(reqs)]\n        if picked[0] == 'node0':")
    assert "picked" in source
    assert _codes(source) == _barrier(source)
