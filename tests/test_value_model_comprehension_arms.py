"""An ``if`` each arm of which binds one name to a comprehension of the same
generators decides what the elements are, never how many: the name's own
structure (its length, a loop's trip count over it) is the generators' alone
on every rank, as it is for arms that each store one element alike
(``stores.py``).  Arms of other generators, a filter in one arm, or an arm
that binds nothing keep the test deciding the length (issue 14,
object-taint-spread).

The shape is a guidance step split over two ranks: each runs one branch of a
prediction, scales its own outputs by its own weight, and all-reduces them
one by one."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings]


_STEP = """
    import torch.distributed as dist


    def step(outputs, scale):
        rank = dist.get_rank()
        if rank == 0:
            weighted = {first}
        else:
            weighted = {second}
        for w in weighted:
            dist.all_reduce(w)
"""


def _step(first, second):
    return _STEP.replace("{first}", first).replace("{second}", second)


def test_arms_weighting_the_same_outputs_leave_one_reduce_per_output():
    # VALID: both ranks hold one weighted tensor per output
    assert _codes(_step("tuple(scale * o for o in outputs)", "tuple((1 - scale) * o for o in outputs)")) == []


def test_arms_of_list_comprehensions_over_the_same_outputs():
    assert _codes(_step("[scale * o for o in outputs]", "[(1 - scale) * o for o in outputs]")) == []


def test_a_filter_in_one_arm_still_decides_the_length():
    # BUG: rank 0 drops the outputs that are None, the others keep them all
    assert _codes(_step("tuple(o for o in outputs if o is not None)", "tuple(o for o in outputs)")) \
        == [("CSL103", 12)]


def test_arms_over_other_iterables_still_decide_the_length():
    assert _codes(_step("[o for o in outputs]", "[o for o in outputs[1:]]")) == [("CSL103", 12)]


def test_an_arm_that_binds_another_value_still_decides_the_length():
    assert _codes(_step("[o for o in outputs]", "[]")) == [("CSL103", 12)]


def test_a_tuple_of_a_generator_has_its_generators_length():
    # VALID: one entry per output, whatever this rank's entries hold
    assert _codes("""
    import torch.distributed as dist


    def step(outputs):
        rank = dist.get_rank()
        weighted = tuple(o * rank for o in outputs)
        for w in weighted:
            dist.all_reduce(w)
    """) == []


def test_arms_that_each_append_one_element_alike_in_the_functions_own_body():
    # VALID: a test outside any loop whose arms each append one element
    assert _codes("""
    import torch.distributed as dist


    def gather(mine, theirs, out):
        rank = dist.get_rank()
        if rank == 0:
            out.append(mine)
        else:
            out.append(theirs)
        for t in out:
            dist.all_reduce(t)
    """) == []


def test_an_append_on_one_arm_only_still_decides_the_length():
    assert _codes("""
    import torch.distributed as dist


    def gather(mine, out):
        rank = dist.get_rank()
        if rank == 0:
            out.append(mine)
        for t in out:
            dist.all_reduce(t)
    """) == [("CSL103", 10)]
