"""The byte prefilter looks for several fixed needles in every file (the
literal parts of wildcard collective names, the calls that make a
communicator): ``prefilter.AnyOf`` answers as one scan per needle would, in
fewer scans of a file that holds none (most files): a part every needle
shares first, then one opening per group of needles opening alike."""

import pytest

from cslint.engine.prefilter import _COMM_FACTORY_CALLS, AnyOf, ImportStatements, SiteFilter
from cslint.presets import load_presets


class _Counted(bytes):
    """File bytes that count the scans made of them (``needle in data``)."""

    scans = 0

    def __contains__(self, needle) -> bool:
        type(self).scans += 1
        return bytes.__contains__(self, needle)


def _scans(test, data: bytes) -> tuple:
    _Counted.scans = 0
    answer = test(_Counted(data))
    return answer, _Counted.scans


WILD = (b"gather_from_sequence_parallel_region", b"gather_from_tensor_model_parallel_region",
        b"reduce_from_tensor_model_parallel_region", b"reduce_scatter_to_sequence_parallel_region")

FILES = [b"", b"import os\nx = 1\n", b"sub = comm.Split(color)\n", b"g = dist.new_subgroups()\n",
         b"c = world.Create_intercomm(0, peer)\n", b"x.Create_cart (d)\n", b"y = a.Split_type(t)",
         b"out = reduce_scatter_to_sequence_parallel_region(x)\n", b"gather_from_sequence_parallel_regions",
         b"# reduce_from_tensor_model_parallel_region is documented\n", b"_parallel_region only\n",
         b"gather_from_ ... _parallel_region", b"new_group\n", b".Dup(.Merge(.Clone("]


@pytest.mark.parametrize("needles", [_COMM_FACTORY_CALLS, WILD, (b"def", b"import"), (b"abc",), (), (b"",),
                                     (b"x", b"", b"y"), (b"ab", b"ab", b"abc")])
def test_any_of_answers_as_one_scan_per_needle(needles):
    test = AnyOf(needles)
    for data in FILES:
        assert test(data) == any(needle in data for needle in needles), (needles, data)


def test_a_file_holding_no_needle_is_scanned_fewer_times():
    plain = b"import torch\n\ndef forward(self, x):\n    return self.proj(x).Reshape(2)\n" * 50
    assert _scans(AnyOf(WILD), plain) == (False, 1)  # the shared `_parallel_region` alone
    answer, scans = _scans(AnyOf(_COMM_FACTORY_CALLS), plain)
    assert not answer and scans < len(_COMM_FACTORY_CALLS) and scans == 7
    # a needle present is found, its group's opening first
    assert _scans(AnyOf(_COMM_FACTORY_CALLS), b"c = w.Create_graph(a)")[0]


def test_the_site_filter_reads_the_wildcard_names_of_the_presets_through_one_shared_part():
    knowledge = load_presets(["torch_distributed", "mpi4py", "megatron"])
    may_hold_site = SiteFilter(knowledge, ["*_parallel_region"], ImportStatements())
    assert may_hold_site.holds_wild_literal.needles == may_hold_site.wild_literals
    # the site next to it is still found: a wildcard collective called through its module
    assert may_hold_site(b"from megatron.core import mappings\n"
                         b"y = mappings.reduce_from_tensor_model_parallel_region(x)\n")
    assert not may_hold_site(b"import os\n\ndef reduce_rows(x):\n    return x.sum(0)\n")
