"""An element a rank-local index picks from a list whose elements all have one structure by construction
(issue 14): a tensor's ``tolist()`` (numbers of its one dtype, or nested lists as long as its shape says; a
receiver annotated as a tensor or made by ``torch`` or a tensor's own method -- an array or a series of objects
may hold None beside numbers),
``[c] * n`` (one literal ``n`` times), a display of number literals of one type.  The index then decides which
element, a value (contents), never whether it is None, its kind or its length, where every binding of the name
makes such a list and nothing changes the list or an element of it, nor hands either on (``ContainerNames
.picks_alike``, ``containers._InPlaceReads``).  Each VALID shape sits beside INVALID near-misses that must stay
reported.  An identity test of the picked element with another object reads which element was picked, so the
list is not read as alike there; the identity tests ``is`` reads as both operands' own structure elsewhere are
strict xfails (two numbers, a value ``max`` chose), and so are the alias and callee mutations the older path for a
list bound once to a comprehension does not see (the new path refuses them)."""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_paths

HEADER = """
    import torch
    import torch.distributed as dist


"""


def _lines(tmp_path, body: str) -> list:
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(HEADER) + textwrap.dedent(body))
    findings = check_paths([str(path)], cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.function) for f in findings)


VALID = {
    "tolist_element_tested_is_none": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            mine = counts[dist.get_rank()]
            if mine is None:
                return
            dist.all_reduce(x)
    """,
    "tolist_element_kind_tested": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            if isinstance(counts[dist.get_rank()], int):
                dist.all_reduce(x)
    """,
    "tolist_row_length": """
        def step(t: torch.Tensor, x):
            rows = t.tolist()
            row = rows[dist.get_rank()]
            if len(row) > 2:
                dist.all_reduce(x)
    """,
    "tolist_bound_in_two_branches": """
        def step(n, flag, x):
            if flag:
                counts = torch.zeros(n).tolist()
            else:
                held = torch.ones(n, dtype=torch.int64)
                counts = held.cpu().tolist()
            assert counts[dist.get_rank()] is not None, (counts, flag)
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "repeated_one_literal": """
        def step(world, x):
            counts = [0] * world
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "number_literals": """
        def step(x):
            limits = [4, 8]
            if isinstance(limits[dist.get_rank() % 2], int):
                dist.all_reduce(x)
    """,
    "comprehension_of_ints": """
        def step(xs, x):
            counts = [int(v) for v in xs]
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "picked_element_computed_with": """
        def step(t: torch.Tensor, total, x):
            counts = t.tolist()
            mine = counts[dist.get_rank()]
            bound = torch.clamp(total, 0, mine // 2)
            if bound is None:
                return
            dist.all_reduce(x)
    """,
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_an_element_picked_from_a_list_of_alike_elements_has_their_structure(tmp_path, name):
    assert _lines(tmp_path, VALID[name]) == []


INVALID = {
    "a_none_slot": """
        def step(n, x):
            counts = [None, n]
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "appends_of_mixed_kinds": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            counts.append(None)
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "built_by_appends": """
        def step(t: torch.Tensor, x):
            counts = []
            counts.append(t)
            counts.append(None)
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "a_dict_picked_by_rank": """
        def step(n, x):
            table = {0: n, 1: None}
            if table[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "the_value_compared": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            if counts[dist.get_rank()] > 0:
                dist.all_reduce(x)
    """,
    "the_value_as_a_size": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            buf = torch.empty(counts[dist.get_rank()])
            if len(buf) > 2:
                dist.all_reduce(x)
    """,
    "an_element_stored": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            counts[0] = None
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "filled_by_a_gather_of_objects": """
        def step(obj, world, x):
            slots = [None] * world
            dist.all_gather_object(slots, obj)
            if slots[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "mutated_by_a_callee": """
        def fill(values):
            values.extend([None])


        def step(t: torch.Tensor, x):
            counts = t.tolist()
            fill(counts)
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "mutated_through_an_alias": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            alias = counts
            alias.append(None)
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "mutated_in_a_closure": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()

            def grow():
                counts.append(None)

            grow()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "an_array_of_objects": """
        import numpy as np


        def step(world, x):
            table = np.empty(world, dtype=object)
            table[0] = None
            counts = table.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "an_untyped_receiver": """
        def step(series, x):
            counts = series.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "a_name_also_bound_to_another_value": """
        def step(n, other, flag, x):
            t = torch.zeros(n)
            if flag:
                t = other
            counts = t.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "a_nested_row_grown": """
        def step(t: torch.Tensor, x):
            rows = t.tolist()
            rows[0].append(1)
            if len(rows[dist.get_rank()]) > 2:
                dist.all_reduce(x)
    """,
    "a_nested_row_grown_through_a_name": """
        def step(t: torch.Tensor, x):
            rows = t.tolist()
            first = rows[0]
            first.append(1)
            if len(rows[dist.get_rank()]) > 2:
                dist.all_reduce(x)
    """,
    "a_nested_row_grown_in_a_loop": """
        def step(t: torch.Tensor, x):
            rows = t.tolist()
            for row in rows:
                if len(row) > 1:
                    row.append(1)
            if len(rows[dist.get_rank()]) > 2:
                dist.all_reduce(x)
    """,
    "a_shallow_copy_grown": """
        def step(t: torch.Tensor, x):
            rows = t.tolist()
            other = list(rows)
            other[0].append(1)
            if len(rows[dist.get_rank()]) > 2:
                dist.all_reduce(x)
    """,
    "rebound_to_something_else": """
        def step(t, flag, x):
            counts = t.tolist()
            if flag:
                counts = [None, 1]
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "a_parameter_rebound": """
        def step(counts, t, flag, x):
            if flag:
                counts = t.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "a_tree_class_tolist": """
        class Rows:
            def tolist(self):
                return [None, 1]


        def step(rows: Rows, x):
            counts = rows.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    # torch.load unpickles whatever was saved: an object array may hold None on some ranks' slots
    "a_loaded_object_s_tolist": """
        def step(path, x):
            table = torch.load(path, weights_only=False)
            counts = table.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    # a tree class's own cpu(): what it hands back is no tensor, whatever the method is called
    "a_tree_class_tolist_through_its_cpu": """
        class Rows:
            def tolist(self):
                return [None, 1]


        class Table:
            def cpu(self):
                return Rows()


        def step(table: Table, x):
            counts = table.cpu().tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    # the annotation names what callers pass; the function binds the name again to an array of objects
    "an_annotated_tensor_bound_again_to_an_object_array": """
        import numpy as np


        def step(t: torch.Tensor, x, names):
            t = np.array(names, dtype=object)
            counts = t.tolist()
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "a_tensor_of_rank_local_shape": """
        def step(x):
            t = torch.zeros(2) if dist.get_rank() == 0 else torch.zeros(2, 2)
            rows = t.tolist()
            if isinstance(rows[0], list):
                dist.all_reduce(x)
    """,
    "a_rank_local_repeated_value": """
        def step(world, x):
            mine = None if dist.get_rank() == 0 else 1
            counts = [mine] * world
            if counts[0] is None:
                return
            dist.all_reduce(x)
    """,
    "a_repeated_row_grown_on_one_rank": """
        def step(world, x):
            row = []
            counts = [row] * world
            if dist.get_rank() == 0:
                row.append(1)
            if len(counts[dist.get_rank()]) > 0:
                dist.all_reduce(x)
    """,
    "a_picked_row_bound_for_the_module": """
        def step(t: torch.Tensor, x):
            global FIRST
            rows = t.tolist()
            FIRST = rows[0]
            if len(rows[dist.get_rank()]) > 2:
                dist.all_reduce(x)
    """,
    "strings_of_their_own_lengths": """
        def step(x):
            names = ["a", "bb"]
            if len(names[dist.get_rank() % 2]) > 1:
                dist.all_reduce(x)
    """,
    "a_global_list": """
        def step(x):
            global COUNTS
            COUNTS = [1, 2]
            COUNTS.append(None)
            if COUNTS[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """,
    "the_picked_element_tested_for_identity": """
        def step(t: torch.Tensor, x):
            counts = t.tolist()
            mine = counts[dist.get_rank()]
            if mine is counts[0]:
                dist.all_reduce(x)
    """,
    "returned_then_changed_by_the_caller": """
        def make(t: torch.Tensor):
            counts = t.tolist()
            return counts
    """,
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_a_list_that_may_hold_elements_of_other_structures_keeps_the_pick_whole(tmp_path, name):
    if name == "returned_then_changed_by_the_caller":
        body = INVALID[name] + textwrap.dedent("""
            def step(t: torch.Tensor, x):
                counts = make(t)
                counts.append(None)
                if counts[dist.get_rank()] is None:
                    return
                dist.all_reduce(x)
        """)
    else:
        body = INVALID[name]
    assert _lines(tmp_path, body) != []


@pytest.mark.xfail(strict=True, reason="identity is read as both operands' own structure: two ints of rank-local "
                                       "values are one object only where the values are equal and small")
def test_the_identity_of_two_numbers_follows_their_values(tmp_path):
    assert _lines(tmp_path, """
        def step(x):
            r = dist.get_rank()
            z = 0
            if r is z:
                dist.all_reduce(x)
    """) != []


@pytest.mark.xfail(strict=True, reason="identity is read as both operands' own structure: max hands back one of "
                                       "its arguments, chosen by their values")
def test_the_identity_of_a_value_chosen_by_max_follows_the_values(tmp_path):
    assert _lines(tmp_path, """
        def step(a: torch.Tensor, b: torch.Tensor, x):
            a = a + dist.get_rank()
            top = max(a, b)
            if top is b:
                dist.all_reduce(x)
    """) != []


@pytest.mark.xfail(strict=True, reason="a list bound once to a comprehension of alike elements is read as alike "
                                       "whatever changes it through an alias (single_comprehensions sees only "
                                       "the name's own mutators)")
def test_a_comprehension_grown_through_an_alias_keeps_the_pick_whole(tmp_path):
    assert _lines(tmp_path, """
        def step(xs, x):
            shards = [int(v) for v in xs]
            alias = shards
            alias.append(None)
            if shards[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """) != []


@pytest.mark.xfail(strict=True, reason="a list bound once to a comprehension of alike elements is read as alike "
                                       "whatever a callee it is handed to appends")
def test_a_comprehension_grown_by_a_callee_keeps_the_pick_whole(tmp_path):
    assert _lines(tmp_path, """
        def grow(values):
            values.append(None)


        def step(xs, x):
            shards = [int(v) for v in xs]
            grow(shards)
            if shards[dist.get_rank()] is None:
                return
            dist.all_reduce(x)
    """) != []
