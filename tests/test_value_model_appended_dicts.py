"""A list field filled by ``append`` of dicts a function writes out with
computed keys keeps, per element, the dicts' own structure and their values'
own structure apart from what the values hold: ``self.plans.append(
self._plan_for(buf))`` then ``for plan in self.plans: for kind, spans in
plan.items(): for span in spans:`` runs as many times as the comprehension
written under the key has generators, whatever each span holds
(``entries.appended_entry_writes`` writes the positions, ``entries.element_own``
reads them through a name a loop over the field binds, and nothing else).  A
loop straight over a list comprehension runs once per iteration of its
generators (``StructureReads.kept_apart``).  A length, a key or an appended
value the rank decides, and a name bound another way too, still differ."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_SHARDER = """
    import torch.distributed as dist


    class Sharder:
        def _span(self, buf, index):
            rank = buf.group.rank()
            width = buf.chunks[index] // buf.group.size()
            return {"owned": [c for c in buf.chunks if c > rank * width]}

        def _plan_for(self, buf):
            return {{KEYS}: [self._span(buf, i) for i in range({COUNT})]}

        def __init__(self, bufs, group):
            self.group = group
            self.plans = []
            for buf in bufs:
                self.plans.append(self._plan_for(buf))
            {MORE}

        def scatter_all(self, out, bufs):
            {READ}
                for kind, spans in plan.items():
                    for j, span in enumerate(spans):
                        dist.scatter(out, None, 0, group=self.group)
"""

_FIELD_LOOP = "for i, plan in enumerate(self.plans):"
_LOCAL_LOOP = "for plan in [self._plan_for(b) for b in bufs]:"


def _sharder(keys="(buf.kind, buf.width)", count="len(buf.chunks)", more="", read=_FIELD_LOOP):
    return _SHARDER.replace("{KEYS}", keys).replace("{COUNT}", count).replace("{MORE}", more or "pass") \
        .replace("{READ}", read)


def test_a_loop_over_the_appended_dicts_values_runs_as_their_generators_say():
    assert _codes(_sharder()) == []


def test_a_loop_straight_over_the_field_runs_as_its_generators_say():
    assert _codes(_sharder(read="for plan in self.plans:")) == []


def test_a_loop_over_a_comprehension_of_such_calls_runs_as_their_generators_say():
    assert _codes(_sharder(read=_LOCAL_LOOP)) == []


def test_values_as_long_as_the_rank_says_still_differ():
    assert _codes(_sharder(count="buf.group.rank()")) == [("CSL103", 25)]
    assert _codes(_sharder(count="buf.group.rank()", read=_LOCAL_LOOP)) == [("CSL103", 25)]


def test_a_key_the_rank_decides_beside_another_still_differs():
    keys = "(buf.kind, 0): [], (buf.group.rank(), 1)"
    (finding,) = check_source(textwrap.dedent(_sharder(keys=keys))).findings
    assert (finding.code, finding.line) == ("CSL103", 25) and "`plan.items()`" in finding.message


def test_another_value_the_rank_decides_appended_to_the_field_still_differs():
    more = "self.plans.append({(0, 0): list(range(group.rank()))})"
    assert _codes(_sharder(more=more)) == [("CSL103", 25)]


def test_the_field_filled_another_way_too_still_differs():
    more = "self.plans.extend([self._plan_for(buf) for buf in bufs])"
    assert _codes(_sharder(more=more)) == [("CSL103", 25)]


def test_the_name_bound_to_the_field_itself_too_still_differs():
    read = "plan = self.plans\n            for plan in self.plans:"
    assert _codes(_sharder(read=read)) == [("CSL103", 26)]


def test_a_comprehension_whose_filter_the_rank_decides_still_differs():
    read = "for plan in [self._plan_for(b) for b in bufs if self.group.rank()]:"
    assert _codes(_sharder(read=read)) == [("CSL103", 25)]


def test_an_element_emptied_on_some_ranks_through_the_loop_name_still_differs():
    read = "for i, plan in enumerate(self.plans):\n                if self.group.rank() == 0:\n" \
           "                    plan.clear()"
    assert _codes(_sharder(read=read)) == [("CSL103", 27)]


def test_an_element_emptied_on_some_ranks_through_the_field_still_differs():
    more = "if group.rank() == 0:\n                self.plans[0].clear()"
    assert _codes(_sharder(more=more)) == [("CSL103", 26)]
