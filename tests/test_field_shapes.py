"""Shapes the field corpus taught the analysis (issue 15 part 2), each with the
safe form beside it: library collectives (accelerate, Lightning), library
rank identities, a ``@property`` read as a field,
a ``@contextmanager``'s yielded value, collectives in ``finally`` bodies and
the ``unhandled-exceptions`` setting."""

import textwrap

import pytest

from cslint.api import check_source
from cslint.config import ConfigError, Settings, settings_from_table
from cslint.presets import load_presets


def _findings(source, **kw):
    return [(f.line, f.code) for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings]


def _lines(source, **kw):
    return sorted(line for line, _ in _findings(source, **kw))


ACCELERATE = """
    from accelerate import PartialState
    from accelerate.utils import gather_object

    class Step:
        def __init__(self, accelerator):
            self.accelerator = accelerator

        def main_only(self, prompts, rewards):
            if self.accelerator.is_main_process:
                gather_object(prompts)
                self.accelerator.gather(rewards)

        def everyone(self, prompts, rewards):
            gather_object(prompts)
            self.accelerator.gather(rewards)

        def ordered(self):
            state = PartialState()
            for turn in range(state.num_processes):
                if turn == state.process_index:
                    print("turn", turn)
                state.wait_for_everyone()

        def one_turn_waits(self):
            state = PartialState()
            if state.process_index == 0:
                state.wait_for_everyone()
"""


def test_accelerate_collectives_and_process_index():
    assert _lines(ACCELERATE) == [11, 12, 28]


LIGHTNING = """
    class Callback:
        def on_end(self, trainer):
            if trainer.is_global_zero:
                trainer.strategy.barrier()

        def on_start(self, trainer):
            trainer.strategy.barrier()
            if trainer.is_global_zero:
                print("ready")
"""


def test_lightning_strategy_collectives_and_global_zero():
    assert _findings(LIGHTNING) == [(5, "CSL101")]


def test_named_receiver_methods_do_not_make_their_names_collective_wrappers():
    knowledge = load_presets(["torch_distributed", "accelerate", "lightning"])
    # `gather`/`reduce`/`backward` stay ambiguous names: a project's own `reduce()` is not a wrapper by name
    assert {"gather", "reduce", "backward"} <= knowledge.ambiguous_names


FIELD_OF_OWN_CLASS = """
    import logging
    import torch.distributed as dist

    class OrderedLogger(logging.LoggerAdapter):
        def log(self, level, msg):
            if dist.get_rank() == 0:
                self.logger.log(level, msg)
            dist.barrier()
"""


def test_name_only_match_of_a_field_call_never_lands_in_the_own_class():
    assert _lines(FIELD_OF_OWN_CLASS) == []


PROPERTY = """
    import torch.distributed as dist

    class Bar:
        def __init__(self):
            self._disabled = False

        def setup(self):
            if dist.get_rank() != 0:
                self._disabled = True

        @property
        def is_enabled(self):
            return not self._disabled

        @property
        def always(self):
            return True

        def on_step(self, t):
            if not self.is_enabled:
                return
            dist.all_reduce(t)

        def on_other_step(self, t):
            if not self.always:
                return
            dist.all_reduce(t)
"""


def test_property_read_carries_its_return_value():
    assert _findings(PROPERTY) == [(23, "CSL102")]


CONTEXT_MANAGER = """
    from contextlib import contextmanager
    import torch.distributed as dist

    def make_batch():
        if dist.get_rank() == 0:
            return None
        return [1]

    @contextmanager
    def released(batch):
        try:
            yield batch
        finally:
            pass

    def warmup(t):
        with released(make_batch()) as batch:
            if batch is not None:
                dist.all_reduce(t)
        with released([1]) as same:
            if same is not None:
                dist.all_reduce(t)
"""


def test_contextmanager_binds_its_yielded_value():
    assert _findings(CONTEXT_MANAGER) == [(20, "CSL101")]


FINALLY = """
    import torch.distributed as dist

    def run(trainer, model):
        try:
            trainer.fit(model)
        finally:
            dist.barrier()

    def run_caught(trainer, model):
        try:
            trainer.fit(model)
        except Exception:
            pass
        finally:
            dist.barrier()

    def save_then_meet(path, write_shard):
        try:
            write_shard(path)
        finally:
            dist.barrier()

    def run_clean(trainer, model):
        trainer.fit(model)
        dist.barrier()
"""


def test_collective_in_finally_runs_on_the_raising_rank_alone():
    found = check_source(textwrap.dedent(FINALLY), report="per-site").findings
    assert [(f.line, f.code) for f in found] == [(8, "CSL104")]
    assert "can wait in it for good" in found[0].message


ESCAPE = """
    import torch
    import torch.distributed as dist

    def packed(data_iterator, group):
        if dist.get_rank() == 0:
            sample = next(data_iterator)
            header = torch.tensor([len(sample)])
        else:
            header = torch.empty(1)
        dist.broadcast(header, 0, group=group)
        return header
"""


def test_unhandled_exceptions_hang_reports_work_that_fails_on_some_ranks():
    assert _findings(ESCAPE) == []
    hang = Settings(unhandled_exceptions="hang")
    found = check_source(textwrap.dedent(ESCAPE), settings=hang, report="per-site").findings
    assert [(f.line, f.code) for f in found] == [(11, "CSL104")]
    assert 'unhandled-exceptions = "hang"' in found[0].message
    # the tensorrt_llm preset chooses "hang" for its MPI-launched executors; the setting overrides it
    assert load_presets(["tensorrt_llm"]).unhandled_exceptions == "hang"
    assert _findings(ESCAPE, presets=["tensorrt_llm"]) == [(11, "CSL104")]
    crash = Settings(unhandled_exceptions="crash")
    assert _findings(ESCAPE, settings=crash, presets=["tensorrt_llm"]) == []


WITH_ESCAPE = """
    import torch.distributed as dist

    def checkpoint_meta(t, path):
        if dist.get_rank() == 0:
            with open(path) as handle:
                handle.read()
        dist.all_reduce(t)

    def checkpoint_meta_everywhere(t, path):
        with open(path) as handle:
            handle.read()
        dist.all_reduce(t)
"""


def test_unhandled_exceptions_hang_reads_a_with_header_as_local_work():
    # ``with open(path)`` in an ``if`` arm fails on the ranks that open, as
    # ``open(path).read()`` does; every rank opening it is not a divergence
    hang = Settings(unhandled_exceptions="hang")
    found = check_source(textwrap.dedent(WITH_ESCAPE), settings=hang, report="per-site").findings
    assert [(f.line, f.code, f.function) for f in found] == [(8, "CSL104", "checkpoint_meta")]
    assert _findings(WITH_ESCAPE) == []


def test_unhandled_exceptions_setting_is_validated():
    assert settings_from_table({"unhandled-exceptions": "hang"}).unhandled_exceptions == "hang"
    with pytest.raises(ConfigError, match="unhandled-exceptions"):
        settings_from_table({"unhandled-exceptions": "abort"})




GATHERED_DATA = """
    from accelerate.utils import gather_object

    class Collector:
        def __init__(self, accelerator):
            self.accelerator = accelerator

        def images_when_present(self, prompts, images):
            gather_object(prompts)
            return gather_object(images) if images is not None else None

        def images_always(self, prompts, images):
            gather_object(prompts)
            return gather_object(images)

        def empty_selection_returns(self, values, mask):
            local = values[mask]
            if local.numel() == 0:
                return None
            sizes = self.accelerator.gather(local.numel())
            return self.accelerator.gather(local), sizes

        def checks_a_setting(self, values, limit):
            if limit is None:
                return None
            return self.accelerator.gather(values)
"""


def test_what_a_rank_contributes_to_a_data_parallel_gather_is_its_own_data():
    # the payload's origins among the parameters (``images``; ``values`` through ``local``) are this
    # rank's data; a parameter that never reaches the gather (``limit``) says nothing
    assert _findings(GATHERED_DATA) == [(10, "CSL101"), (20, "CSL102"), (21, "CSL102")]


def test_a_plain_torch_gather_does_not_make_its_payload_rank_local():
    # an all-gather of tensor-parallel shards: what each rank passes has the same shape everywhere
    source = """
        import torch.distributed as dist

        def gather_shards(output, shard):
            if shard.numel() == 0:
                return
            dist.all_gather(output, shard)
    """
    assert _findings(source) == []


FUTURES = """
    import torch.distributed as dist

    class Steps:
        def schedule(self, waiting):
            ready = []
            for request in waiting:
                if request.needs_grammar:
                    if not request.grammar_future.done():
                        continue
                ready.append(request)
            return ready

        def step(self, waiting, counts):
            ready = self.schedule(waiting)
            if not ready:
                return None
            dist.all_reduce(counts)

        def wait_all(self, future, counts):
            future.result()
            dist.all_reduce(counts)
"""


def test_whether_a_future_is_done_is_this_process_own_timing():
    # the exit nested two tests deep in a helper still shortens the list it returns
    assert _findings(FUTURES) == [(18, "CSL102")]


WRAPPED = """
    import torch
    from torch.distributed.fsdp import fully_shard
    from torch.nn.parallel import DistributedDataParallel

    def skips_backward_on_nan(module, loader):
        model = DistributedDataParallel(module)
        for batch in loader:
            loss = model(batch).mean()
            if torch.isnan(loss).any():
                continue
            loss.backward()

    def every_rank_steps(module, loader):
        model = DistributedDataParallel(module)
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()

    def forward_on_some_batches(module, loader):
        fully_shard(module)
        for batch in loader:
            if torch.distributed.get_rank() == 0:
                continue
            module(batch)

    def plain_module(module, batch):
        loss = module(batch).mean()
        if torch.isnan(loss).any():
            return
        loss.backward()
"""


def test_a_module_wrapped_for_data_parallelism_communicates_in_forward_and_backward():
    # the output of the wrapped module is this rank's (its own batch); the backward of what it computed
    # all-reduces gradients; ``fully_shard`` wraps in place; an unwrapped module's forward and backward are local
    assert _findings(WRAPPED) == [(12, "CSL102"), (25, "CSL102")]


WRAPPED_FIELD = """
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel

    class Trainer:
        def __init__(self, module):
            self.model = FullyShardedDataParallel(module)
            self.plain = module

        def save_on_main(self):
            if dist.get_rank() == 0:
                return self.model.state_dict()

        def plain_on_main(self):
            if dist.get_rank() == 0:
                return self.plain.state_dict()
"""


def test_a_field_holding_a_sharded_module_gathers_for_its_full_state_dict():
    assert _findings(WRAPPED_FIELD) == [(12, "CSL101")]


EXIT_EXCEPTION = """
    import signal
    import sys

    import torch.distributed as dist


    class StopTraining(SystemExit):
        pass


    class Connector:
        def __init__(self):
            self.received_sigterm = False

        def register(self):
            signal.signal(signal.SIGTERM, self._on_sigterm)

        def _on_sigterm(self, signum, frame):
            self.received_sigterm = True


    class Loop:
        def __init__(self, connector):
            self.connector = connector

        def exits_cleanly(self, loader):
            for batch in loader:
                dist.all_reduce(batch)
                if self.connector.received_sigterm:
                    raise StopTraining()

        def crashes(self, loader):
            for batch in loader:
                dist.all_reduce(batch)
                if self.connector.received_sigterm:
                    raise RuntimeError("stop")
"""


def test_raising_system_exit_leaves_like_sys_exit_and_a_signal_flag_is_read_through_any_object():
    # ``StopTraining`` derives from SystemExit: a clean exit the launcher waits on, so the peers hang in the
    # next all-reduce; a RuntimeError crashes the process (the launcher tears the job down).  The connector
    # is a parameter of unknown class: the flag of that name a signal handler sets is the one read.
    assert _findings(EXIT_EXCEPTION) == [(29, "CSL102")]


FORWARD_INPUT = """
    import torch
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


    def shard_model(model):
        model.visual = FSDP(model.visual)
        return FSDP(model)


    def embeds_in_training_only(model, input_ids, pixel_values=None):
        embeds = model.embed(input_ids)
        if pixel_values is not None:
            embeds = embeds + model.visual(pixel_values).sum()
        if model.training and pixel_values is None:
            dummy = torch.zeros((4, 4), dtype=embeds.dtype, device=embeds.device)
            embeds = embeds + 0.0 * model.visual(dummy).sum()
        return embeds


    def embeds_always(model, input_ids, pixel_values=None):
        embeds = model.embed(input_ids)
        if pixel_values is not None:
            embeds = embeds + model.visual(pixel_values).sum()
        if pixel_values is None:
            dummy = torch.zeros((4, 4), dtype=embeds.dtype, device=embeds.device)
            embeds = embeds + 0.0 * model.visual(dummy).sum()
        return embeds


    def unsharded_field(model, input_ids, pixel_values=None):
        if pixel_values is not None:
            return model.text(pixel_values)
        return model.text(input_ids)
"""


def test_what_a_rank_forwards_through_a_wrapped_module_is_its_own_batch():
    # ``shard_model`` leaves its argument with a sharded ``visual``: where the file reads that field of an
    # object it receives, calling it is the sharded forward, and what is handed to it is this rank's batch.
    # Both ranks' arms forward once in ``embeds_always``; the dummy input built from the embeddings' dtype
    # and device is not this rank's data (so ``model.training`` stays the same on every rank).
    assert _findings(FORWARD_INPUT) == [(14, "CSL101"), (17, "CSL101")]




STEP_BATCH = """
    import torch.distributed as dist
    from lightning.pytorch import LightningModule

    class Results:
        def __init__(self):
            self.metrics = {}

        def log(self, name, value):
            entry = self.metrics.setdefault(name, {"total": 0})
            entry["total"] += value

        def compute(self):
            for name in self.metrics:
                dist.all_reduce(self.metrics[name]["total"])

    class Classifier(LightningModule):
        def __init__(self, results):
            self.results = results

        def validation_step(self, batch, batch_idx):
            if batch["labels"].any():
                self.results.log("acc", batch["acc"])

    class Plain:
        def __init__(self, results):
            self.results = results

        def validation_step(self, batch, batch_idx):
            if batch["labels"].any():
                self.results.log("acc", batch["acc"])
"""


def test_a_step_hook_gets_this_rank_batch_and_setdefault_adds_a_key():
    # A LightningModule's ``validation_step`` gets this rank's batch, so the key logged only for some batches
    # (``setdefault`` keeps its result and still adds the key) leaves the ranks with different key counts.
    assert _findings(STEP_BATCH, presets=["torch_distributed", "lightning"]) == [(15, "CSL103")]
    # The same method in a class that is no LightningModule is called by no trainer: its batch is unknown;
    # without the lightning preset no class is a LightningModule either.
    plain = STEP_BATCH.replace("class Classifier(LightningModule):", "class Classifier:")
    assert _findings(plain, presets=["torch_distributed", "lightning"]) == []
    assert _findings(STEP_BATCH, settings=Settings(presets=["torch_distributed"])) == []
    # ``self.metrics[name] = ...`` and ``entry = self.metrics.setdefault(...)`` both add the key
    kept = STEP_BATCH.replace('entry = self.metrics.setdefault(name, {"total": 0})',
                              'entry = self.metrics.get(name)')
    assert _findings(kept, presets=["torch_distributed", "lightning"]) == []


CALLEE_FAILS = """
    import torch.distributed as dist


    class Loop:
        def __init__(self, kv_cache, queue):
            self.kv_cache = kv_cache
            self.queue = queue

        def _pad_on_idle_rank(self):
            if dist.get_rank() != 0:
                return
            self.queue.append(self.kv_cache.add_dummy_requests([0])[0])

        def _pad_on_every_rank(self):
            self.queue.append(self.kv_cache.add_dummy_requests([0])[0])

        def _pad_guarded(self):
            if dist.get_rank() != 0:
                return
            try:
                self.queue.append(self.kv_cache.add_dummy_requests([0])[0])
            except RuntimeError:
                pass

        def step_idle(self, sizes):
            self._pad_on_idle_rank()
            dist.all_reduce(sizes)

        def step_every(self, sizes):
            self._pad_on_every_rank()
            dist.all_reduce(sizes)

        def step_guarded(self, sizes):
            self._pad_guarded()
            dist.all_reduce(sizes)

        def step_own_exit_first(self, sizes, stop):
            self._pad_on_idle_rank()
            if stop[dist.get_rank()]:
                return
            dist.all_reduce(sizes)
"""


def test_under_hang_a_callee_whose_own_tests_choose_the_ranks_that_fail_splits_the_group():
    # The KV-cache allocation (tensorrt_llm preset, local_failures) fails on the rank that does it; only
    # rank 0 pads in ``_pad_on_idle_rank``, so its failure leaves rank 0 alone out of the all-reduce.  Work
    # every rank does fails alike (no finding), and work inside a ``try`` is handled where it fails.  A site
    # with a differing test of its own is reported for that test (the callee's failure is the outermost
    # reason), so the exit in ``step_own_exit_first`` keeps its CSL102.
    assert _findings(CALLEE_FAILS, presets=["tensorrt_llm"]) == [(28, "CSL104"), (42, "CSL102")]
    crash = Settings(unhandled_exceptions="crash")
    assert _findings(CALLEE_FAILS, settings=crash, presets=["tensorrt_llm"]) == [(42, "CSL102")]


METHODS_ASKED = """
    import torch.distributed as dist


    class Controller:
        def __init__(self, group):
            self.group = group

        def forward(self, batch):
            dist.all_reduce(batch, group=self.group)

        def dummy_forward(self, empty):
            dist.all_reduce(empty, group=self.group)


    class Engine:
        def __init__(self, controller):
            self.controller = controller
            self.waiting_request_ids = []

        def step(self, batch, empty):
            if len(self.waiting_request_ids) > 0:
                self.controller.forward(batch)

        def step_or_dummy(self, batch, empty):
            if len(self.waiting_request_ids) > 0:
                self.controller.forward(batch)
            else:
                self.controller.dummy_forward(empty)
"""


def test_a_field_nothing_types_is_the_one_class_with_every_method_asked_of_it():
    # ``self.controller`` is a parameter of unknown class and ``forward`` too generic a name to follow
    # alone, but only ``Controller`` defines both ``forward`` and ``dummy_forward``, the methods the class
    # asks of that field.  The engine's waiting requests are this rank's (megatron preset), so ``step``
    # forwards on some ranks only; ``step_or_dummy``'s idle arm issues the same all-reduce.
    assert _findings(METHODS_ASKED) == [(23, "CSL101")]
    # asked only a generic name, the field stays unknown
    generic_only = METHODS_ASKED.replace("self.controller.dummy_forward(empty)", "pass")
    assert _findings(generic_only) == []


ARM_WORK = """
    import os
    import torch.distributed as dist


    class Cleaner:
        def __init__(self):
            self.pending = []

        def drop(self, path, request, t):
            if dist.get_rank() == 0:
                {work}
            dist.all_reduce(t)
"""


@pytest.mark.parametrize("work, expected", [
    # INVALID: removing a file fails on rank 0's own disk, and rank 0 then leaves the all-reduce
    ("os.remove(path)", [(13, "CSL104")]),
    # VALID: a list's ``remove`` is not this rank's I/O, though it shares the name (the same test as a
    # callee's work in ``failing_functions``)
    ("self.pending.remove(request)", []),
])
def test_under_hang_local_work_in_an_arm_is_a_builtin_or_module_function(work, expected):
    hang = Settings(unhandled_exceptions="hang")
    assert _findings(ARM_WORK.replace("{work}", work), settings=hang) == expected


SET_ORDER = """
    import torch.distributed as dist

    class Gathered:
        def __init__(self, params):
            self.params = list(set(params))
            self.ordered = sorted(set(params), key=lambda p: p.ds_id)

        def release(self, src):
            for p in self.params:
                dist.broadcast(p, src, group=p.group)

        def release_in_agreed_order(self, src):
            for p in self.ordered:
                dist.broadcast(p, src, group=p.group)

    def by_name(tensors, src):
        names = {t.name for t in tensors}
        return [dist.broadcast(tensors[n], src) for n in names]

    def filled_later(buckets):
        seen = set()
        for bucket in buckets:
            seen.add(bucket.key)
        for key in seen:
            dist.all_reduce(buckets[key])

    def ints_hash_to_themselves(t):
        for step in set(range(4)):
            dist.all_reduce(t[step])

    def only_asks_about_the_set(t, params):
        names = set(p.name for p in params)
        if "bias" in names:
            dist.all_reduce(t)
        if len(names) > 2:
            return
        while names:
            names.pop()
        dist.barrier()
"""


def test_a_set_iterates_in_each_process_own_order_and_sorting_agrees_on_one():
    # a loop over a set issues its per-element collectives for different
    # elements on each rank (object ids, salted string hashes); sorted() gives
    # every rank one order, a set of ints has it already, and a set's length,
    # truth and membership are the same everywhere
    assert _findings(SET_ORDER) == [(11, "CSL103"), (19, "CSL103"), (26, "CSL103")]


SET_ORDER_ELEMENT = """
    import torch.distributed as dist

    def per_element(tensors):
        for t in set(tensors):
            grad = t.grad
            dist.all_reduce(grad)

    def same_call_for_every_element(tensors, flag):
        for t in set(tensors):
            dist.barrier()
        return [dist.all_reduce(flag) for _ in {t.name for t in tensors}]
"""


def test_a_loop_over_a_set_matters_only_where_the_collective_takes_the_element():
    assert _findings(SET_ORDER_ELEMENT) == [(7, "CSL103")]


REGISTRY = """
    import torch.distributed as dist

    _TRACKER = {}
    _GROUPS = {}
    _CONFIGURED = {"loss": None}
    _SEEN = []

    def record(name, value):
        if name not in _TRACKER:
            _TRACKER[name] = value

    def group_for(ranks):
        key = tuple(ranks)
        if key not in _GROUPS:
            _GROUPS[key] = dist.new_group(ranks=list(key))
        return _GROUPS[key]

    def remember(name):
        _SEEN.append(name)

    def reduce_tracked():
        for name in _TRACKER:
            dist.all_reduce(_TRACKER[name])

    def reduce_items():
        for name, value in list(_TRACKER.items()):
            dist.all_reduce(value)

    def barrier_per_group():
        for key, group in _GROUPS.items():
            dist.barrier(group=group)

    def reduce_configured(names):
        for name in names:
            dist.all_reduce(_TRACKER[name])

    def reduce_constant():
        for name in _CONFIGURED:
            dist.all_reduce(_CONFIGURED[name])

    def reduce_remembered(t):
        for name in _SEEN:
            dist.all_reduce(t[name])
"""


def test_a_module_registry_filled_on_first_use_holds_this_process_history():
    # a loop over its entries makes a collective per entry this rank met;
    # a table of groups made by a collective is filled alike on every rank,
    # and a container filled unconditionally or never is no first-use registry
    assert _findings(REGISTRY) == [(24, "CSL103"), (28, "CSL103")]


SET_ORDER_THROUGH_CALLS = """
    import torch.distributed as dist

    def active(outputs, supported):
        return set(outputs) & set(supported)

    class Consolidate:
        def names(self):
            return {o.name for o in self.outputs}

        def ordered_names(self):
            return sorted(self.names())

        def per_key(self, tensors):
            for key in dict.fromkeys(self.names()):
                dist.all_reduce(tensors[key])

        def per_key_agreed(self, tensors):
            for key in self.ordered_names():
                dist.all_reduce(tensors[key])

        def per_output(self, tensors, outputs, supported):
            results = {key: tensors[key] for key in active(outputs, supported)}
            for key, value in results.items():
                dist.all_reduce(value)
"""


def test_a_set_order_reaches_a_loop_through_a_function_that_returns_it():
    # a method or function of the file every return of which is a set
    # iterates in that order; a dict built from one keeps it; sorted() ends it
    assert _findings(SET_ORDER_THROUGH_CALLS) == [(16, "CSL103"), (25, "CSL103")]


CLASS_GROUP_CACHE = """
    import torch.distributed as dist

    _GROUPS = {}

    def table_group(key):
        if key not in _GROUPS:
            _GROUPS[key] = dist.new_group(ranks=list(key))
        return _GROUPS[key]

    class Bridge:
        _groups = {}
        _sizes = {}

        def __init__(self, leader, ranks, every_member_list):
            self.leader = leader
            self.ranks = tuple(sorted(ranks))
            self.eager = {tuple(r): dist.new_group(ranks=list(r)) for r in every_member_list}

        def group(self):
            if self.ranks not in Bridge._groups:
                Bridge._groups[self.ranks] = dist.new_group(ranks=list(self.ranks))
            return Bridge._groups[self.ranks]

        def size(self):
            if self.ranks not in self._sizes:
                self._sizes[self.ranks] = len(self.ranks)
            return self._sizes[self.ranks]

        def send(self, tensor):
            dist.broadcast(tensor, src=self.leader, group=self.eager[self.ranks])
"""


def test_a_class_cache_filled_by_a_collective_on_first_use_creates_it_at_per_rank_times():
    # the first-use test of a class-level cache whose arm makes a group:
    # each rank makes it when its own instance first asks; a cache filled
    # without a collective, groups made eagerly, and a module-level table of
    # groups (filled by set-up code every rank calls alike) are not reported
    findings = check_source(textwrap.dedent(CLASS_GROUP_CACHE), report="per-site").findings
    assert [(f.line, f.code) for f in findings] == [(22, "CSL101")]
    assert "`Bridge._groups` (registry filled lazily by this process)" in findings[0].message


DATAPIPE_ITERATOR = """
    import torch.distributed as dist
    from torch.utils.data import DataLoader

    class Base:
        def __iter__(self):
            return iter(())

    class MainOnly(DataLoader):
        def __iter__(self):
            source = None
            if dist.get_rank() == 0:
                source = super().__iter__()
            return source

    class Everywhere(DataLoader):
        def __iter__(self):
            source = super().__iter__()
            return source if dist.get_rank() == 0 else None

    class OwnBase(Base, DataLoader):
        def __iter__(self):
            if dist.get_rank() == 0:
                return super().__iter__()
            return None

    def loop(loader):
        if dist.get_rank() == 0:
            for batch in loader:
                print(batch)
"""


def test_making_a_data_loader_iterator_explicitly_is_a_collective():
    # a DataLoader's __iter__ agrees on a DataPipe's shared seed over every
    # rank; the explicit super().__iter__() of a subclass counts (not when a
    # base of the file comes first in the bases), a for loop over a loader does not
    assert _findings(DATAPIPE_ITERATOR) == [(13, "CSL101")]


RICH_COLUMN = """
    import torch.distributed as dist
    from rich.progress import ProgressColumn
    from rich.text import Text

    def synced(values):
        out = {}
        for name in sorted(values):
            t = values[name].clone()
            dist.all_reduce(t)
            out[name] = t.item()
        return out

    class SyncingColumn(ProgressColumn):
        def __init__(self, values):
            self.values = values
            super().__init__()

        def render(self, task):
            return Text(str(synced(self.values)))

    class CachedColumn(ProgressColumn):
        def __init__(self):
            self.metrics = {}
            super().__init__()

        def update(self, values):
            self.metrics = synced(values)

        def render(self, task):
            return Text(str(self.metrics))
"""


def test_a_method_a_library_calls_from_its_own_thread_must_not_reach_a_collective():
    # rich's refresh thread calls every column's render() on its timer
    # (lightning preset, thread_callbacks): a collective reached from it runs
    # per-process times; the column handed metrics synced on the main thread is clean
    findings = check_source(textwrap.dedent(RICH_COLUMN), report="per-site").findings
    assert [(f.line, f.code) for f in findings] == [(20, "CSL103")]
    assert "library's own thread calls `rich.progress.ProgressColumn.render`" in findings[0].message
    # the same class without the library base is an ordinary method
    plain = RICH_COLUMN.replace("class SyncingColumn(ProgressColumn)", "class SyncingColumn")
    assert _findings(plain) == []


THREAD_DUP = """
    import threading

    from mpi4py import MPI

    class Loops:
        def __init__(self, comm):
            self.comm = comm
            self.own_comm = None

        def _serve(self):
            while True:
                self.comm.send(1, dest=0)

        def _broadcast_copying(self):
            comm = self.comm.Dup()
            comm.bcast(None, root=0)

        def _broadcast(self):
            self.own_comm.bcast(None, root=0)

        def start_copying(self):
            threading.Thread(target=self._serve, daemon=True).start()
            threading.Thread(target=self._broadcast_copying, daemon=True).start()

        def start(self):
            self.own_comm = self.comm.Dup()
            threading.Thread(target=self._serve, daemon=True).start()
            threading.Thread(target=self._broadcast, daemon=True).start()
"""


def test_a_communicator_copied_inside_a_thread_target_races_the_other_threads():
    # Dup is a collective on the parent communicator, which another thread
    # uses: made inside the thread's target it lands where that thread's
    # scheduling says; made before the threads start (start), it does not.
    # A collective on the copy, inside the thread, is that thread's own.
    findings = check_source(textwrap.dedent(THREAD_DUP), report="per-site").findings
    assert [(f.line, f.code) for f in findings] == [(16, "CSL101")]
    assert "runs on a background thread (`threading.Thread(target=_broadcast_copying)`)" in findings[0].message


BUILT_AND_HANDED = """
    import deepspeed
    import torch
    import torch.distributed as dist
    from colossalai.nn.parallel import GeminiDDP
    from torch.distributed.fsdp import fully_shard
    from transformers import AutoModelForCausalLM


    def build_partitioned(config):
        with deepspeed.zero.Init():
            return AutoModelForCausalLM.from_config(config)


    def build_plain(config):
        return AutoModelForCausalLM.from_config(config)


    def shard(model):
        fully_shard(model)
        return model


    def main_forward(model, batch):
        if dist.get_rank() == 0:
            return model(batch)


    def plain_main_forward(model, batch):
        if dist.get_rank() == 0:
            return model(batch)


    def keyword_main_forward(batch, model=None):
        if dist.get_rank() == 0:
            return model(batch)


    def partitioned(config, batch):
        model = build_partitioned(config)
        return main_forward(model, batch)


    def plain(config, batch):
        model = build_plain(config)
        return plain_main_forward(model, batch)


    def sharded(module, batch):
        return keyword_main_forward(batch, model=shard(module))


    class Actor:
        def __init__(self, module):
            self.model = GeminiDDP(module)

        def step(self, batch):
            return main_forward(self.model, batch)
"""


def test_a_module_a_builder_of_the_file_returns_keeps_its_wrapping_where_it_is_handed():
    # a builder returns a module built under ``deepspeed.zero.Init()`` (ZeRO-3) or wrapped by ``fully_shard``;
    # the function of the file a caller hands it to calls the wrapped forward (a collective); the plain
    # module's forward is local, and a keyword argument that holds a builder's result is followed too.
    assert _findings(BUILT_AND_HANDED) == [(26, "CSL101"), (36, "CSL101")]


SYNCED_DECODE = """
    import deepspeed
    import torch
    import torch.distributed as dist
    from transformers import AutoModelForCausalLM


    def build(config):
        with deepspeed.zero.Init():
            return AutoModelForCausalLM.from_config(config)


    def all_finished(finished, device):
        running = torch.tensor(0.0 if finished else 1.0, device=device)
        dist.all_reduce(running)
        return running.item() == 0.0


    def synced(model, input_ids, max_length):
        finished = False
        while not all_finished(finished, input_ids.device):
            logits = model(input_ids).logits
            if finished:
                continue
            next_tokens = logits[:, -1, :].argmax(dim=-1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            if input_ids.shape[-1] >= max_length:
                finished = True
        return input_ids


    def per_rank(model, input_ids, max_length):
        while input_ids.shape[-1] < max_length:
            logits = model(input_ids).logits
            next_tokens = logits[:, -1, :].argmax(dim=-1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        return input_ids


    def evaluate(config, input_ids, max_length):
        model = build(config)
        return synced(model, input_ids, max_length), per_rank(model, input_ids, max_length)
"""


def test_a_flag_agreed_by_a_function_of_the_file_stays_agreed_past_the_nesting_limit():
    # the tokens grow by a call result every pass; past the nesting limit of call results the arguments of
    # ``all_finished`` (a function of the file that issues a collective itself) stay bound to its parameters
    # instead of spilling into its result: the all-reduced flag it returns does not read this rank's tokens.
    # The loop on this rank's own length is reported.
    assert _findings(SYNCED_DECODE) == [(34, "CSL103")]


TORCH_DRAWS = """
    import torch
    import torch.distributed as dist

    def sampled(logits, group):
        token = torch.multinomial(torch.softmax(logits, -1), 1)
        if token.item() == 0:
            dist.barrier(group=group)                      # reported, this process's own draw

    def agreed(logits, group):
        token = torch.multinomial(torch.softmax(logits, -1), 1)
        dist.broadcast(token, src=0, group=group)
        if token.item() == 0:
            dist.barrier(group=group)

    def shaped(group):
        picks = torch.multinomial(torch.ones(4, 8), 2)
        for row in picks:
            dist.all_reduce(row, group=group)

    def all_finished(unfinished):
        unfinished = unfinished.clone()
        dist.all_reduce(unfinished)
        return unfinished.max() == 0

    def grows(model, tokens, max_len, eos):
        unfinished = tokens.new(tokens.shape[0]).fill_(1)
        for _ in range(tokens.size(1), max_len):
            nxt = torch.multinomial(torch.softmax(model(tokens), -1), 1).squeeze(1)
            tokens = torch.cat([tokens, nxt[:, None]], dim=-1)
            unfinished = unfinished.mul((nxt != eos).long())
            if all_finished(unfinished):
                break
        return tokens
"""


def test_a_sampled_token_is_this_process_own_and_a_for_loop_counts_its_iterable_once():
    # A token sampled by torch differs between processes in value, never in size (as Python's and
    # NumPy's draws); a broadcast draw is agreed, and so is a flag all-reduced before the test.  ``for``
    # evaluates its iterable once, on entry: a draw the body concatenates to the tokens does not change
    # how many passes the range made from them gives.
    assert _findings(TORCH_DRAWS) == [(8, "CSL101")]


VLLM_SCHEDULE = """
    import torch
    import torch.distributed as dist
    from vllm.distributed.parallel_state import get_dp_group

    class Runner:
        def __init__(self, model, config):
            self.model = model
            self.config = config

        def coordinate(self, num_tokens):
            counts = torch.tensor([num_tokens])
            dist.all_reduce(counts, group=get_dp_group().cpu_group)
            return counts

        def returns_early(self, scheduler_output):
            if not scheduler_output.total_num_scheduled_tokens:
                return None
            return self.model(self.coordinate(scheduler_output.total_num_scheduled_tokens))

        def joins_before_returning(self, scheduler_output):
            if not scheduler_output.total_num_scheduled_tokens:
                if self.config.data_parallel_size > 1:
                    self.coordinate(0)
                return None
            return self.model(self.coordinate(scheduler_output.total_num_scheduled_tokens))

        def joins_something_else(self, scheduler_output):
            if not scheduler_output.total_num_scheduled_tokens:
                if self.config.data_parallel_size > 1:
                    dist.barrier(group=get_dp_group().cpu_group)
                return None
            return self.model(self.coordinate(scheduler_output.total_num_scheduled_tokens))
"""


def test_a_dp_rank_schedule_is_its_own_and_a_leaving_arm_may_join_the_peers_under_its_own_tests():
    # What a DP rank scheduled for the step (``total_num_scheduled_tokens``) is its own (vllm preset,
    # dim dp).  Returning empty skips the peers' coordination all-reduce; an arm that leaves after
    # issuing, on its paths that issue anything, what the rest of the block issues (a dummy step) keeps
    # the ranks in step -- which of its paths it takes is its own (uniform) test's question -- while an
    # arm that issues something else does not.
    assert _findings(VLLM_SCHEDULE) == [(19, "CSL102"), (31, "CSL101"), (33, "CSL102")]


WRAPPED_FORWARD_RAISES = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    class TooShort(ValueError):
        pass

    def agree(local_ok, device):
        if not (dist.is_available() and dist.is_initialized()):
            return bool(local_ok)
        flag = torch.tensor([local_ok], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        return bool(flag.item())

    def agree_if(local_ok, distributed, device):
        if not distributed:
            return bool(local_ok)
        flag = torch.tensor([local_ok], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        return bool(flag.item())

    class Recipe:
        def setup(self, module, world_size):
            if world_size > 1:
                module = DistributedDataParallel(module)
            self.model = module

        def skips_its_backward(self, loader):
            for batch in loader:
                try:
                    loss = self.model(batch)
                    loss.backward()
                except TooShort:
                    continue

        def skips_together(self, loader, device):
            for batch in loader:
                ok = 1
                try:
                    loss = self.model(batch)
                except TooShort:
                    ok = 0
                if agree(ok, device):
                    loss.backward()

        def skips_by_a_flag_it_is_handed(self, loader, distributed, device):
            for batch in loader:
                ok = 1
                try:
                    loss = self.model(batch)
                except TooShort:
                    ok = 0
                if agree_if(ok, distributed, device):
                    loss.backward()
"""


def test_a_wrapped_forward_runs_this_rank_code_and_can_raise_on_it_alone():
    # A module wrapped for data parallelism and handed on to a field (``module = DDP(module)`` under
    # ``if world_size > 1``, then ``self.model = module``) is still the wrapped module.  Its forward runs
    # the module's own code on this rank's batch, which can raise there alone (local work): the handler
    # that skips the backward skips the gradient all-reduce on that rank only (CSL104).  Agreeing on a
    # flag first keeps the ranks together; ``not dist.is_initialized()`` is the single-process path of
    # the agreement helper (read in a world of several ranks, it is never taken), while a flag the
    # helper is handed may be false on a job of several ranks.
    assert _findings(WRAPPED_FORWARD_RAISES) == [(33, "CSL104"), (55, "CSL101")]


SGLANG_KV_CHECKSUM = """
    import torch
    import torch.distributed as dist

    class Decode:
        def __init__(self, model, tp_group, tp_cpu_group):
            self.model = model
            self.tp_group = tp_group
            self.tp_cpu_group = tp_cpu_group

        def forward(self, reqs):
            out = self.model(reqs)
            dist.all_reduce(out, group=self.tp_group)
            return out

        def drops_its_own(self, reqs):
            kept = [r for r in reqs if r.computed_checksum() == r.expected_kv_checksum]
            if not kept:
                return None
            return self.forward(kept)

        def drops_what_all_agree(self, reqs):
            bad = torch.tensor([int(r.computed_checksum() != r.expected_kv_checksum) for r in reqs])
            dist.all_reduce(bad, op=dist.ReduceOp.MAX, group=self.tp_cpu_group)
            kept = [r for r, b in zip(reqs, bad.tolist()) if not b]
            if not kept:
                return None
            return self.forward(kept)
"""


def test_the_checksum_of_the_kv_slice_a_rank_received_is_its_own():
    # SGLang's KV transfer checksum (``Req.expected_kv_checksum``, sglang preset): each attention TP
    # rank receives and verifies its own slice of the KV cache, so dropping the requests whose check
    # fails on this rank leaves the ranks with different batches; agreeing on the mismatches first
    # (a MAX all-reduce) drops the same ones everywhere.
    assert _findings(SGLANG_KV_CHECKSUM) == [(20, "CSL102")]
