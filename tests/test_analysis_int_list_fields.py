"""The per-rank count list of issue 14's SGLang cluster (session 56, fields56),
pinned before it is modelled: a field holding one token count per
data-parallel rank, the same list on every rank, of which each rank picks its
own entry (``counts[slot_in(counts)]``) and uses it as a clamp bound.

An element a rank-local index picks is read as another object, whose
structure may differ (``queues[rank]``), so the clamped tensor's structure
and every identity or None test of it differ between ranks.  Where every list
the field can ever hold has plain ints for elements, the pick differs in
value only: a bound that is no shape (``torch.clamp(t, 0, mine)``) keeps the
structure of ``t``, while a size made from it (``torch.empty(mine)``) or a
test of its value still differs.

The quiet reading is sound only with a whole-tree fact the analysis does not
have (the strict xfail): every store of the attribute, through any receiver
its type does not rule out, in any file -- assignments, constructor keywords,
``dataclasses.replace``, ``setattr``, element stores, ``append``/``extend``/
``insert``, slices -- puts ints there, and nothing mutates a list it holds
through an alias or a callee (a parameter handed the list, a local bound to
it).  Proving an element an int needs int facts of fields, parameters and
returns in turn (SGLang: ``ceil_align(count, get_parallel().attn_tp_size)``:
``attn_tp_size`` a field of the parallel state, a tensor for all the syntax
shows), so each shape beside it that such a fact must keep reported is a test
of its own here."""

import textwrap

import pytest

from cslint.api import check_paths

BATCH = """
    import dataclasses

    import torch
    import torch.distributed as dist


    def slot_in(per_rank):
        if len(per_rank) == 1:
            return 0
        return dist.get_rank()


    class Batch:
        def __init__(self, counts, total):
            self.counts = counts  # one token count per data-parallel rank, the same list on every rank
            self.total = total
            self.bound = None

        def set_bound(self):
            mine = self.counts[slot_in(self.counts)]
            self.bound = torch.clamp(self.total, 0, mine // 2)

        def step(self, x):
            self.set_bound()
            if self.bound is not None:
                dist.all_reduce(x)


    def make(n):
        return Batch([len(range(n))] * 4, torch.tensor(n))
"""


def _functions(tmp_path, *others, batch: str = BATCH) -> list:
    (tmp_path / "batch.py").write_text(textwrap.dedent(batch))
    for index, text in enumerate(others):
        header = "import torch\nimport torch.distributed as dist\n\nfrom batch import Batch\n"
        (tmp_path / f"other{index}.py").write_text(header + textwrap.dedent(text))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted({f.function for f in findings})


@pytest.mark.xfail(strict=True, reason="needs a whole-tree fact: every store of the field is a list of ints, "
                                       "no alias or callee mutates it (fields56)")
def test_a_picked_count_used_as_a_clamp_bound_keeps_the_structure_of_what_it_clamps(tmp_path):
    assert _functions(tmp_path) == []


#: each store or mutation that puts something other than an int into the list, anywhere in the tree
NOT_ONLY_INTS = {
    "tensors_through_an_untyped_receiver": """
        def fill(holder):
            holder.counts = [torch.zeros(2), torch.zeros(3)]
    """,
    "another_class_of_the_same_attribute_name": """
        class Other:
            def __init__(self):
                self.counts = [torch.zeros(2), None]


        def swap(holder, other):
            holder.counts = other.counts
    """,
    "a_none_element": """
        def make_partial(n):
            return Batch([None] + [n] * 3, torch.tensor(n))
    """,
    "a_constructor_keyword": """
        def make_tensors(n):
            return Batch(counts=[torch.zeros(n), torch.zeros(1)], total=torch.tensor(n))
    """,
    "a_mapping_spread_into_the_constructor": """
        def make_spread(spec):
            return Batch(**spec)
    """,
    "dataclasses_replace": """
        import dataclasses


        def replaced(batch):
            return dataclasses.replace(batch, counts=[torch.zeros(1), torch.zeros(2)])
    """,
    "setattr_with_a_computed_name": """
        def set_named(batch, name):
            setattr(batch, name, [torch.zeros(1), torch.zeros(2)])
    """,
    "an_element_store": """
        def patch(batch):
            batch.counts[0] = torch.zeros(2)
    """,
    "an_append": """
        def grow(batch):
            batch.counts.append(None)
    """,
    "a_mutation_through_a_local_alias": """
        def grow_alias(batch):
            counts = batch.counts
            counts.append(torch.zeros(2))
    """,
    "a_mutation_by_a_callee": """
        def extend_with(values):
            values.extend([None, torch.zeros(2)])


        def grow_through(batch):
            extend_with(batch.counts)
    """,
}


@pytest.mark.parametrize("name", sorted(NOT_ONLY_INTS))
def test_a_list_that_may_hold_other_than_ints_keeps_the_pick_whole(tmp_path, name):
    assert "Batch.step" in _functions(tmp_path, NOT_ONLY_INTS[name])


#: the picked int (or the list) read as a size or as a value decides the test on every reading
READ_AS_SIZE_OR_VALUE = {
    "the_pick_as_a_size": ("torch.clamp(self.total, 0, mine // 2)", "torch.empty(mine // 2)"),
    "the_pick_as_a_factory_shape": ("torch.clamp(self.total, 0, mine // 2)", "torch.zeros((mine, 8))"),
    "the_pick_in_a_test": ("self.bound = torch.clamp(self.total, 0, mine // 2)",
                           "self.bound = torch.clamp(self.total, 0, mine // 2) if mine > 0 else None"),
    "a_slice_of_the_pick": ("torch.clamp(self.total, 0, mine // 2)", "self.total.view(-1)[:mine]"),
}


@pytest.mark.parametrize("name", sorted(READ_AS_SIZE_OR_VALUE))
def test_a_picked_count_read_as_a_size_or_a_value_still_differs(tmp_path, name):
    old, new = READ_AS_SIZE_OR_VALUE[name]
    assert old in BATCH
    assert "Batch.step" in _functions(tmp_path, batch=BATCH.replace(old, new))


def test_a_rank_dependent_list_of_ints_still_differs(tmp_path):
    # the list itself differs (each rank stores its own counts): whatever the pick reads of it
    own = BATCH.replace("Batch([len(range(n))] * 4, torch.tensor(n))",
                        "Batch([dist.get_rank(), len(range(n))], torch.tensor(n))")
    assert "Batch.step" in _functions(tmp_path, batch=own)
    shape = BATCH.replace("torch.clamp(self.total, 0, mine // 2)", "torch.empty(self.counts)")
    assert "Batch.step" in _functions(tmp_path, batch=shape.replace(
        "Batch([len(range(n))] * 4, torch.tensor(n))", "Batch([dist.get_rank(), 2], torch.tensor(n))"))
