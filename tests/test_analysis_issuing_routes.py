"""Arms that issue one operation over one group through different
communicators part the ranks (issue 12: results a user can trust; issue 14,
complementary-role-arms).

``if rank == 0: comm.all_reduce(t) else: dist.all_reduce(t, group=g)``,
``comm`` a PyNccl-style communicator built over ``g``'s ranks: both arms
all-reduce over the same ranks, but through two NCCL communicators, and a
rank in one waits for peers that wait in the other.  So do a gloo and an
NCCL group made over one rank list.  The arm comparison reads, beside the
operation and the group, the communicator each collective is asked of
(``Site.route``, ``analysis/issuingroutes.py``): the object whose method it
is, or the process group a library function is handed, followed through a
function of the tree to what the call passes it.  Where the route is not
known (a library helper over a fixed group picks its coordinator's
communicator itself), arms compare as before, so the same object reached by
other spellings or helpers still matches."""

import textwrap

from cslint.analysis.facts import extract_file_facts
from cslint.analysis.issuingroutes import function_routes
from cslint.analysis.program import Program
from cslint.analysis.records import IssuingRoute
from cslint.api import check_source
from cslint.config import Settings
from cslint.presets import load_presets

_HEADER = """
    import torch
    import torch.distributed as dist
    from vllm.distributed import get_tp_group, tensor_model_parallel_all_reduce


    class FastComm:
        def __init__(self, group, device):
            self.group = group

        def all_reduce(self, x):
            dist.all_reduce(x, group=self.group)
            return x


    def reduce_over(x, group):
        dist.all_reduce(x, group=group)
        return x


    def reduce_tp(x):
        return get_tp_group().all_reduce(x)


    class Coordinator:
        def __init__(self, ranks, device):
            cpu_group = dist.new_group(ranks, backend="gloo")
            device_group = dist.new_group(ranks)
            self.cpu_group = cpu_group
            self.device_group = device_group
            self.fast_comm = FastComm(group=self.cpu_group, device=device)
"""

_FIRST = len(textwrap.dedent(_HEADER).splitlines())


def _lines(body):
    source = textwrap.dedent(_HEADER) + textwrap.dedent(body)
    return sorted(f.line - _FIRST for f in check_source(source, report="per-site").findings)


def test_a_communicator_object_and_the_process_group_part_the_ranks():
    # Rank 0 all-reduces through the communicator's own NCCL communicator,
    # the others through the device group's: two communicators, one hang.
    assert _lines("""
        class Chooser(Coordinator):
            def all_reduce_by_rank(self, x):
                if dist.get_rank() == 0:
                    comm = self.fast_comm
                    return comm.all_reduce(x)
                dist.all_reduce(x, group=self.device_group)
                return x
    """) == [6, 7]


def test_two_process_groups_over_one_rank_list_part_the_ranks():
    assert _lines("""
        class Chooser(Coordinator):
            def all_reduce_by_rank(self, x):
                if dist.get_rank() == 0:
                    dist.all_reduce(x, group=self.cpu_group)
                else:
                    dist.all_reduce(x, group=self.device_group)
                return x
    """) == [5, 7]


def test_a_helper_handed_another_group_of_the_same_ranks_parts_the_ranks():
    # The helper all-reduces over the group it is handed: the gloo group in
    # one arm, the device group in the other.
    assert _lines("""
        def all_reduce_by_rank(x):
            if dist.get_rank() == 0:
                return reduce_over(x, get_tp_group().cpu_group)
            dist.all_reduce(x, group=get_tp_group().device_group)
            return x
    """) == [4, 5]


def test_one_communicator_by_two_spellings_still_matches():
    # Two locals bound to the same field: one communicator.
    assert _lines("""
        class Chooser(Coordinator):
            def all_reduce_by_rank(self, x):
                if dist.get_rank() == 0:
                    comm = self.fast_comm
                    return comm.all_reduce(x)
                fast = self.fast_comm
                return fast.all_reduce(x)
    """) == []


def test_one_group_through_a_helper_still_matches():
    # The helper is handed the very group the other arm names.
    assert _lines("""
        def all_reduce_by_rank(x):
            if dist.get_rank() == 0:
                return reduce_over(x, get_tp_group().device_group)
            dist.all_reduce(x, group=get_tp_group().device_group)
            return x
    """) == []


def test_a_wrapper_of_the_groups_method_still_matches():
    # A function of the tree that asks the same coordinator, and a library
    # helper named for the operation (its communicator its own choice).
    assert _lines("""
        def all_reduce_by_rank(x):
            if dist.get_rank() == 0:
                return reduce_tp(x)
            return get_tp_group().all_reduce(x)

        def library_helper_by_rank(x):
            if dist.get_rank() == 0:
                return tensor_model_parallel_all_reduce(x)
            return get_tp_group().all_reduce(x)
    """) == []


def test_one_getter_through_two_holders_still_matches():
    # A group handed back by a getter is named by the getter: the engine
    # reaches the same grid by two fields.
    assert _lines("""
        class Engine:
            def __init__(self, grid):
                self.grid = grid
                self.mpu = grid

            def share_losses(self, losses):
                if dist.get_rank() == 0:
                    dist.broadcast(losses, src=0, group=self.mpu.get_pipe_parallel_group())
                else:
                    dist.broadcast(losses, src=0, group=self.grid.get_pipe_parallel_group())
                return losses
    """) == []


def test_a_group_and_torch_distributed_handed_it_still_match():
    # torch.distributed runs on the group's own backend, as its method does.
    assert _lines("""
        def share(x, group):
            if dist.get_rank() == 0:
                dist.broadcast(x, src=0, group=group)
            else:
                group.broadcast(x, src=0)
            return x
    """) == []


def test_a_coordinator_found_by_its_name_is_not_read_as_the_name():
    # ``_groups[name]()`` hands back the coordinator registered under
    # ``name``: the call's receiver is that object, not the name the caller
    # passes, so what it asks is unknown here and the arms compare as before.
    assert _lines("""
        import weakref

        _groups = {}


        def reduce_in_place(x, group_name):
            group = _groups[group_name]()
            group.reduce_here(x)


        class Named(Coordinator):
            def __init__(self, ranks, name, device):
                super().__init__(ranks, device)
                self.unique_name = name
                _groups[name] = weakref.ref(self)

            def reduce_here(self, x):
                self.fast_comm.all_reduce(x)

            def all_reduce_by_rank(self, x):
                if dist.get_rank() == 0:
                    reduce_in_place(x, group_name=self.unique_name)
                else:
                    self.fast_comm.all_reduce(x)
                return x
    """) == []


_CYCLE = textwrap.dedent("""
    import torch.distributed as dist


    class Worker:
        def __init__(self, group):
            self.group = group

        def reduce_over(self, group, x, depth):
            dist.all_reduce(x, group=group)
            if depth > 0:
                self.reduce_again(x, depth - 1)

        def reduce_again(self, x, depth):
            self.reduce_over(self.group, x, depth)
""")


def _routes_asked(order: tuple) -> dict:
    """The routes of the cycle's functions, asked in ``order`` of one fresh table."""
    knowledge = load_presets(["torch_distributed"])
    program = Program([extract_file_facts("pkg/work.py", _CYCLE.encode(), Settings(), knowledge,
                                          module="pkg.work")], knowledge)
    program.solve()
    by_name = {fn.qualname.rsplit(".", 1)[-1]: fn for fn in program.funcs.values()}
    memo: dict = {}
    return {name: function_routes(program, by_name[name], frozenset(), memo) for name in order}


def test_what_a_function_of_a_call_cycle_issues_does_not_depend_on_which_is_asked_first():
    # each call from one function of the cycle to another issues by an unknown route, whichever was asked first;
    # the collective a function issues itself keeps its own route
    first = _routes_asked(("reduce_over", "reduce_again"))
    assert first == _routes_asked(("reduce_again", "reduce_over"))
    assert first["reduce_again"] == {("all_reduce", "group:self.group"): {None}}
    assert first["reduce_over"][("all_reduce", "group:group")] == {IssuingRoute("", "group")}


_SELF_CALL = textwrap.dedent("""
    import torch.distributed as dist


    def reduce_down(x, group, depth):
        dist.all_reduce(x, group=group)
        if depth > 0:
            reduce_down(x, None, depth - 1)


    def reduce_once(x, group):
        dist.all_reduce(x, group=group)
        reduce_down(x, group, 1)
""")


def test_a_function_that_calls_itself_is_a_cycle_of_its_own():
    # its call of itself issues by an unknown route; a caller outside the cycle is in none
    knowledge = load_presets(["torch_distributed"])
    program = Program([extract_file_facts("pkg/work.py", _SELF_CALL.encode(), Settings(), knowledge,
                                          module="pkg.work")], knowledge)
    program.solve()
    by_name = {fn.qualname.rsplit(".", 1)[-1]: fn for fn in program.funcs.values()}
    memo: dict = {}
    assert function_routes(program, by_name["reduce_once"], frozenset(), memo) == {
        ("all_reduce", "group:group"): {IssuingRoute("", "group")}, ("all_reduce", "world"): {None}}
    assert {key: members for key, members in memo.items() if key[0] == "cycle"} == {
        ("cycle", "pkg.work:reduce_down", frozenset()): frozenset({"pkg.work:reduce_down"})}
    assert function_routes(program, by_name["reduce_down"], frozenset(), memo) == {
        ("all_reduce", "group:group"): {IssuingRoute("", "group")}, ("all_reduce", "world"): {None}}


def test_the_default_group_by_its_name_is_the_default_group():
    # ``group=dist.group.WORLD`` (or None, GroupMember.WORLD) names the group a collective handed none runs over
    assert _lines("""
        from torch.distributed import GroupMember


        def by_name(x):
            if dist.get_rank() == 0:
                dist.all_reduce(x)
            else:
                dist.all_reduce(x, group=dist.group.WORLD)


        def by_member(x):
            if dist.get_rank() == 0:
                torch.distributed.all_reduce(x, group=None)
            else:
                dist.all_reduce(x, group=GroupMember.WORLD)
    """) == []


def test_a_group_handed_in_and_the_default_group_stay_apart():
    assert _lines("""
        def handed(x, group):
            if dist.get_rank() == 0:
                dist.all_reduce(x, group=group)
            else:
                dist.all_reduce(x, group=dist.group.WORLD)
    """) == [4, 6]


def test_a_world_field_of_a_group_handed_in_is_not_the_default_group():
    # INVALID: ``group`` is what the caller hands (an object whose field WORLD is a gloo group), not the
    # ``group`` of torch.distributed: rank 0 all-reduces over the gloo group, the others over the default one
    # (reviewA53 grp/g1); so where it shadows an import of torch.distributed's ``group``, a parameter of an
    # enclosing function, or a module-level assignment
    assert _lines("""
        class Groups:
            def __init__(self, ranks):
                self.WORLD = dist.new_group(ranks, backend="gloo")


        def handed(x, group: Groups):
            if dist.get_rank() == 0:
                dist.all_reduce(x, group=group.WORLD)
            else:
                dist.all_reduce(x)
    """) == [9, 11]
    assert _lines("""
        from torch.distributed import group


        def shadowed(x, group):
            if dist.get_rank() == 0:
                dist.all_reduce(x, group=group.WORLD)
            else:
                dist.all_reduce(x)


        def enclosing(x, group):
            def run():
                if dist.get_rank() == 0:
                    dist.all_reduce(x, group=group.WORLD)
                else:
                    dist.all_reduce(x)
            run()
    """) == [7, 9, 15, 17]
    assert _lines("""
        class Holder:
            pass


        GroupMember = Holder()
        GroupMember.WORLD = dist.new_group([0, 1], backend="gloo")


        def reassigned(x):
            if dist.get_rank() == 0:
                dist.all_reduce(x, group=GroupMember.WORLD)
            else:
                dist.all_reduce(x)
    """) == [12, 14]


def test_the_default_group_by_its_imported_names_is_the_default_group():
    # VALID: each name imported from torch.distributed (or its c10d module), at the top or in the function
    assert _lines("""
        from torch.distributed import group
        from torch.distributed import distributed_c10d as c10d


        def by_group(x):
            if dist.get_rank() == 0:
                dist.all_reduce(x)
            else:
                dist.all_reduce(x, group=group.WORLD)


        def by_c10d_member(x):
            if dist.get_rank() == 0:
                dist.all_reduce(x)
            else:
                dist.all_reduce(x, group=c10d.GroupMember.WORLD)


        def by_local_import(x):
            import torch.distributed as tdist
            if dist.get_rank() == 0:
                dist.all_reduce(x)
            else:
                dist.all_reduce(x, group=tdist.group.WORLD)
    """) == []


def test_a_constructor_asks_what_its_call_hands_the_field_it_sets():
    # ``self.group = group`` in ``__init__``: the object's own barrier runs through what the call passes there
    # (program.passed_argument, read by bound_group and the routes alike)
    body = """
        class Mailbox:
            def __init__(self, group):
                self.group = group
                dist.barrier(group=self.group)


        def open_by_rank():
            if dist.get_rank() == 0:
                return Mailbox(get_tp_group().HANDED)
            dist.barrier(group=get_tp_group().device_group)
    """
    assert _lines(body.replace("HANDED", "cpu_group")) == [10, 11]
    assert _lines(body.replace("HANDED", "device_group")) == []
