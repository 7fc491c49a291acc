"""A parameter keeps the caller's own structure of its argument apart from
its elements' (``atoms.OWN_PARAM``): a caller hands a list whose length is
the same on every rank (written out, filled by ``append`` once per member,
a comprehension) while its elements differ, and the callee's ``not x``,
``len(x)``, ``isinstance(x, list)``, ``x is None`` and a pass-through on the
empty edge (``if not flags: return flags``) read that own structure, not
the elements.  Each valid shape is paired with an argument whose length or
None-ness really differs per rank, which must still be reported through the
callee."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_REDUCER = """
    import random
    from typing import List

    import torch
    import torch.distributed as dist

    def reduce_flags(flags: List[int], group):
        if not flags or dist.get_world_size(group) == 1:
            return flags
        t = torch.tensor(flags)
        dist.all_reduce(t, group=group)
        return t.tolist()

    def poll(items):
        return [0 if random.random() < 0.1 else 1 for item in items]

    def step(items, group):
        polls = {fill}
        done = reduce_flags(polls, group)
        if not done:
            return
        dist.barrier(group=group)
"""


def _step(fill="poll(items)"):
    return _REDUCER.replace("{fill}", fill)


# -- valid: the argument's own structure is alike -------------------------------------


def test_empty_list_pass_through_hands_back_the_callers_own_structure():
    assert _codes(_step()) == []


def test_pass_through_over_a_helper_that_relays_its_parameter():
    source = _step().replace("done = reduce_flags(polls, group)", "done = relay(polls, group)") + """
    def relay(polls: List[int], group):
        return reduce_flags(flags=polls, group=group)
"""
    assert _codes(source) == []


def test_kind_test_of_a_list_written_out_is_alike():
    source = """
        import torch
        import torch.distributed as dist

        class Machine:
            def _reduce_any(self, value):
                if isinstance(value, list):
                    flags = torch.tensor(value)
                    dist.all_reduce(flags)
                    return tuple(x > 0 for x in flags.tolist())

            def step(self):
                if self.state == 2:
                    again, cont = self._reduce_any([self.again, self.cont])

            def validate(self):
                if torch.cuda.current_device() == self.device:
                    self.again = True
    """
    assert _codes(source) == []


def test_length_of_a_list_filled_once_per_member_is_alike():
    source = """
        import torch.distributed as dist

        def gate(xs, group):
            if len(xs) > 2:
                dist.barrier(group=group)

        def step(handles, group, t):
            rank = dist.get_rank(group)
            out = []
            for member, h in enumerate(handles):
                out.append(t if member == rank else h)
            gate(out, group)
    """
    assert _codes(source) == []


# -- invalid: the argument's own structure differs, reported through the callee --------


def test_a_list_filled_on_some_ranks_only_is_still_reported():
    source = _step(fill="[x for x in items if random.random() < 0.5]")
    assert _codes(source) != []


def test_length_differing_per_rank_is_still_reported_through_the_callee():
    source = """
        import torch.distributed as dist

        def gate(xs, group):
            if len(xs) > 2:
                dist.barrier(group=group)

        def step(handles, group):
            rank = dist.get_rank(group)
            out = []
            for member, h in enumerate(handles):
                if member == rank:
                    out.append(h)
                    out.append(h)
            gate(out, group)
    """
    assert _codes(source) != []


def test_kind_differing_per_rank_is_still_reported():
    source = """
        import torch
        import torch.distributed as dist

        def reduce_any(value):
            if isinstance(value, list):
                dist.all_reduce(torch.tensor(value))

        def step(a, b):
            value = [a, b] if dist.get_rank() == 0 else a
            reduce_any(value)
    """
    assert _codes(source) != []


def test_none_differing_per_rank_is_still_reported():
    source = """
        import torch.distributed as dist

        def gate(xs):
            if xs is None:
                return
            dist.barrier()

        def step(items):
            xs = []
            for item in items:
                xs.append(item)
            if dist.get_rank() == 0:
                xs = None
            gate(xs)
    """
    assert _codes(source) != []


def test_an_element_read_of_the_argument_still_differs():
    source = """
        import random
        import torch.distributed as dist

        def gate(flags):
            if flags[0]:
                dist.barrier()

        def step(items):
            gate([random.random() < 0.5, True])
    """
    assert _codes(source) != []


# -- an index store into a list keeps its length (lists.py) ---------------------------

_STORES = """
    import random
    import torch.distributed as dist

    def poll(items):
        return [1 if random.random() < 0.5 else 0 for item in items]

    def step(items, group):
        raw = {bind}
        for i, item in enumerate(items):
            if raw[i] == 1 and item.ready():
                raw[{key}] = 2
        if len(raw) > 3:
            dist.barrier(group=group)
"""


def test_index_store_into_a_list_keeps_its_length():
    assert _codes(_STORES.replace("{bind}", "poll(items)").replace("{key}", "i")) == []


def test_index_store_into_a_list_written_out_keeps_its_length():
    source = _STORES.replace("{bind}", "[0] * len(items)").replace("{key}", "i").replace(
        "raw[i] == 1 and item.ready()", "random.random() < 0.5")
    assert _codes(source) == []


def test_store_into_a_dict_under_a_rank_local_test_still_differs():
    source = _STORES.replace("{bind}", "{}").replace("{key}", "item").replace(
        "raw[i] == 1 and item.ready()", "random.random() < 0.5")
    assert _codes(source) != []


def test_a_name_also_bound_to_a_dict_is_no_list():
    # the dict binding reaches the store (one after the loop would not: tests/test_analysis_marked_lists.py)
    source = _STORES.replace("{bind}", "poll(items)").replace("{key}", "item").replace(
        "raw[i] == 1 and item.ready()", "random.random() < 0.5").replace(
        "        for i, item", "        if not items:\n            raw = {}\n        for i, item")
    assert _codes(source) != []


def test_polls_relayed_through_a_min_reducer_that_hands_back_an_empty_list():
    # the draws fill each entry; some entries are then rewritten by index under
    # tests of the entry and of local state; the list goes through two helpers
    # to a reducer that returns it as it is when empty: its length is the
    # pollers' everywhere, so a caller's test of the result's emptiness is alike
    source = """
        import random
        from typing import List

        import torch
        import torch.distributed as dist

        def draw(sources) -> List[int]:
            if CHANCE > 0:
                return [0 if random.random() < CHANCE else int(s.state()) for s in sources]
            return [int(s.state()) for s in sources]

        def reduce_min(values: List[int], group) -> List[int]:
            if not values or dist.get_world_size(group) == 1:
                return values
            buf = torch.tensor(values)
            dist.all_reduce(buf, op=dist.ReduceOp.MIN, group=group)
            return buf.tolist()

        def reduce_states(states: List[int], group) -> List[int]:
            return reduce_min(values=states, group=group)

        def poll_all(entries, group, sources):
            states = draw(sources)
            for i, entry in enumerate(entries):
                if entry.stalled():
                    states[i] = 0
                    continue
                if states[i] == 2 and not entry.copied():
                    states[i] = 1
            return reduce_states(states, group)

        class Waiting:
            def take(self):
                if not self.entries:
                    return []
                states = poll_all(self.entries, self.group, [e.source for e in self.entries])
                done = [i for i, s in enumerate(states) if s == 2]
                self.entries = [e for i, e in enumerate(self.entries) if i not in done]
                return done

            def tick(self):
                if not self.entries:
                    return
                dist.barrier(group=self.group)
    """
    assert _codes(source) == []
