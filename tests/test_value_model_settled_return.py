"""Which ``return`` a rank takes decides nothing of what it hands back when
every ``return`` of the function names one variable, settled before the
first of them (issue 14, object-taint-spread).

A trainer's ``convert`` builds one wrapped object per argument, then leaves
early where an element is not ready, or at its end: both ways hand back the
same list.  The test choosing the way reads this rank's data, but the list
is as long either way, so a caller's test of its length is the same on
every rank.  Where the variable is still changed between the returns (an
element appended after the early one), or the returns name different
variables, the choice still reaches the result."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings]


_TRAINER = """
    import torch.distributed as dist


    class Trainer:
        def convert(self, *objects):
            converted = [self.wrap(obj) for obj in objects]
            for obj in converted:
                if not obj:
                    return {early}
            {between}
            return converted

        def wrap(self, obj):
            return obj

        def fit(self, model, rows):
            mine = per_rank_rows(rows)
            converted = self.convert(mine, model)
            if len(converted) > 1:
                dist.barrier()


    def per_rank_rows(rows):
        return [r for r in rows if r % dist.get_world_size() == dist.get_rank()]
"""


def _trainer(early="converted", between="pass"):
    return _TRAINER.replace("{early}", early).replace("{between}", between)


def test_every_way_out_hands_back_the_same_list():
    assert _codes(_trainer()) == []


def test_a_list_changed_after_the_early_return_still_differs():
    assert _codes(_trainer(between="converted.append(None)")) == [("CSL101", 21)]


def test_returns_of_different_lists_still_differ():
    assert _codes(_trainer(early="[]")) == [("CSL101", 21)]
