"""A list comprehension has one element per iteration its generators and
filters let through, whatever each element is: its own structure (length,
truth, a loop's trip count over it) is its generators', kept apart from its
elements, for a local and for a field alike.  An element read from it still
carries all of the element (issue 14, object-taint-spread)."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_BUILD = """
    import torch
    import torch.distributed as dist

    def shard_map(i):
        rank = dist.get_rank()
        return {"owned": list(range(rank * i))}
"""


def test_a_local_comprehension_of_rank_local_elements_has_a_uniform_length():
    # VALID: every rank builds n maps, each describing its own shard
    assert _codes(_BUILD + """
    def sync(n):
        maps = [shard_map(i) for i in range(n)]
        for j, m in enumerate(maps):
            dist.all_reduce(torch.zeros(1))
        if maps:
            dist.barrier()
    """) == []


def test_a_field_comprehension_of_rank_local_elements_has_a_uniform_length():
    # VALID: the same list kept in a field and looped over by another method
    assert _codes(_BUILD + """
    class Layout:
        def __init__(self, n):
            self.maps = [shard_map(i) for i in range(n)]

        def sync(self):
            for j, m in enumerate(self.maps):
                dist.all_reduce(torch.zeros(1))
    """) == []


def test_a_rank_local_filter_or_iterable_still_decides_the_length():
    # INVALID: the filter keeps this rank's indices; the iterable is the rank's range
    assert _codes(_BUILD + """
    def by_filter(xs):
        rank = dist.get_rank()
        mine = [shard_map(i) for i in xs if i % 2 == rank]
        for m in mine:
            dist.all_reduce(torch.zeros(1))

    def by_iterable():
        rank = dist.get_rank()
        mine = [shard_map(i) for i in range(rank)]
        for m in mine:
            dist.all_reduce(torch.zeros(1))

    class Others:
        def __init__(self, n):
            self.rank = dist.get_rank()
            self.maps = [shard_map(i) for i in range(n) if i != self.rank]

        def sync(self):
            for m in self.maps:
                dist.all_reduce(torch.zeros(1))
    """) == [("CSL103", 13), ("CSL103", 19), ("CSL103", 28)]


def test_an_element_of_the_comprehension_keeps_its_own_structure():
    # INVALID: the loop runs over one element, whose length is the rank's
    assert _codes(_BUILD + """
    def first(n):
        maps = [shard_map(i) for i in range(n)]
        for x in maps[0]["owned"]:
            dist.all_reduce(torch.zeros(1))

    class Layout:
        def __init__(self, n):
            self.maps = [shard_map(i) for i in range(n)]

        def first(self):
            for x in self.maps[0]["owned"]:
                dist.all_reduce(torch.zeros(1))
    """) == [("CSL103", 12), ("CSL103", 20)]


_WEIGHTS = """
    import torch
    import torch.distributed as dist

    def weights_of_this_rank():
        rank = dist.get_rank()
        return [torch.tensor([float(rank)]), torch.tensor([2.0 * rank])]
"""


def test_a_flag_read_of_each_element_does_not_read_the_iterables_contents():
    # VALID: the weights hold this rank's values, but whether each needs a
    # gradient is their structure, alike on every rank; the generator reads
    # the iterable's contents only through its elements
    assert _codes(_WEIGHTS + """
    def wrap():
        weights = weights_of_this_rank()
        if any(w.requires_grad for w in weights):
            dist.barrier()
        if [w.shape for w in weights]:
            dist.barrier()
    """) == []


def test_a_read_of_each_elements_contents_still_differs():
    # INVALID: the generator reads each weight's values
    assert _codes(_WEIGHTS + """
    def wrap():
        weights = weights_of_this_rank()
        if any(w.sum() > 0 for w in weights):
            dist.barrier()
        if [float(w[0]) for w in weights if w.requires_grad] == [0.0]:
            dist.barrier()
    """) == [("CSL101", 12), ("CSL101", 14)]
