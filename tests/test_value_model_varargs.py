"""A ``*args`` parameter is a tuple of what the call writes out in its
positions (issue 14, object-taint-spread).

A trainer's ``prepare(*objects)`` takes this rank's shard of the data beside
the model.  The tuple it collects is as long as the positional arguments the
call writes out, on every rank, whatever one of them holds: a test of its
length, or of the list a comprehension over it builds and hands back, is the
same everywhere.  Before, the parameter stood for its first argument alone:
the shard's own structure made the tuple's length differ, and a shard passed
second was not seen at all.  A call that spreads a per-rank list into the
positions (``prepare(model, *rows)``) still makes the length differ."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings]


_TRAINER = """
    import torch.distributed as dist


    class Trainer:
        def prepare(self, *objects):
            if {test}:
                dist.barrier()
            return objects

        def wrap_all(self, *objects):
            wrapped = [self.wrap(obj) for obj in objects]
            return wrapped

        def wrap(self, obj):
            return obj

        def fit(self, model, rows):
            mine = per_rank_rows(rows)
            {call}


    def per_rank_rows(rows):
        return [r for r in rows if r % dist.get_world_size() == dist.get_rank()]
"""


def _trainer(test="len(objects) > 1", call="self.prepare(mine, model)"):
    return _TRAINER.replace("{test}", test).replace("{call}", call)


def test_the_tuple_is_as_long_as_the_arguments_written_out():
    assert _codes(_trainer()) == []


def test_a_list_built_over_the_tuple_and_handed_back_is_as_long():
    call = """prepared = self.wrap_all(mine, model)
            if len(prepared) > 1:
                dist.barrier()"""
    assert _codes(_trainer(test="False", call=call)) == []


def test_the_tuple_handed_back_is_as_long():
    call = """prepared = self.prepare(mine, model)
            if len(prepared) > 1:
                dist.barrier()"""
    assert _codes(_trainer(test="False", call=call)) == []


def test_an_element_still_holds_the_shard():
    assert _codes(_trainer(test="not objects[0]")) == [("CSL101", 8)]


def test_every_argument_written_out_reaches_the_elements():
    test = "any(not obj for obj in objects)"
    assert _codes(_trainer(test=test, call="self.prepare(model, mine)")) == [("CSL101", 8)]


def test_a_spread_per_rank_list_makes_the_length_differ():
    assert _codes(_trainer(call="self.prepare(model, *mine)")) == [("CSL101", 8)]


def test_a_second_spread_list_makes_the_length_differ_too():
    assert _codes(_trainer(call="self.prepare(*[model], *mine)")) == [("CSL101", 8)]


_CHECKER = """
    import torch.distributed as dist


    class Checker:
        def check_all(self, {params}):
            for obj in objects:
                self.check(obj)

        def check(self, obj):
            if obj is None:
                dist.barrier()

        def run(self, model):
            mine = model if dist.get_rank() == 0 else None
            self.check_all({passed})
"""


def test_an_element_handed_on_from_the_tuple_keeps_its_own_structure():
    # the element's None-ness is its own, not the tuple's length
    source = _CHECKER.replace("{params}", "*objects").replace("{passed}", "mine, model")
    assert _codes(source) == [("CSL101", 12)]


def test_an_element_handed_on_from_a_list_written_out_keeps_its_own_structure():
    source = _CHECKER.replace("{params}", "objects").replace("{passed}", "[mine, model]")
    assert _codes(source) == [("CSL101", 12)]


def test_an_element_read_by_index_or_unpacked_keeps_its_own_structure():
    by_index = _CHECKER.replace("{params}", "*objects").replace("{passed}", "mine, model").replace(
        "for obj in objects:\n                self.check(obj)", "obj = objects[0]\n            self.check(obj)")
    unpacked = by_index.replace("obj = objects[0]", "obj, _ = objects")
    assert _codes(by_index) == [("CSL101", 12)]
    assert _codes(unpacked) == [("CSL101", 12)]
