"""A hazard whose condition differs only through its function's parameters
is asked of the calls of the tree (issue 14, a rank coordinate of one group
guarding a collective over another): each call binds the collective's group
where the function takes it as a parameter, and a value is rank-local at a
call only where it differs over the groups that call binds.  A stage
predicate's value handed to a helper together with a group inside one
stage is the same on every rank of that group; handed with the PP group,
the world, or a group the rank chooses, it is not.  Each shape that must
stay quiet sits beside the one that must still be reported."""

import textwrap

from cslint.api import check_source

HELPER = """
    import torch.distributed as dist
    from vllm.distributed import get_dp_group, get_pp_group, get_tp_group

    def reserve(group, n, max_size):
        if n <= max_size:
            return
        dist.barrier(group=group)
"""


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(HELPER + source), report="per-site").findings)


def test_a_stage_predicates_value_handed_with_a_group_inside_one_stage_parts_no_member():
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        reserve(get_tp_group().cpu_group, n, size)
        reserve(get_dp_group().cpu_group, n, size)
    """) == []


def test_the_same_value_handed_with_a_group_spanning_the_stages_stays_reported():
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        reserve(get_pp_group().cpu_group, n, size)
    """) == [8]
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        reserve(None, n, size)            # None: the world
    """) == [8]


def test_a_rank_of_the_group_itself_stays_reported():
    assert _lines("""
    def prepare(n):
        size = 10 if get_tp_group().rank_in_group == 0 else 20
        reserve(get_tp_group().cpu_group, n, size)
    """) == [8]


def test_one_call_binding_a_group_across_the_stages_is_reported_at_that_call():
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        reserve(get_tp_group().cpu_group, n, size)
        reserve(get_pp_group().cpu_group, n, size)       # reported here
    """) == [13]
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        reserve(get_tp_group().cpu_group, n, size)
        reserve(None, n, 10 if dist.get_rank() == 0 else 20)   # reported here
    """) == [13]


def test_a_group_the_rank_chooses_shares_nothing():
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        group = get_tp_group().cpu_group if get_pp_group().is_first_rank else get_pp_group().cpu_group
        reserve(group, n, size)
    """) == [8]
    assert _lines("""
    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        reserve(get_tp_group().cpu_group if dist.get_rank() else None, n, size)
    """) == [8]


def test_a_group_and_a_value_handed_on_through_another_helper_are_bound_at_the_outer_call():
    assert _lines("""
    def middle(group, n, size):
        reserve(group, n, size)

    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        middle(get_tp_group().cpu_group, n, size)
    """) == []
    assert _lines("""
    def middle(group, n, size):
        reserve(group, n, size)

    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        middle(get_pp_group().cpu_group, n, size)
    """) == [8]
    assert _lines("""
    def middle(n, size):
        reserve(None, n, size)            # the helper binds the world itself

    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        middle(n, size)
    """) == [8]


def test_a_stage_predicates_value_held_in_a_field_is_bound_alike():
    assert _lines("""
    class Stage:
        def __init__(self):
            self.size = 10 if get_pp_group().is_first_rank else 20

        def prepare(self, n):
            reserve(get_tp_group().cpu_group, n, self.size)
    """) == []
    assert _lines("""
    class Stage:
        def __init__(self):
            self.size = 10 if get_pp_group().is_first_rank else 20

        def prepare(self, n):
            reserve(get_pp_group().cpu_group, n, self.size)
    """) == [8]


def test_a_collective_the_helper_runs_over_a_group_of_its_own_is_judged_by_that_group():
    # the barrier over the parameter is bound to TP at the one call and parts no member; the world
    # barrier under the same test, and a helper deciding by a value of its own too, stay reported
    assert sorted(f.line for f in check_source(textwrap.dedent("""
        import torch.distributed as dist
        from vllm.distributed import get_pp_group, get_tp_group

        def reserve(group, n, max_size):
            if n <= max_size:
                return
            dist.barrier(group=group)
            dist.barrier()

        def reserve_staged(group, n, max_size):
            if n <= max_size or get_pp_group().is_last_rank:
                return
            dist.barrier(group=group)

        def prepare(n):
            size = 10 if get_pp_group().is_first_rank else 20
            reserve(get_tp_group().cpu_group, n, size)
            reserve_staged(None, n, size)
    """), report="per-site").findings) == [9, 14]



COORDINATOR = """
    import torch.distributed as dist
    from vllm.distributed import get_pp_group, get_tp_group

    class Coordinator:
        def __init__(self, cpu_group):
            self.cpu_group = cpu_group

        def reserve(self, n, size):
            if n <= size:
                return
            dist.barrier(group=self.cpu_group)
"""


def _coordinator_lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(COORDINATOR + source), report="per-site").findings)


def test_a_coordinators_method_is_bound_to_the_group_object_it_is_called_on():
    source = """
    _TP = _PP = None

    def tp_coordinator_group() -> Coordinator:
        return _TP

    def pp_coordinator_group() -> Coordinator:
        return _PP

    def prepare(n):
        size = 10 if get_pp_group().is_first_rank else 20
        GETTER().reserve(n, size)
    """
    assert _coordinator_lines(source.replace("GETTER", "tp_coordinator_group")) == []
    assert _coordinator_lines(source.replace("GETTER", "pp_coordinator_group")) == [12]


def test_an_object_of_the_tree_merely_named_after_a_group_holds_no_known_group():
    # two constructions hand the field two groups; the receiver's name says tp, the object it
    # holds was built over the PP group: what it holds stays unknown, and the test stays reported
    source = """
    class Stage:
        def __init__(self):
            self.FIELD = Coordinator(get_pp_group().cpu_group)
            self.spare = Coordinator(get_tp_group().cpu_group)

        def prepare(self, n):
            size = 10 if get_pp_group().is_first_rank else 20
            self.FIELD.reserve(n, size)
    """
    assert _coordinator_lines(source.replace("FIELD", "tp_comm")) == [12]
    assert _coordinator_lines(source.replace("FIELD", "comm")) == [12]
