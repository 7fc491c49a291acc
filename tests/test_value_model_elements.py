"""A store into a container changes one element, not the container itself.
``xs.append(v)`` makes ``xs`` one element longer whatever ``v`` is, and
``xs[k] = v`` changes ``xs`` by the key alone: whether ``v`` is None on this
rank, or how long it is, becomes the structure of one of ``xs``'s elements.
So the truth, length, None-ness and kind of the container, and the trip
count of a loop over it, stay alike where the elements stored differ, while
a read of an element (``xs[0] is None``) still differs, and so does the
container's own structure where the store runs on some ranks only or the
name is bound anew.  Each shape is paired with the read that must still be
reported; locals and fields of a class alike."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# -- a local container -------------------------------------------------------------------

_LOCAL = """
    import torch.distributed as dist

    def collect(items):
        rank = dist.get_rank()
        out = []
        for item in items:
            out.append(item if rank == 0 else None)
        {test}
            dist.barrier()
"""


def test_truth_of_a_list_of_rank_picked_elements_is_alike():
    assert _codes(_LOCAL.replace("{test}", "if out:")) == []


def test_length_of_a_list_of_rank_picked_elements_is_alike():
    assert _codes(_LOCAL.replace("{test}", "if len(out) > 1:")) == []


def test_loop_over_a_list_of_rank_picked_elements_runs_alike():
    assert _codes(_LOCAL.replace("{test}", "for x in list(out):")) == []


def test_loop_over_the_positions_of_rank_picked_elements_runs_alike():
    assert _codes(_LOCAL.replace("{test}", "for i, x in enumerate(reversed(out)):")) == []


def test_whether_an_element_is_there_still_differs():
    assert _codes(_LOCAL.replace("{test}", "if out[0] is None:")) == [("CSL101", 10)]


def test_an_element_read_through_a_loop_still_differs():
    assert _codes(_LOCAL.replace("{test}", "if any(x is None for x in out):")) == [("CSL101", 10)]


def test_a_store_on_some_ranks_still_changes_the_length():
    source = _LOCAL.replace("out.append(item if rank == 0 else None)",
                            "if rank == 0:\n                out.append(item)")
    assert _codes(source.replace("{test}", "if out:")) == [("CSL101", 11)]


def test_a_container_bound_anew_by_a_rank_test_still_differs():
    source = _LOCAL.replace("{test}", "if rank == 0:\n            out = []\n        if out:")
    assert _codes(source) == [("CSL101", 12)]


def test_a_keyed_store_into_a_parameter_keeps_its_length():
    source = """
        import torch.distributed as dist

        def stash(buf, v):
            rank = dist.get_rank()
            buf["last"] = v if rank == 0 else None
            if {test}:
                dist.barrier()
    """
    assert _codes(source.replace("{test}", "len(buf) > 1")) == []
    assert _codes(source.replace("{test}", "buf['last'] is None")) == [("CSL101", 8)]


# -- a field of a class --------------------------------------------------------------------

_FIELD = """
    import torch.distributed as dist


    class Pending:
        def __init__(self):
            self.parts = []
            self.rank = dist.get_rank()

        def add(self, items):
            for item in items:
                {store}

        def flush(self):
            {test}
                dist.barrier()
"""

_PICKED = "self.parts.append(item if self.rank == 0 else None)"


def test_truth_of_a_field_of_rank_picked_elements_is_alike():
    assert _codes(_FIELD.replace("{store}", _PICKED).replace("{test}", "if self.parts:")) == []


def test_loop_over_a_field_of_rank_picked_elements_runs_alike():
    assert _codes(_FIELD.replace("{store}", _PICKED).replace("{test}", "for p in self.parts:")) == []


def test_loop_over_the_positions_of_a_field_runs_alike():
    source = _FIELD.replace("{store}", _PICKED).replace("{test}", "for i, p in enumerate(sorted(self.parts)):")
    assert _codes(source) == []


def test_loop_over_the_positions_of_a_field_stored_on_some_ranks_still_differs():
    source = _FIELD.replace("{store}", "if self.rank == 0:\n                    self.parts.append(item)")
    assert _codes(source.replace("{test}", "for i, p in enumerate(self.parts):")) == [("CSL103", 17)]


def test_a_keyed_store_into_a_field_keeps_its_length():
    source = _FIELD.replace("self.parts = []", "self.parts = {}")
    source = source.replace("{store}", "self.parts[item] = item if self.rank == 0 else None")
    assert _codes(source.replace("{test}", "if len(self.parts) == 0:")) == []


def test_an_element_of_the_field_still_differs():
    source = _FIELD.replace("{store}", _PICKED).replace("{test}", "if self.parts[0] is None:")
    assert _codes(source) == [("CSL101", 16)]


def test_a_field_store_on_some_ranks_still_changes_its_length():
    source = _FIELD.replace("{store}", "if self.rank == 0:\n                    self.parts.append(item)")
    assert _codes(source.replace("{test}", "if self.parts:")) == [("CSL101", 17)]


def test_a_field_bound_anew_by_a_rank_test_still_differs():
    source = _FIELD.replace("{store}", _PICKED + "\n            if self.rank == 0:\n                self.parts = []")
    assert _codes(source.replace("{test}", "if self.parts:")) == [("CSL101", 18)]


# -- a store under the key the loop drew from the container ---------------------------

_DRAWN_KEY = """
    import torch.distributed as dist

    def replace(state, full, names):
        {loop}
            if dist.get_rank() == 0:
                state[key] = full[key]
                {after}
        if len(state) > 1:
            dist.barrier()
"""


def _drawn(loop, after="pass"):
    return _codes(_DRAWN_KEY.replace("{loop}", loop).replace("{after}", after))


def test_a_rank_guarded_store_under_the_drawn_key_keeps_the_key_set():
    # every key is one the dict has: only the value under it differs
    assert _drawn("for key in state:") == []
    assert _drawn("for key in state.keys():") == []
    assert _drawn("for key, value in state.items():") == []


def test_binding_the_key_anew_after_the_store_keeps_it_drawn():
    # the next iteration's header draws it again before the store runs
    assert _drawn("for key, value in state.items():", after="key = 'other'") == []


def test_a_rank_guarded_store_under_another_key_still_changes_the_key_set():
    assert _drawn("for key in names:") == [("CSL101", 10)]
    assert _drawn("for key, value in full.items():") == [("CSL101", 10)]


def test_a_key_bound_anew_before_the_store_is_not_the_drawn_one():
    source = _DRAWN_KEY.replace("{loop}", "for key in state:\n            key = key + '_copy'").replace("{after}", "pass")
    assert _codes(source) == [("CSL101", 11)]


def test_a_store_inside_an_inner_loop_that_rebinds_the_key_is_not_the_drawn_one():
    source = """
        import torch.distributed as dist

        def replace(state, full, names):
            for key in state:
                for name in names:
                    if dist.get_rank() == 0:
                        state[key] = full[key]
                    key = name
            if len(state) > 1:
                dist.barrier()
    """
    assert _codes(source) == [("CSL101", 11)]


# -- what later iterations draw from a dict whose values the loop replaces -------------

_REPLACED_VALUES = """
    import torch.distributed as dist

    class Placeholder:
        pass

    def send(meta, full, keys):
        box = [meta]
        dist.broadcast_object_list(box, src=0)
        meta = box[0]
        keys = []
        for key, value in meta.items():
            if not isinstance(value, Placeholder):
                continue
            if dist.get_rank() == 0:
                {store}
            {read}
            keys.append(key)
        if keys:
            dist.barrier()
"""


def _replaced(store="meta[key] = full[key]", read="pass"):
    return _codes(_REPLACED_VALUES.replace("{store}", store).replace("{read}", read))


def test_a_value_replaced_under_the_drawn_key_is_never_drawn_again():
    # rank 0 swaps its real tensor in for the agreed placeholder: each key is drawn
    # once, so every rank's kind test of a drawn value reads the broadcast one
    assert _replaced() == []


def test_a_value_stored_under_another_key_is_drawn_later():
    assert _replaced(store="meta['next'] = full[key]") == [("CSL101", 20)]


def test_the_replaced_value_read_in_the_same_iteration_still_differs():
    assert _replaced(read="if meta[key] is None:\n                dist.barrier()") == [("CSL101", 18)]


def test_a_dict_changed_by_a_method_in_the_loop_draws_what_it_holds_then():
    assert _replaced(read="meta.update(full)") == [("CSL101", 20)]
