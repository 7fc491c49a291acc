"""Stage predicates (``get_pp_group().is_first_rank``, ``self.pp_rank``) and
the group a collective runs over when that group reaches it from elsewhere
(issue 14, stage-predicate-in-tp-group): a stage predicate is the same on
every rank of a group inside one stage, and differs across a group that
spans the stages (the PP group, the world).  Each shape that must stay quiet
sits beside the one that must still be reported."""

import textwrap

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def test_a_group_passed_by_position_is_the_collectives_group():
    assert _lines("""
        import torch.distributed as dist
        from deepspeed import comm as ds
        from vllm.distributed import get_pp_group, get_tp_group

        def first_stage(t, names):
            if get_pp_group().is_first_rank:
                dist.barrier(get_tp_group().cpu_group)
                dist.all_reduce(t, dist.ReduceOp.MAX, get_tp_group().device_group)
                dist.all_gather_object(names, names[0], get_tp_group().cpu_group)
                ds.all_reduce(t, ds.ReduceOp.SUM, get_tp_group().device_group)

        def first_stage_over_the_stages(t):
            if get_pp_group().is_first_rank:
                dist.barrier(get_pp_group().cpu_group)          # reported
                dist.broadcast(t, 0, get_pp_group().device_group)   # reported
                ds.barrier()                                        # reported: the world
    """) == [15, 16, 17]


def test_a_helper_named_after_a_library_collective_is_followed_into_its_body():
    assert _lines("""
        from sglang.srt.distributed import get_attn_cp_group, get_attn_tp_group, get_pp_group
        from sglang.srt.utils import broadcast_pyobj

        def attn_cp_tp_broadcast_pyobj(data):
            tp_group = get_attn_tp_group()
            cp_group = get_attn_cp_group()
            if cp_group.world_size > 1 and tp_group.rank_in_group == 0:
                data = broadcast_pyobj(data, cp_group.rank, cp_group.cpu_group, src=cp_group.ranks[0])
            if tp_group.world_size > 1:
                data = broadcast_pyobj(data, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])
            return data

        def pp_broadcast_pyobj(data):
            return broadcast_pyobj(data, get_pp_group().rank, get_pp_group().cpu_group)

        def step(data):
            if get_pp_group().is_first_rank:
                data = attn_cp_tp_broadcast_pyobj(data)      # the groups of one stage
                data = pp_broadcast_pyobj(data)              # reported: the PP group
            return data
    """) == [20]


def test_a_field_holding_a_stage_local_group_is_that_group():
    assert _lines("""
        import torch.distributed as dist
        from sglang.srt.distributed import get_pp_group

        class Grammars:
            def __init__(self, scheduler):
                self.sync_group = scheduler.dp_tp_cpu_group   # the DP and TP ranks of one stage
                self.stages = None
                self.pp_rank = get_pp_group().rank_in_group

            def late(self, scheduler):
                self.stages = scheduler.pp_cpu_group          # None, then the PP group

            def ready(self, found):
                gathered = [None] * 4
                if self.pp_rank == 0:
                    dist.all_gather_object(gathered, found, group=self.sync_group)
                    dist.barrier(self.stages)                  # reported: the PP group spans the stages
                return gathered

        class Mixed:
            def __init__(self, scheduler, group):
                self.any_group = group if group is not None else scheduler.tp_cpu_group
                self.pp_rank = get_pp_group().rank_in_group

            def ready(self, found):
                if self.pp_rank == 0:
                    dist.barrier(group=self.any_group)         # reported: not every assignment names a group
    """) == [18, 28]


def test_a_collective_over_a_parameter_runs_over_the_group_the_caller_passes():
    assert _lines("""
        import torch.distributed as dist
        from vllm.distributed import get_pp_group, get_tp_group

        def reduce_flags(flags, group):
            dist.all_reduce(flags, group=group)
            return flags

        def reduce_polls(flags, tp_cpu_group):
            return reduce_flags(flags, tp_cpu_group)         # the parameter's name says tp

        def first_stage_polls(flags):
            if get_pp_group().is_first_rank:
                reduce_flags(flags, group=get_tp_group().cpu_group)
                reduce_polls(flags, get_tp_group().cpu_group)

        def over_the_world(flags):
            if get_pp_group().is_first_rank:
                reduce_flags(flags, None)                    # reported: None is the world

        def over_the_pp_group(flags):
            if get_pp_group().is_first_rank:
                reduce_flags(flags, get_pp_group().cpu_group)   # reported: the PP group spans the stages

        def over_what_the_caller_was_given(flags, group):
            if get_pp_group().is_first_rank:
                reduce_flags(flags, group)                   # reported: nothing says which group

        def the_default(flags, group=None):
            dist.all_reduce(flags, group=group)

        def left_to_the_default(flags):
            if get_pp_group().is_first_rank:
                the_default(flags)                           # reported: the default group is the world
    """) == [19, 23, 27, 34]


def test_a_coordinators_method_runs_over_the_group_it_is_called_on():
    assert _lines("""
        import torch.distributed as dist

        class Coordinator:
            def __init__(self, device_group):
                self.device_group = device_group
                self.is_first_rank = dist.get_rank(device_group) == 0

            def reduce_in_place(self, t):
                dist.all_reduce(t, group=self.device_group)

        def get_tp_group() -> Coordinator:
            return _TP

        def get_pp_group() -> Coordinator:
            return _PP

        def reduce_over(group, t):
            group.reduce_in_place(t)

        def first_stage(t, coordinator):
            if get_pp_group().is_first_rank:
                get_tp_group().reduce_in_place(t)
                reduce_over(get_tp_group(), t)
                get_pp_group().reduce_in_place(t)            # reported: the PP group spans the stages
                coordinator.reduce_in_place(t)               # reported: nothing says which group
    """) == [25, 26]


def test_a_local_bound_only_to_groups_is_the_group_spanning_them():
    assert _lines("""
        import torch.distributed as dist

        class Cache:
            def __init__(self, params):
                self.attn_cp_group = params.attn_cp_cache_group
                self.attn_tp_group = params.attn_tp_cache_group
                self.pp_group = params.pp_cache_group
                self.pp_rank = params.pp_rank

            def over_the_stage(self, t):
                for group in (self.attn_cp_group, self.attn_tp_group):   # tp_cp: one stage
                    dist.all_reduce(t, group=group)
                g = self.attn_tp_group
                dist.barrier(group=g)

            def over_the_stages(self, t):
                for group in [self.attn_tp_group, self.pp_group]:
                    dist.all_reduce(t, group=group)

            def over_a_list_of_groups(self, t, groups):
                for group in groups:
                    dist.all_reduce(t, group=group)

            def rebound(self, t, other):
                g = self.attn_tp_group
                with other as g:
                    dist.barrier(group=g)

            def sync(self, t, other):
                if self.pp_rank == 0:
                    self.over_the_stage(t)
                    self.over_the_stages(t)            # reported: the PP group spans the stages
                    self.over_a_list_of_groups(t, [])  # reported: nothing says which groups
                    self.rebound(t, other)             # reported: bound by a with too
    """) == [33, 34, 35]


def test_a_group_bound_through_the_same_objects_attributes_stays_finite():
    """A call through an attribute of the object a method runs on
    (``self.optim.step()`` inside ``step``, which the annotations resolve to
    that same ``step``) binds the callee's ``self.averager.process_group`` to
    ``self.optim.averager.process_group``; bound again on each round of the
    fixpoint, the path would grow until the round limit (torch 2.13's
    PostLocalSGDOptimizer).  Access paths are k-limited: a longer one keeps
    the callee's own text, so the tables stop growing."""
    from types import SimpleNamespace

    from cslint.analysis.program import MAX_GROUP_PATH_NAMES, bound_group

    step = SimpleNamespace(params=("self",), self_offset=1, free_names=frozenset())
    group = "group:self.averager.process_group"
    through = SimpleNamespace(group_args=(("self", "self.optim"),), star=False)
    seen = [group]
    for _ in range(10):
        bound = bound_group(through, step, 1, seen[-1])
        if bound == seen[-1]:
            break
        seen.append(bound)
    assert seen == ["group:self.averager.process_group", "group:self.optim.averager.process_group"]
    assert all(g[len("group:"):].count(".") < MAX_GROUP_PATH_NAMES for g in seen)
    # a group a caller passes by its own name is still bound (the k-limit does not apply to short paths)
    helper = SimpleNamespace(params=("t", "group"), self_offset=0, free_names=frozenset())
    assert bound_group(SimpleNamespace(group_args=(("group", "self.pg"),), star=False), helper, 0,
                       "group:group.cpu_group") == "group:self.pg.cpu_group"


def test_a_method_bound_only_where_the_pipeline_has_one_stage():
    """``if pp_size > 1: self.step = self._staged else: self.step = self._flat``:
    ``_flat`` (either side of the ``else`` arm's ``a if flag else b`` too) only
    runs where the pipeline group has one rank, so a stage predicate cannot
    differ between the ranks running it; ``_staged`` is still reported, and so
    is a method that is also called by name or handed on elsewhere."""
    assert _lines("""
        import threading
        import torch.distributed as dist
        from vllm.distributed import get_pp_group

        class Runner:
            def __init__(self, pp_size, eager):
                self.pp_size = pp_size
                if self.pp_size > 1:
                    self.step = self._step_staged
                else:
                    self.step = self._step_eager if eager else self._step_flat
                    self.side = self._step_called
                    self.other = self._step_handed
                threading.Thread(target=self._step_handed).start()

            def _step_flat(self, t):
                if get_pp_group().is_last_rank:
                    dist.all_reduce(t)

            def _step_eager(self, t):
                if get_pp_group().is_last_rank:
                    dist.all_reduce(t)

            def _step_staged(self, t):
                if get_pp_group().is_last_rank:
                    dist.all_reduce(t)

            def _step_called(self, t):
                if get_pp_group().is_last_rank:
                    dist.all_reduce(t)

            def _step_handed(self, t):
                if get_pp_group().is_last_rank:
                    dist.all_reduce(t)

            def run(self, t):
                self._step_called(t)
    """) == [27, 31, 35]


def test_a_group_unpacked_from_a_helpers_tuple_is_the_group_it_returns():
    # `device, group = _device_and_group()`: every return of the helper
    # writes out a pair whose second element names the DP group (either of
    # its two bindings), so the all-reduce runs inside one stage; a helper
    # that returns some other group there, or one it was handed, does not.
    assert _lines("""
        import torch.distributed as dist
        from vllm.distributed import get_dp_group, get_pp_group

        def _device_and_group(cpu):
            device = get_dp_group().device
            group = get_dp_group().device_group
            if cpu:
                device = "cpu"
                group = get_dp_group().cpu_group
            return device, group

        def _device_and_stage_group():
            return "cpu", get_pp_group().cpu_group

        def _device_and_given(group):
            return "cpu", group

        def _sync(t, cpu):
            device, group = _device_and_group(cpu)
            dist.all_reduce(t.to(device), group=group)

        def _sync_stages(t):
            device, group = _device_and_stage_group()
            dist.all_reduce(t.to(device), group=group)

        def _sync_given(t, g):
            device, group = _device_and_given(g)
            dist.all_reduce(t.to(device), group=group)

        def last_stage(t, cpu):
            if get_pp_group().is_last_rank:
                _sync(t, cpu)
                _sync_stages(t)          # reported: the PP group spans the stages
                _sync_given(t, None)     # reported: a group the helper was handed
    """) == [34, 35]


def test_an_attribute_of_a_local_holding_a_group_is_that_group():
    # `ps = get_ep_group()` then `ps.cpu_group`, or `getattr(ps, "cpu_group",
    # None)`: a group's own attributes are that group; a receiver the function
    # was handed says nothing.
    assert _lines("""
        import torch.distributed as dist
        from vllm.distributed import get_ep_group, get_pp_group

        def ready(flag):
            parallel_state = get_ep_group()
            cpu_group = getattr(parallel_state, "cpu_group", None)
            if cpu_group is not None:
                dist.all_reduce(flag, group=cpu_group)

        def ready_direct(flag):
            ep = get_ep_group()
            dist.all_reduce(flag, group=ep.device_group)

        def stage_ready(flag):
            pp = get_pp_group()
            dist.all_reduce(flag, group=getattr(pp, "cpu_group"))

        def given_ready(flag, coordinator):
            dist.all_reduce(flag, group=coordinator.cpu_group)

        def step(flag, coordinator):
            if get_pp_group().is_last_rank:
                ready(flag)
                ready_direct(flag)
                stage_ready(flag)               # reported: the PP group spans the stages
                given_ready(flag, coordinator)  # reported: a group the caller was handed
    """) == [26, 27]


def test_a_communicator_rebuilt_over_the_group_of_a_local_is_over_that_group():
    # `comm = get_tp_group().push_comm`, then under a stage-derived size
    # `comm = PushComm(comm.group, ...)`: the constructor runs over the group
    # of the communicator `comm` holds where it is read (the assignment it
    # sits in, and the later one, do not reach that read), so over TP.  A
    # local rebound to an unknown object before the read stays unknown, and a
    # loop round both lets the later binding reach it.  The field the
    # constructor sets from its group parameter holds what the call passes.
    assert _lines("""
        import torch.distributed as dist
        from sglang.srt.distributed import get_pp_group, get_tp_group

        class PushComm:
            def __init__(self, group, size):
                self.group = group
                sizes = [None] * dist.get_world_size(group)
                dist.all_gather_object(sizes, size, group=group)
                self.start(size)

            def start(self, size):
                dist.barrier(group=self.group)

        class Model:
            def __init__(self):
                self.pp_group = get_pp_group()
                self.cached = None

            def prepare(self, hidden):
                comm = get_tp_group().push_comm
                if self.cached is None:
                    if hidden.shape[0] > 64:
                        comm = PushComm(comm.group, hidden.shape[0])
                    self.cached = comm
                comm = self.cached
                return comm

            def prepare_given(self, hidden, other):
                comm = get_tp_group().push_comm
                comm = other.comm
                if hidden.shape[0] > 64:
                    comm = PushComm(comm.group, hidden.shape[0])   # reported: unknown group
                return comm

            def prepare_round(self, hidden, other):
                comm = get_tp_group().push_comm
                for size in hidden.shape:
                    if size > 64:
                        PushComm(comm.group, size)                 # reported: round the loop
                    comm = other.comm
                return comm

            def forward(self, x, proxy, other):
                if self.pp_group.is_first_rank:
                    hidden = x
                else:
                    hidden = proxy["hidden"]
                self.prepare(hidden)
                self.prepare_given(hidden, other)
                return self.prepare_round(hidden, other)
    """) == [33, 40]


def test_a_coordinators_own_collective_method_runs_over_the_coordinator_it_is_called_on():
    # A method of a group coordinator calls the coordinator's own all-reduce
    # (`self.all_reduce(t)`, a name the presets take for a collective): that
    # runs over the group of the object the caller calls it on, as the
    # coordinator's collectives over `self.device_group` do, not over the world.
    assert _lines("""
        import torch.distributed as dist

        class Coordinator:
            def __init__(self, device_group):
                self.device_group = device_group
                self.is_first_rank = dist.get_rank(device_group) == 0

            def all_reduce(self, t):
                dist.all_reduce(t, group=self.device_group)
                return t

            def reduce_scatter_tensor(self, out, t):
                reduced = self.all_reduce(t.clone())
                out.copy_(reduced)

        def get_tp_group() -> Coordinator:
            return _TP

        def get_pp_group() -> Coordinator:
            return _PP

        def first_stage(out, t, coordinator):
            if get_pp_group().is_first_rank:
                get_tp_group().reduce_scatter_tensor(out, t)
                get_pp_group().reduce_scatter_tensor(out, t)   # reported: the PP group spans the stages
                coordinator.reduce_scatter_tensor(out, t)      # reported: nothing says which group
    """) == [26, 27]


def test_a_group_held_by_a_local_and_passed_as_it_is_is_that_group():
    # `group = get_tp_group()` handed on bare (`gather(params, group)`), or
    # through a copy (`recv = group`), to a helper whose collective runs over
    # it, or over the coordinator it is (`recv_group.all_gather(t)`): the
    # collective runs over TP, inside the stage.  A helper that rebinds its
    # parameter (`recv_group = recv_group or default()`) runs over what it
    # rebinds it to, which the call does not say.
    assert _lines("""
        import torch.distributed as dist
        from vllm.distributed import get_pp_group, get_tp_group

        def gather_params(params, group):
            dist.all_gather(params, params[0], group=group.device_group)

        def exchange(t, recv_group=None):
            if recv_group is not None:
                t = recv_group.all_gather(t, dim=0)
            return t

        def exchange_or_default(t, recv_group=None):
            recv_group = recv_group or get_pp_group()
            return recv_group.all_gather(t, dim=0)

        def setup(params, t, given):
            group = get_tp_group()
            recv = group
            if get_pp_group().is_last_rank:
                gather_params(params, group)
                exchange(t, recv_group=recv)
                other = get_pp_group()
                gather_params(params, other)     # reported: the PP group spans the stages
                exchange(t, recv_group=other)    # reported
                gather_params(params, given)     # reported: nothing says which group
                exchange(t, recv_group=given)    # reported
                exchange_or_default(t, recv)     # reported: the helper may use its own group instead
    """) == [24, 25, 26, 27, 28]


def test_a_communicator_the_coordinator_built_over_its_own_group_runs_over_that_group():
    # The coordinator builds its communicator over one of its own groups
    # (`self.pynccl_comm = Pynccl(group=self.cpu_group)`) and a method reads it
    # into a local before calling its collective: that runs over the group of
    # the coordinator the caller calls the method on, not over the world.
    assert _lines("""
        import torch.distributed as dist


        class Pynccl:
            def __init__(self, group, device):
                self.group = group

            def reduce_scatter(self, out, t):
                dist.reduce_scatter_tensor(out, t, group=self.group)


        class Coordinator:
            def __init__(self, cpu_group, device_group):
                self.cpu_group = cpu_group
                self.device_group = device_group
                self.pynccl_comm = None
                if dist.get_world_size(cpu_group) > 1:
                    self.pynccl_comm = Pynccl(group=self.cpu_group, device="cuda")
                self.is_first_rank = dist.get_rank(device_group) == 0

            def reduce_scatter_tensor(self, out, t):
                pynccl_comm = self.pynccl_comm
                if pynccl_comm is not None:
                    pynccl_comm.reduce_scatter(out, t)
                else:
                    dist.reduce_scatter_tensor(out, t, group=self.device_group)


        def get_tp_group() -> Coordinator:
            return _TP


        def get_pp_group() -> Coordinator:
            return _PP


        def first_stage(out, t, coordinator):
            if get_pp_group().is_first_rank:
                get_tp_group().reduce_scatter_tensor(out, t)
                get_pp_group().reduce_scatter_tensor(out, t)   # reported: the PP group spans the stages
                coordinator.reduce_scatter_tensor(out, t)      # reported: nothing says which group
    """) == [41, 42]


def test_a_group_looked_up_by_the_name_the_caller_passes_is_the_group_so_named():
    # A custom op finds its coordinator in the module's registry by the name
    # its caller passes (`group = _groups[group_name]()`): the collective it
    # reaches through that coordinator runs over the group the caller names
    # (`get_tp_group().unique_name`, or `self.unique_name` in a method called
    # on the TP coordinator), not over an unknown group.
    assert _lines("""
        import weakref
        import torch.distributed as dist

        _groups = {}


        class Coordinator:
            def __init__(self, cpu_group, device_group, unique_name):
                self.cpu_group = cpu_group
                self.device_group = device_group
                self.unique_name = unique_name
                _groups[unique_name] = weakref.ref(self)
                self.is_first_rank = dist.get_rank(device_group) == 0

            def _reduce_in_place(self, t):
                dist.all_reduce(t, group=self.device_group)

            def reduce_in_place(self, t):
                reduce_by_name(t, group_name=self.unique_name)
                return t


        def reduce_by_name(t, group_name):
            group = _groups[group_name]()
            if group is None:
                raise ValueError(group_name)
            group._reduce_in_place(t)


        def get_tp_group() -> Coordinator:
            return _TP


        def get_pp_group() -> Coordinator:
            return _PP


        def first_stage(t, name):
            if get_pp_group().is_first_rank:
                get_tp_group().reduce_in_place(t)
                get_pp_group().reduce_in_place(t)             # reported: the PP group spans the stages
                reduce_by_name(t, get_tp_group().unique_name)
                reduce_by_name(t, name)                        # reported: nothing says which group
    """) == [42, 44]


def test_a_group_chosen_from_a_parameter_with_a_fallback_is_what_the_caller_passes_there():
    # a workspace manager picks the group it checks the nodes over from its
    # `cpu_group` parameter, else its `group` one, and a preflight helper
    # takes `cpu_group` unless it is None: where the caller passes the
    # tensor-parallel group there, a stage predicate above the call is the
    # same on every rank of it; where it passes the world, nothing there, or
    # the helper rebinds the group another way, the call is still reported
    source = """
        import torch.distributed as dist
        from vllm.distributed import get_pp_group, get_tp_group, get_world_group


        def same_node(group):
            flags = [None] * dist.get_world_size(group)
            dist.all_gather_object(flags, node_id(), group=group)
            return flags


        def preflight(cpu_group=None):
            group = cpu_group
            if group is None:
                group = get_tp_group().cpu_group
            dist.all_reduce(local_flag(), group=group)


        def preflight_rebound(cpu_group=None):
            group = cpu_group
            if wide():
                group = get_world_group().cpu_group
            dist.all_reduce(local_flag(), group=group)


        class Manager:
            def initialize(self, group=None, cpu_group=None):
                node_pg = cpu_group if cpu_group is not None else group
                if node_pg is not None:
                    same_node(node_pg)
                    dist.barrier(group=node_pg)


        def setup_tp():
            Manager().initialize(cpu_group=get_tp_group().cpu_group)


        def setup_world():
            Manager().initialize(cpu_group=get_world_group().cpu_group)


        def setup_unnamed():
            Manager().initialize(group=get_tp_group().cpu_group)


        def first_stage():
            if get_pp_group().is_first_rank:
                setup_tp()
                preflight(cpu_group=get_tp_group().cpu_group)
            if get_pp_group().is_first_rank:
                setup_world()                                        # reported: the world spans the stages
            if get_pp_group().is_first_rank:
                setup_unnamed()                                      # reported: `cpu_group` not passed
            if get_pp_group().is_first_rank:
                preflight_rebound(cpu_group=get_tp_group().cpu_group)  # reported: rebound past the parameter
    """
    marked = [i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in line]
    assert _lines(source) == marked
