"""What a value only holds: the rank a library object was built with, the
device a tensor or module was placed on.  Such an object exists, has its
type and its length and answers its own questions alike on every rank;
reading the held value back (``x.device``) is still rank-local, and so is a
structure (a slice between uneven offsets, a list appended to on some
ranks) that the rank decides.  Each shape is paired with the rank-dependent
structure that must still be reported."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# -- placed on this rank's device -------------------------------------------------------


_PLACED = """
    import torch
    import torch.distributed as dist
    from mylib import is_fp8

    class Buffers:
        def __init__(self, module, n):
            self.device = torch.device(f"cuda:{torch.cuda.current_device()}")
            self.module = module.to(self.device)
            self.staging = torch.empty(n, device=self.device)

        def gather(self, t):
            {test}
                dist.all_gather_into_tensor(t, t)
"""


def test_module_moved_to_this_ranks_device_answers_alike():
    # the type of the module's parameters does not follow the GPU it is on
    assert _codes(_PLACED.replace("{test}", "if is_fp8(self.module):")) == []


def test_tensor_made_on_this_ranks_device_has_the_same_size():
    assert _codes(_PLACED.replace("{test}", "if self.staging.numel() > 0 and self.staging is not None:")) == []


def test_the_device_read_back_still_differs():
    assert _codes(_PLACED.replace("{test}", "if self.staging.device.index == 0:")) == [("CSL101", 14)]


def test_tensor_sized_by_the_rank_on_its_device_still_differs():
    assert _codes("""
        import torch
        import torch.distributed as dist

        def gather(t, sizes):
            rank = dist.get_rank()
            local = torch.empty(sizes[rank], device=f"cuda:{rank}")
            if local.numel() == 0:
                return t
            dist.all_gather_into_tensor(t, local)
    """) == [("CSL102", 10)]


# -- a library object built with a rank -------------------------------------------------


_BUILT = """
    import torch.distributed as dist
    from mylib import QuickReduce, Workspace

    class Communicator:
        def __init__(self, group, pending):
            rank = dist.get_rank(group)
            self.quick = QuickReduce(rank=rank, world_size=dist.get_world_size(group))
            self.workspaces = [Workspace(rank, i) for i in range(4)]
            self.pending = Workspace(pending)

        def all_reduce(self, t):
            {test}
                dist.all_reduce(t)
"""


def test_library_object_built_with_a_rank_exists_on_every_rank():
    assert _codes(_BUILT.replace("{test}", "if self.quick is not None:")) == []


def test_library_object_built_with_a_rank_answers_its_own_questions_alike():
    # ``should_use`` looks at the input and the object's settings; the rank
    # it was built with is inside it
    assert _codes(_BUILT.replace("{test}", "if self.quick.should_use(t) and not self.quick.disabled:")) == []


def test_loop_over_library_objects_built_with_a_rank_runs_alike():
    assert _codes(_BUILT.replace("{test}", "for w in self.workspaces:")) == []


def test_library_object_built_from_a_per_rank_structure_still_differs():
    # a list filled on some ranks only makes the object built from it differ
    source = _BUILT.replace("{test}", "if len(self.pending) > 0:").replace(
        "self.pending = Workspace(pending)",
        "self.pending = Workspace([1] if rank == 0 else [])")
    assert _codes(source) == [("CSL101", 14)]


def test_library_object_built_on_some_ranks_only_still_differs():
    source = _BUILT.replace("{test}", "if self.quick is not None:").replace(
        "self.quick = QuickReduce(rank=rank, world_size=dist.get_world_size(group))",
        "self.quick = QuickReduce(rank=rank) if rank == 0 else None")
    assert _codes(source) == [("CSL101", 14)]


_BUILT_FROM_PARAMETERS = """
    import torch.distributed as dist
    from mylib import QuickReduce

    class Communicator:
        def __init__(self, rank, buffers, group):
            self.quick = QuickReduce(rank, buffers, group=group)

        def all_reduce(self, t):
            if self.quick is not None and self.quick.should_use(t):
                dist.all_reduce(t)

    def make(group, pending):
        return Communicator(dist.get_rank(group), {buffers}, group)
"""


def test_library_object_built_from_parameters_holds_the_rank_its_callers_pass():
    # the arguments are parameters: what callers pass is held all the same
    assert _codes(_BUILT_FROM_PARAMETERS.replace("{buffers}", "pending")) == []


def test_library_object_built_from_a_parameter_given_a_per_rank_list_still_differs():
    source = _BUILT_FROM_PARAMETERS.replace("{buffers}", "[1] if dist.get_rank(group) == 0 else None")
    assert _codes(source) == [("CSL101", 11)]


def test_a_rank_passed_to_a_function_still_decides_its_result():
    # a function of the rank (not an object built with it) is what it computes
    assert _codes("""
        import torch
        import torch.distributed as dist

        def exchange(t, peers):
            rank = dist.get_rank()
            if not all(torch.cuda.can_device_access_peer(rank, p) for p in peers):
                return t
            dist.all_reduce(t)
    """) == [("CSL102", 9)]


# -- what a rank decides of a value's structure is still its own ---------------------------


_SPLIT = """
    import torch
    import torch.distributed as dist

    def split_between(inputs, num, extras):
        rank = dist.get_rank()
        start = rank * num + min(rank, extras)
        end = start + num + (1 if rank < extras else 0)
        result = inputs[start:end]
        {test}
            dist.all_reduce(result)
"""


def test_slice_of_uneven_width_still_differs_in_length():
    assert _codes(_SPLIT.replace("{test}", "if len(result) > 0:")) == [("CSL101", 11)]


_APPENDED = """
    import torch.distributed as dist

    def flush(pending, t):
        done = []
        if dist.get_rank() == 0:
            done.append(t)
        {test}
            dist.all_reduce(t)
"""


def test_list_appended_on_some_ranks_still_differs_in_length():
    assert _codes(_APPENDED.replace("{test}", "for item in done:")) == [("CSL103", 9)]
    assert _codes(_APPENDED.replace("{test}", "if done:")) == [("CSL101", 9)]


def test_value_set_to_none_on_some_ranks_still_differs_in_kind():
    source = _APPENDED.replace("{test}", "if done is not None:").replace(
        "done.append(t)", "done = None")
    assert _codes(source) == [("CSL101", 9)]


def test_element_or_default_of_a_shard_of_uneven_length_still_differs_in_kind():
    # ``next(it, None)`` is None once this rank's shorter shard ran out
    assert _codes("""
        import torch.distributed as dist

        def evaluate(model, samples, total):
            shard = samples[dist.get_rank()::dist.get_world_size()]
            batches = iter(shard)
            while True:
                batch = next(batches, None)
                if batch is None:
                    break
                dist.all_reduce(total)
    """) == [("CSL102", 11)]


def test_loader_built_with_a_per_rank_sampler_yields_this_ranks_data():
    # only a rank's or a device's identity is held: the shard a sampler
    # picks is what the loader built with it yields
    assert _codes("""
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def train(model, dataset):
            loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
            for batch in loader:
                loss = model(batch)
                if not torch.isfinite(loss):
                    continue
                dist.all_reduce(loss)
    """) == [("CSL102", 12)]


# -- a library object built from a list of per-rank parts -----------------------------------


_FROM_PARTS = """
    import torch
    import torch.distributed as dist

    class Sharded:
        def __init__(self, optimizer, group):
            self.optimizer = optimizer
            self.groups = []
            self.parts = []
            for i, param_group in enumerate(self.optimizer.param_groups):
                part = dist.get_rank(group=group)
                self.groups.append(param_group["params"])
                chunks = torch.cat([p.view(-1) for p in self.groups[i]]).chunk(dist.get_world_size(group))
                {append}
            self.init_states()

        def init_states(self):
            if isinstance(self.optimizer, torch.optim.Adagrad):
                self.optimizer = torch.optim.Adagrad(self.parts, **self.optimizer.defaults)

        def reduce(self, t):
            for i, group in enumerate(self.groups):
                dist.all_reduce(t)
"""


def test_library_object_built_from_a_list_of_this_ranks_parts_has_one_entry_per_part():
    # one parameter group per part on every rank, whatever each rank's part
    # is: the loop over the optimizer's groups that fills ``self.groups``
    # runs alike
    assert _codes(_FROM_PARTS.replace("{append}", "self.parts.append(chunks[part].clone())")) == []


def test_library_object_built_from_a_list_filled_on_some_ranks_still_differs():
    source = _FROM_PARTS.replace("{append}", "if part == 0:\n                    self.parts.append(chunks[part])")
    assert _codes(source) == [("CSL103", 24)]


def test_library_object_built_from_a_local_list_of_this_ranks_parts_has_one_entry_per_part():
    template = """
        import torch
        import torch.distributed as dist

        def reduce_all(tensors, t):
            rank = dist.get_rank()
            parts = []
            for x in tensors:
                {append}
            optimizer = torch.optim.SGD(parts, lr=0.1)
            for group in optimizer.param_groups:
                dist.all_reduce(t)
    """
    assert _codes(template.replace("{append}", "parts.append(x.chunk(8)[rank])")) == []
    assert _codes(template.replace("{append}", "if rank == 0:\n                    parts.append(x)")) == [("CSL103", 13)]


# -- a value moved to another device on some ranks ------------------------------------------


_MOVED = """
    import torch
    import torch.distributed as dist

    def load(model, full_sd):
        for name, param in model.state_dict().items():
            t = full_sd[name] if dist.get_rank() == 0 else torch.empty(param.size())
            dist.broadcast(t, src=0)

    def prepare(model, other, full_sd):
        if dist.get_rank() != 0:
            {move}
        {use}
"""


def test_object_moved_to_another_device_on_some_ranks_keeps_its_structure():
    # the same module, its parameters on ``meta``: the same state dict keys
    # on every rank
    source = _MOVED.replace("{move}", 'model = model.to(torch.device("meta"))').replace(
        "{use}", "load(model, full_sd)")
    assert _codes(source) == []


def test_where_an_object_was_moved_on_some_ranks_still_differs():
    source = _MOVED.replace("{move}", 'model = model.to(torch.device("meta"))')
    assert _codes(source.replace("{use}", 'if model.device == "meta":\n            dist.barrier()')) \
        == [("CSL101", 14)]
    assert _codes(source.replace("{use}", 'if model.sum() > 0:\n            dist.barrier()')) \
        == [("CSL101", 14)]


def test_another_object_moved_in_on_some_ranks_still_differs():
    source = _MOVED.replace("{move}", 'model = other.to(torch.device("meta"))').replace(
        "{use}", "load(model, full_sd)")
    assert _codes(source) == [("CSL103", 8)]
