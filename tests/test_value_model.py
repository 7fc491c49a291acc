"""The value model on our own shapes: what is rank-local about a value (its
structure or only its contents), fields of fields, values made uniform by a
collective, constant arguments, fields reset before use, property reads."""

import ast
import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# -- structure and contents -----------------------------------------------------------


def test_object_on_this_ranks_device_keeps_its_none_ness():
    # the communicator is built on this rank's GPU: its contents differ, not
    # whether it exists
    assert _codes("""
        import torch
        import torch.distributed as dist
        from mylib import PyNccl
        class Communicator:
            def __init__(self, local_rank, use_pynccl):
                self.device = torch.device(f"cuda:{local_rank}")
                self.pynccl = PyNccl(self.device) if use_pynccl else None
            def all_reduce(self, t):
                if self.pynccl is not None:
                    dist.all_reduce(t)
    """) == []


def test_object_created_only_on_rank_zero_differs_in_none_ness():
    assert _codes("""
        import torch.distributed as dist
        from mylib import Writer
        class Trainer:
            def __init__(self):
                self.writer = Writer() if dist.get_rank() == 0 else None
            def step(self, t):
                if self.writer is not None:
                    dist.all_reduce(t)
    """) == [("CSL101", 9)]


def test_length_of_list_of_per_rank_values_is_uniform():
    assert _codes("""
        import torch.distributed as dist
        def reduce_all(tensors, t):
            rank = dist.get_rank()
            moved = []
            for x in tensors:
                moved.append(x.to(f"cuda:{rank}"))
            for y in moved:
                dist.all_reduce(y)
            if len(moved) > 0:
                dist.barrier()
    """) == []


def test_contents_of_per_rank_values_still_decide():
    assert _codes("""
        import torch.distributed as dist
        def f(t):
            offset = dist.get_rank() * 4
            if offset == 0:
                dist.barrier()
    """) == [("CSL101", 6)]


def test_length_made_from_a_rank_still_differs():
    assert _codes("""
        import torch.distributed as dist
        def f(items, t):
            rank = dist.get_rank()
            for i in range(rank):
                dist.all_reduce(t)
            for x in items[rank::4]:
                dist.all_reduce(x)
            extra = [t] * rank
            for y in extra:
                dist.barrier()
    """) == [("CSL103", 6), ("CSL103", 8), ("CSL103", 11)]


def test_list_filled_on_some_ranks_differs_in_length():
    assert _codes("""
        import torch.distributed as dist
        def f(x):
            pending = []
            if dist.get_rank() == 0:
                pending.append(x)
            for p in pending:
                dist.all_reduce(p)
            if not pending:
                return
            dist.barrier()
    """) == [("CSL103", 8), ("CSL102", 11)]


def test_none_test_of_a_rank_variable_is_uniform():
    # the launcher sets the variable on every rank or on none
    assert _codes("""
        import os
        import torch.distributed as dist
        def init():
            rank = os.environ.get("RANK")
            if rank is None:
                return
            dist.barrier()
    """) == []


def test_element_picked_by_rank_is_another_object():
    assert _codes("""
        import torch.distributed as dist
        def f(queues, t):
            for item in queues[dist.get_rank()]:
                dist.all_reduce(t)
    """) == [("CSL103", 5)]


def test_tensor_shape_of_a_per_rank_shard_is_uniform():
    assert _codes("""
        import torch
        import torch.distributed as dist
        def f(full, t):
            part = full.narrow(0, dist.get_rank() * 8, 8).to(torch.cuda.current_device())
            if part.numel() == 0:
                return
            dist.all_reduce(part)
    """) == []


def test_returned_length_follows_what_callers_pass():
    assert _codes("""
        import torch.distributed as dist
        def count(xs):
            return len(xs)
        def uniform_caller(items, t):
            rank = dist.get_rank()
            tagged = [(rank, x) for x in items]
            if count(tagged) > 0:
                dist.all_reduce(t)
        def local_caller(items, t):
            mine = [x for x in items if x.owner == dist.get_rank()]
            if count(mine) > 0:
                dist.all_reduce(t)
    """) == [("CSL101", 13)]


# -- fields of fields -------------------------------------------------------------------


_BUFFER = """
    import torch.distributed as dist
    class Buffer:
        def __init__(self, offset, size):
            self.offset = offset
            self.size = size
            self.pending = None
    class Engine:
        def __init__(self, size):
            self.buf = Buffer(dist.get_rank() * size, size)
"""


def test_field_of_a_field_is_read_from_its_class():
    # the buffer holds this rank's offset; its size and pending slot are the
    # same everywhere
    assert _codes(_BUFFER + """
        def step(self, t):
            if self.buf.size > 0:
                dist.all_reduce(t)
            if self.buf.pending is None:
                dist.all_reduce(t)
            if self.buf.offset == 0:
                dist.barrier()
    """) == [("CSL101", 18)]


def test_field_of_an_object_made_here_is_read_from_its_class():
    assert _codes(_BUFFER + """
    def step(size, t):
        local = Buffer(dist.get_rank() * size, size)
        if local.size > 0:
            dist.all_reduce(t)
        if local.offset == 0:
            dist.barrier()
    """) == [("CSL101", 17)]


def test_field_set_under_a_rank_test_in_the_held_class_still_differs():
    assert _codes("""
        import torch.distributed as dist
        class Stats:
            def __init__(self):
                self.writer = None
                if dist.get_rank() == 0:
                    self.writer = open("log.txt", "w")
        class Trainer:
            def __init__(self):
                self.stats = Stats()
            def step(self, t):
                if self.stats.writer is not None:
                    dist.all_reduce(t)
    """) == [("CSL101", 13)]


def test_library_object_made_on_this_ranks_device_agrees_on_its_settings():
    assert _codes("""
        import torch
        import torch.distributed as dist
        from mylib import PyNccl
        class Communicator:
            def __init__(self, local_rank):
                self.comm = PyNccl(device=torch.device(f"cuda:{local_rank}"))
            def all_reduce(self, t):
                if self.comm.disabled:
                    return t
                dist.all_reduce(t)
                if self.comm.device.index == 0:
                    dist.barrier()
    """) == [("CSL101", 13)]


def test_tensor_sized_by_this_ranks_share_differs_in_length():
    assert _codes("""
        import torch
        import torch.distributed as dist
        def gather_shard(total, q):
            share = total // 4 + min(dist.get_rank(), total % 4)
            indices = torch.empty(share, device=q.device)
            if indices.numel() == 0:
                return q
            dist.all_gather(q)
    """) == [("CSL102", 9)]


def test_comparing_a_rank_with_the_unset_marker_asks_whether_it_is_set():
    assert _codes("""
        import torch.distributed as dist
        def setup(args, t):
            if args.local_rank != -1:
                dist.barrier()
            if args.local_rank == 0:
                dist.all_reduce(t)
    """) == [("CSL101", 7)]


def test_constructor_called_on_some_ranks_gives_its_object_not_its_fields_the_context():
    assert _codes("""
        import torch.distributed as dist
        class State:
            def __init__(self, backend):
                self.backend = backend
        def log(t, backend):
            if dist.get_rank() == 0:
                State(backend)
        def step(t, backend):
            if State(backend).backend == "nccl":
                dist.all_reduce(t)
            state = State(backend) if dist.get_rank() == 0 else None
            if state is not None:
                dist.barrier()
    """) == [("CSL101", 14)]


def test_truth_of_a_container_is_its_length():
    assert _codes("""
        from typing import List
        import torch.distributed as dist
        from mylib import Optimizer
        def build(params: List, t):
            rank = dist.get_rank()
            optimizers = [Optimizer(p, rank=rank) for p in params]
            if optimizers:
                dist.all_reduce(t)
            config = getattr(optimizers[0], "config", None)
            if config.clip_grad > 0:
                dist.all_reduce(t)
            if rank:
                dist.barrier()
    """) == [("CSL101", 14)]


# -- values made uniform by a collective -------------------------------------------------


def test_status_gathered_by_a_wrapper_that_returns_its_input_for_one_rank_is_agreed():
    # the last return runs only where the group has a single rank (the size
    # is read by its name through an accessor), so every value the wrapper
    # returns is agreed over the group
    gather_status = """
        class Executor:
            @staticmethod
            def _dist_size(dist, name):
                return getattr(dist, name, 1)

            def _gather_status(self, local_status):
                if self._dist_size(self.dist, "tp_size") > 1:
                    return self.dist.tp_allgather(local_status)
                return [local_status]

            def loop(self):
                local_ok = int(any(r.is_disagg_generation_transmission_in_progress for r in self.active_requests))
                ok = min(self._gather_status(local_ok)) == 1
                if not ok:
                    self.dist.tp_allgather(1)
    """
    assert _codes(gather_status, presets=["tensorrt_llm"]) == []
    # without the single-rank test the local value comes back as it is
    assert _codes(gather_status.replace('if self._dist_size(self.dist, "tp_size") > 1:', "if self.ready:"),
                  presets=["tensorrt_llm"]) == [("CSL101", 16)]


def test_buffer_gathered_in_place_stays_agreed_past_the_single_rank_arm():
    # ``else`` runs only where the group has one rank: what it leaves in the
    # buffer cannot differ, so the statuses are agreed after the join
    sync = """
        import torch
        import torch.distributed as dist

        def sync(tp_group, local_error, rank):
            local_status = torch.tensor([1 if local_error is not None else 0, rank])
            statuses = [torch.empty_like(local_status) for _ in range(tp_group.world_size)]
            if tp_group.world_size > 1:
                dist.all_gather(statuses, local_status, group=tp_group.cpu_group)
            else:
                statuses[0].copy_(local_status)
            failures = [r for r, s in enumerate(statuses) if s[0].item() != 0]
            if not failures:
                return statuses
            dist.all_gather_object([None], 1, group=tp_group.cpu_group)
    """
    assert _codes(sync) == []
    assert _codes(sync.replace("if tp_group.world_size > 1:", "if local_error is None:")) != []


def test_verdict_fed_back_into_the_call_that_gathered_it_stays_agreed():
    # ``can_forward`` goes around the loop into the gate that produced it;
    # the batch the gate is also passed never reaches what it returns
    gate = """
        class Executor:
            def _fill_complete(self):
                local = int(not any(r.is_disagg_generation_transmission_in_progress for r in self.active_requests))
                return min(self.dist.tp_allgather(local)) == 1

            def _gate(self, scheduled_batch, can_forward):
                if not can_forward:
                    can_forward = self._fill_complete()
                    if not can_forward:
                        return can_forward, True
                return can_forward, False

            def loop(self):
                can_forward = False
                while True:
                    scheduled_batch = self.scheduled_batch
                    can_forward, retry = self._gate(scheduled_batch, can_forward)
                    if retry:
                        continue
                    self.dist.tp_allgather(1)
    """
    assert _codes(gate, presets=["tensorrt_llm"]) == []
    # a retry decided by this rank's own batch still skips the gather
    assert ("CSL102", 21) in _codes(gate.replace("return can_forward, False", "return can_forward, not scheduled_batch"),
                                    presets=["tensorrt_llm"])
    # agreed over the TP group only: a gather over every rank still differs
    assert _codes(gate.replace("self.dist.tp_allgather(1)\n",
                               "self.dist.tp_allgather(1)\n"
                               "                    if not can_forward:\n"
                               "                        self.dist.allgather(0)\n"),
                  presets=["tensorrt_llm"]) == [("CSL101", 23)]


def test_broadcast_result_is_what_the_source_sent_not_the_rank_it_was_told():
    # the wrapper is told this rank's id and the source's; what comes back is
    # the source's object, the same on every rank of the group
    shapes = """
        import os

        import torch.distributed as dist
        from sglang.srt.distributed import get_tp_group
        from sglang.srt.utils import broadcast_pyobj


        def step(args):
            settings = broadcast_pyobj(args.settings, dist.get_rank(), get_tp_group().cpu_group, src=0)
            if settings:
                dist.barrier()


        def scan(args):
            entries = broadcast_pyobj(os.listdir(args.path), dist.get_rank(), get_tp_group().cpu_group, src=0)
            if entries:
                get_tp_group().barrier()
            if entries:
                dist.barrier()
    """
    # a directory listing agreed over the TP group is agreed there only: the
    # barrier over every rank still depends on each TP group's source
    assert _codes(shapes, presets=["sglang"]) == [("CSL101", 20)]


# -- ranks that left ---------------------------------------------------------------------


def test_ranks_that_returned_early_do_not_make_later_locals_differ():
    # every rank still running past the early return took the same arm: the
    # hazard is the return, not the configuration flag read after it
    assert _codes("""
        import torch.distributed as dist

        def step(t, group, verbose):
            if dist.get_rank() == 0 and t is None:
                return
            flag = verbose
            if flag:
                dist.all_reduce(t, group=group)
    """) == [("CSL102", 9)]


def test_a_local_read_after_the_loop_that_ranks_broke_out_of_still_differs():
    # ranks that broke out meet the others after the loop, where ``done`` is read
    assert _codes("""
        import torch.distributed as dist

        def drain(items, group):
            done = False
            for item in items:
                if dist.get_rank() == item:
                    break
                done = True
            if done:
                dist.barrier(group=group)
    """) == [("CSL101", 11)]


def test_a_local_read_only_inside_the_loop_that_ranks_broke_out_of_is_agreed():
    assert _codes("""
        import torch.distributed as dist

        def poll(items, group, cfg):
            while True:
                if dist.get_rank() == len(items):
                    break
                ready = cfg.ready
                if ready:
                    dist.barrier(group=group)
    """) == [("CSL102", 10)]


def test_a_raise_that_a_handler_here_catches_does_not_leave():
    # the rank that raised goes on after the ``try`` with ``ready`` unset
    assert _codes("""
        import torch.distributed as dist

        def step(group, cfg):
            ready = False
            try:
                if dist.get_rank() == 0:
                    raise ValueError("rank zero skips")
                ready = cfg.ready
            except ValueError:
                pass
            if ready:
                dist.barrier(group=group)
    """) == [("CSL101", 13)]


def test_what_a_function_returns_after_an_early_return_still_differs():
    # the result leaves the function: ranks that returned early meet the others in the caller
    assert _codes("""
        import torch.distributed as dist

        def pick(t):
            if dist.get_rank() == 0:
                return None
            value = t
            return value

        def step(t, group):
            if pick(t) is None:
                dist.barrier(group=group)
    """) == [("CSL101", 12)]


def test_slice_between_rank_offsets_of_one_width_has_that_width():
    # ``[rank * chunk:(rank + 1) * chunk]``: the offsets cancel in the length
    assert _codes("""
        import torch.distributed as dist

        def shard(t, rank, chunk):
            local = t[rank * chunk:(rank + 1) * chunk]
            if len(local) == 0:
                return None
            for _ in range(rank * 4, rank * 4 + 4):
                dist.all_reduce(local)
    """) == []


def test_slice_between_uneven_offsets_differs_in_length():
    assert _codes("""
        import torch.distributed as dist

        def shard(t, rank, sizes):
            local = t[sum(sizes[:rank]):sum(sizes[:rank + 1])]
            if len(local) == 0:
                return None
            dist.all_reduce(local)
    """) == [("CSL102", 8)]
    assert _codes("""
        import torch.distributed as dist

        def steps(rank):
            for _ in range(rank, 2 * rank):
                dist.barrier()
    """) == [("CSL103", 6)]


_NAMED_BOUNDS = """
    import torch.distributed as dist

    def get_tp_rank():
        return dist.get_rank()

    class Layer:
        def __init__(self, sizes):
            self.sizes = sizes

        def shard(self, b):
            tp_rank = get_tp_rank()
            shard_size = self.sizes[0]
            {bounds}
            return b[start:end, :]

        def forward(self, x, b):
            if self.shard(b) is not None:
                dist.all_reduce(x)
"""


def test_slice_between_named_rank_offsets_of_one_width_has_that_width():
    # ``start`` and ``end`` are bound once from names bound once: the slice
    # reads them as the offsets they were bound to, which cancel
    bounds = "start = tp_rank * shard_size\n            end = (tp_rank + 1) * shard_size"
    assert _codes(_NAMED_BOUNDS.replace("{bounds}", bounds)) == []
    bounds = "start = tp_rank * shard_size\n            end = start + shard_size"
    assert _codes(_NAMED_BOUNDS.replace("{bounds}", bounds)) == []


def test_slice_between_named_offsets_bound_again_still_differs():
    # a bound bound twice, or bound from a name bound twice, is read as it is
    bounds = ("start = tp_rank * shard_size\n            if tp_rank == 0:\n                start = 0\n"
              "            end = (tp_rank + 1) * shard_size")
    assert _codes(_NAMED_BOUNDS.replace("{bounds}", bounds)) == [("CSL101", 22)]
    bounds = ("start = tp_rank * shard_size\n            shard_size = shard_size + tp_rank\n"
              "            end = (tp_rank + 1) * shard_size")
    assert _codes(_NAMED_BOUNDS.replace("{bounds}", bounds)) == [("CSL101", 21)]
    bounds = "start = tp_rank * shard_size\n            end = start + shard_size + (1 if tp_rank < 2 else 0)"
    assert _codes(_NAMED_BOUNDS.replace("{bounds}", bounds)) == [("CSL101", 20)]


def test_names_bound_once_do_not_depend_on_a_walrus_elsewhere_in_the_file():
    # a file holding ``:=`` walks expressions too, for the names ``:=``
    # binds; every other binding is read as in any file (a ``with`` target
    # rebinds ``start``; an ``append`` changes the list, not the name)
    import ast

    from cslint.analysis.spans import CHANGED, bound_once

    body = ast.parse("start = r * n\nwith ctx() as start:\n    pass\nend = r + n\nxs = []\nxs.append(1)\n").body
    plain = bound_once(body, walrus=False)
    assert "start" not in plain and "end" in plain and "xs" in plain
    assert bound_once(body, walrus=True) == plain
    walrus = body + ast.parse("if (m := f()):\n    pass\n").body
    assert "m" in bound_once(walrus, walrus=True)[CHANGED]
    assert "m" not in bound_once(walrus, walrus=False)[CHANGED]


_SLICE_OBJECT = """
    import torch.distributed as dist

    def layer(q):
        out = q.view(-1) if q.shape[1] == 4 else None
        if out is not None:
            dist.all_reduce(q)

    def check(rank, q):
        {local}
        layer(q[:, {index}])
"""


def test_slice_object_between_rank_offsets_of_one_width_has_that_width():
    # ``slice(lo, hi)`` is the slice ``lo:hi``, also through a name bound once
    source = _SLICE_OBJECT.replace("{local}", "local = slice(4 * rank, 4 * rank + 4)")
    assert _codes(source.replace("{index}", "local")) == []
    assert _codes(source.replace("{index}", "slice(4 * rank, 4 * rank + 4)")) == []


def test_slice_object_between_uneven_rank_offsets_still_differs():
    source = _SLICE_OBJECT.replace("{local}", "local = slice(4 * rank, 5 * rank + 4)")
    assert _codes(source.replace("{index}", "local")) == [("CSL101", 7)]
    assert _codes(source.replace("{index}", "slice(4 * rank, 5 * rank + 4)")) == [("CSL101", 7)]


def test_object_of_a_tree_class_exists_whatever_it_was_built_with():
    # a constructor's result is never None, whatever its arguments: a
    # per-rank directory listing it holds is a field, read as one
    assert _codes("""
        import os
        import torch.distributed as dist

        class Holder:
            def __init__(self, names):
                self.names = names

        class Engine:
            def __init__(self, path):
                self.holder = Holder(os.listdir(path))

            def step(self):
                if self.holder is not None:
                    dist.barrier()
                if len(self.holder.names) > 0:
                    dist.barrier()
    """, report="per-site") == [("CSL101", 17)]


# -- statement order in the summary walk ---------------------------------------------


_REGISTRY = """
    import torch.distributed as dist

    class Registry:
        def __init__(self):
            self.models = []

        def add(self, model):
{body}

        def save(self):
            for _ in self.models:
                dist.barrier()
"""


def test_a_read_before_a_rank_dependent_reassignment_does_not_see_it():
    # the membership test reads the model as passed; the model moved to this
    # rank's device afterwards (before a loop) cannot decide whether it was
    # registered
    body = """
            if model not in self.models:
                self.models.append(model)
            model = model.to(dist.get_rank())
            for hook in model.hooks():
                hook(model)
            return model
    """
    assert _codes(_REGISTRY.format(body=textwrap.indent(textwrap.dedent(body), " " * 12))) == []


def test_a_read_after_a_rank_dependent_assignment_still_sees_it():
    # (an offset by the rank changes the values; a move to the rank's device
    # would not: see tests/test_value_model_held.py)
    body = """
            model = model.add(dist.get_rank())
            if model.sum() > 0:
                self.models.append(model)
            return model
    """
    assert _codes(_REGISTRY.format(body=textwrap.indent(textwrap.dedent(body), " " * 12))) == [("CSL103", 18)]


def test_a_value_assigned_later_in_a_loop_reaches_the_next_iteration():
    # the second iteration's test reads what the first one assigned
    body = """
            flag = 0
            for part in model.parts():
                for piece in part:
                    if flag:
                        self.models.append(piece)
                    flag = dist.get_rank()
    """
    assert _codes(_REGISTRY.format(body=textwrap.indent(textwrap.dedent(body), " " * 12))) == [("CSL103", 20)]


# -- an element a rank picks from a list of elements built alike ----------------------


def test_shard_a_rank_picks_from_equal_shards_has_their_size():
    # every shard is cut with the same size; the rank only picks which one
    assert _codes("""
        import torch.distributed as dist

        def reduce_own_shard(flat, group):
            world = dist.get_world_size(group)
            rank = dist.get_rank(group)
            size = flat.numel() // world
            shards = [flat.narrow(0, i * size, size) for i in range(world)]
            mine = shards[rank]
            if len(mine) == 0:
                return None
            dist.all_reduce(mine, group=group)
    """) == []


def test_shard_a_rank_picks_from_shards_of_their_own_sizes_differs():
    # each shard's size follows its index: the rank picks a size
    assert _codes("""
        import torch.distributed as dist

        def reduce_own_shard(flat, offsets, group):
            world = dist.get_world_size(group)
            rank = dist.get_rank(group)
            shards = [flat[offsets[i]:offsets[i + 1]] for i in range(world)]
            mine = shards[rank]
            if len(mine) == 0:
                return None
            dist.all_reduce(mine, group=group)
    """) == [("CSL102", 11)]


def test_element_a_rank_picks_from_a_list_it_was_given_differs():
    # nothing says the caller's shards are alike
    assert _codes("""
        import torch.distributed as dist

        def reduce_own_shard(request_shards, group):
            rank = dist.get_rank(group)
            mine = request_shards[rank]
            if len(mine) == 0:
                return None
            dist.all_reduce(mine, group=group)
    """) == [("CSL102", 9)]


def test_list_of_equal_shards_changed_afterwards_is_not_alike():
    # an element appended later may be of another size
    assert _codes("""
        import torch.distributed as dist

        def reduce_own_shard(flat, extra, group):
            world = dist.get_world_size(group)
            rank = dist.get_rank(group)
            size = flat.numel() // world
            shards = [flat.narrow(0, i * size, size) for i in range(world)]
            shards.append(extra)
            mine = shards[rank]
            if len(mine) == 0:
                return None
            dist.all_reduce(mine, group=group)
    """) == [("CSL102", 13)]


# -- a parameter named like a rank that may be None -------------------------------------


def test_parameter_named_rank_that_may_be_none_holds_what_callers_pass():
    # ``rank: int | None`` is a setting that may be unset (a LoRA rank), not
    # this process's own rank, which is never None
    assert _codes("""
        import torch.distributed as dist

        class Layer:
            def __init__(self, lora_rank, alpha):
                self.lora_rank = lora_rank
                self.alpha = alpha
                self.offset = None

            def _scaled(self, offset, rank: int | None, alpha):
                if rank is not None and rank != alpha:
                    return offset * (alpha / rank)
                return offset

            def forward(self, out):
                self.offset = self._scaled(out, self.lora_rank, self.alpha)
                if self.offset is not None:
                    dist.all_reduce(out)
    """) == []


def test_parameter_named_rank_without_none_is_this_processs_rank():
    assert _codes("""
        import torch.distributed as dist

        def worker(rank: int, t):
            if rank == 0:
                dist.all_reduce(t)
    """) == [("CSL101", 6)]


# -- the truth of an object that shows only its attributes --------------------------------


_COORDINATOR = """
    import os
    import torch
    import torch.distributed as dist

    class Communicator:
        def __init__(self, device):
            self.device = device

    class Batch:
        def __init__(self, reqs):
            self.reqs = reqs

        def __len__(self):
            return len(self.reqs)

    class Coordinator:
        def __init__(self, local_rank, use_comm):
            self.device = torch.device(f"cuda:{local_rank}")
            {make}

        def all_reduce(self, t):
            held = {held}
            if not held:
                dist.all_reduce(t)
                return t
            return t
"""


def _coordinator(make, held):
    return _codes(_COORDINATOR.replace("{make}", make).replace("{held}", held))


def test_object_built_on_this_ranks_device_is_truthy_on_every_rank():
    assert _coordinator("self.comm = Communicator(self.device) if use_comm else None", "self.comm") == []


def test_object_built_only_on_rank_zero_is_falsy_elsewhere():
    assert _coordinator("self.comm = Communicator(self.device) if dist.get_rank() == 0 else None",
                        "self.comm") == [("CSL101", 25)]


def test_truth_of_an_object_with_a_length_of_its_own_reads_what_it_holds():
    # ``Batch`` defines ``__len__``: its truth is its length, here of a
    # per-rank directory listing
    assert _coordinator("self.batch = Batch(os.listdir('/tmp'))", "self.batch") == [("CSL101", 25)]


def test_module_function_narrow_starts_at_an_offset_and_cuts_a_length():
    # ``torch.narrow(x, dim, start, length)``: the tensor comes first, the
    # rank only moves the start
    assert _codes("""
        import torch
        import torch.distributed as dist

        def reduce_partition(flat, group):
            world = dist.get_world_size(group)
            rank = dist.get_rank(group)
            size = flat.numel() // world
            mine = torch.narrow(flat, 0, rank * size, size)
            if len(mine) == 0:
                return None
            dist.all_reduce(mine, group=group)
    """) == []
    assert _codes("""
        import torch
        import torch.distributed as dist

        def reduce_partition(flat, sizes, group):
            rank = dist.get_rank(group)
            mine = torch.narrow(flat, 0, 0, sizes[rank])
            if len(mine) == 0:
                return None
            dist.all_reduce(mine, group=group)
    """) == [("CSL102", 10)]


# -- a communicator every rank gets from a collective ---------------------------------------


_LOCAL_COMM = """
    from mpi4py import MPI

    class Env:
        def __init__(self):
            self._comm_world = MPI.COMM_WORLD
            self._comm_local = None

        def local_rank(self):
            if self._comm_local is None:
                self._init_comm_local()
            return self._comm_local.Get_rank()

        def _init_comm_local(self):
            host = MPI.Get_processor_name()
            self._comm_local = self._comm_world.Split(color=hash(host) % 1000, key=self._comm_world.Get_rank())

        def gather_local(self, x):
            local = self._comm_world.scatter(x)
            if local is None:
                self._comm_world.Barrier()
"""


def test_communicator_split_by_host_exists_on_every_rank():
    # Split gives every rank a communicator: which ranks it holds is this
    # rank's own, whether there is one is not
    assert ("CSL101", 11) not in _codes(_LOCAL_COMM)


def test_object_scattered_to_each_rank_may_be_none_on_some():
    assert ("CSL101", 21) in _codes(_LOCAL_COMM)


# -- order in a function summarised without its collectives ---------------------------


def test_name_rebound_in_straight_line_code_holds_only_its_new_value():
    # `fetch` issues no collective; its summary writes `self.stopping` from
    # the list the root sent, not from this rank's own list it replaced
    assert _codes("""
        import torch.distributed as dist
        class Loop:
            def fetch(self, received):
                items = list(range(dist.get_rank()))
                items = received
                self.stopping = len(items) == 0
            def step(self, t, received):
                self.fetch(received)
                if self.stopping:
                    return
                dist.all_reduce(t)
    """) == []


def test_name_rebound_on_one_arm_keeps_both_values():
    assert _codes("""
        import torch.distributed as dist
        class Loop:
            def fetch(self, received, use_received):
                items = list(range(dist.get_rank()))
                if use_received:
                    items = received
                self.stopping = len(items) == 0
            def step(self, t, received):
                self.fetch(received, True)
                if self.stopping:
                    return
                dist.all_reduce(t)
    """) == [("CSL102", 13)]


def test_a_flow_of_as_many_links_as_an_explanation_keeps_is_not_cut():
    from cslint.analysis.divergence import MAX_KEPT_VIA, MAX_VIA, extend_via, is_cut, links_dropped, shown_links

    links = [("m.py", line, f"step {line}") for line in range(1, MAX_KEPT_VIA + 3)]
    via = ()
    for link in links[:MAX_VIA]:
        via = extend_via(via, link)
    assert not is_cut(via) and shown_links(via) == tuple(links[:MAX_VIA])
    via = extend_via(via, links[MAX_VIA])
    # shown cut, kept whole: the pass still reads the link an explanation leaves out
    assert is_cut(via) and shown_links(via) == tuple(links[:MAX_VIA]) and not links_dropped(via)
    assert via == tuple(links[:MAX_VIA + 1])
    for link in links[MAX_VIA + 1:]:
        via = extend_via(via, link)
    assert links_dropped(via) and via[:-1] == tuple(links[:MAX_KEPT_VIA])
    assert len(via) == MAX_KEPT_VIA + 1  # one mark, however many links were dropped


def test_value_a_loop_carries_survives_a_straight_line_assignment_before_it():
    # `last` is reset before the loop, but inside it the value of the
    # previous iteration (this rank's own) is read before it is replaced
    assert _codes("""
        import torch.distributed as dist
        class Loop:
            def fetch(self, batches):
                last = 0
                for batch in batches:
                    self.stopping = last > 3
                    last = dist.get_rank()
            def step(self, t, batches):
                self.fetch(batches)
                if self.stopping:
                    return
                dist.all_reduce(t)
    """) == [("CSL102", 13)]
# -- exceptions that fail alike ------------------------------------------------------------


_CONSTRUCTED = """
    import ctypes
    import os

    import torch.distributed as dist


    class Library:
        def __init__(self, path):
            try:
                self.lib = ctypes.CDLL(path)
            except Exception as e:
                print("cannot load", path)
                raise e


    class Checkpoint:
        def __init__(self, path):
            if not os.path.exists(path):
                raise ValueError(path)
            self.path = path


    class Settings:
        def __init__(self, name):
            if name not in ("a", "b"):
                raise ValueError(name)
            self.name = name


    class Journal:
        def __init__(self, path):
            self.handle = open(path)
            if self.handle is None:
                raise RuntimeError(path)


    def build(kind, arg, group):
        try:
            made = kind(arg)
        except Exception:
            return None
        dist.barrier(group=group)
        return made
"""


def test_a_shared_library_that_fails_to_load_fails_on_every_rank():
    # the constructor re-raises what loading the library raised: the same
    # path on the same software image loads everywhere or nowhere
    assert _codes(_CONSTRUCTED.replace("kind(arg)", "Library(arg)")) == []


def test_a_constructor_that_rejects_its_configuration_rejects_it_on_every_rank():
    assert _codes(_CONSTRUCTED.replace("kind(arg)", "Settings(arg)")) == []


def test_a_constructor_that_raises_on_what_this_ranks_disk_holds_still_differs():
    found = check_source(textwrap.dedent(_CONSTRUCTED.replace("kind(arg)", "Checkpoint(arg)"))).findings
    assert [(f.code, f.line) for f in found] == [("CSL104", 43)]
    assert "os.path.exists" in found[0].message  # the reason is the test above the raise


def test_a_constructor_that_does_local_io_can_fail_on_one_rank():
    assert _codes(_CONSTRUCTED.replace("kind(arg)", "Journal(arg)")) == [("CSL104", 43)]


# -- evaluation order ----------------------------------------------------------------------


def test_a_call_in_a_loop_sees_what_the_loop_assigns_after_it():
    # the loop body is walked twice: on the second walk ``value`` holds this
    # rank's id, and the call made of it must say so, however often the
    # statement evaluated its arguments before (for the parameter flow of
    # ``passthrough``, then for the field's value)
    source = """
        import torch.distributed as dist

        def passthrough(v):
            return v

        class Worker:
            def refresh(self):
                value = 0
                for _ in range(3):
                    self.ready = passthrough(value)
                    value = dist.get_rank()

            def step(self, t):
                if self.ready:
                    dist.all_reduce(t)
    """
    assert _codes(source) == [("CSL101", 16)]
    # the same value without the call in between
    assert _codes(source.replace("passthrough(value)", "value")) == [("CSL101", 16)]


def test_picks_one_is_an_index_that_is_no_slice_nor_several_keys():
    # one reading of "x[index] picks one element" for the piece picks and structure's subscripts
    from cslint.analysis.spans import picks_one

    indexes = [ast.parse(text, mode="eval").body.slice
               for text in ("x[rank]", "x[0]", "x[a:b]", "x[a, b]", "x[slice(a, b)]", "x[slice(b)]", "x[f(a, b)]")]
    assert [picks_one(index) for index in indexes] == [True, True, False, False, False, True, True]
