"""A preset's world scoped to its own packages (presets.World.packages and
words, issue 14): how a framework's code names its groups applies to that
framework's modules only, the generic reading everywhere else.

SGLang's TP group (``get_tp_group()``, ``self.tp_group``, ``tp_cpu_group``)
holds the attention-TP, attention-CP and attention-DP ranks of a stage (and
the MoE EP x DP x TP ranks, the same ranks factored otherwise), while its
attention-TP group holds none of the CP or DP peers.  So in ``sglang.srt``
code a value broadcast over the TP group is agreed along DP, and a
collective over the TP group under a test agreed over attention TP alone is
decided apart by the DP and CP peers.  The same words in another package
name a plain TP group."""

import ast
import os
import textwrap

import pytest

from cslint.analysis.scope import ModuleContext
from cslint.api import check_paths
from cslint.config import Settings
from cslint.presets import GENERIC_WORLD, World, load_presets, merge_presets
from cslint.presets.registry import pack
from cslint.presets.specs import Preset

MINI = World(packages=("mini.runtime",), words=(("tp_group", "tp_cp_dp_ep"),))


def test_a_scoped_world_reads_its_packages_texts_with_its_own_words():
    knowledge = merge_presets([pack("torch_distributed"), Preset(name="mini", world=MINI)])
    assert knowledge.world == GENERIC_WORLD  # the spans stay the run's
    inside = knowledge.world_of("mini.runtime.scheduler")
    assert inside is MINI and knowledge.world_of("mini.runtime") is MINI
    assert inside.group_from_text("self.tp_group.cpu_group") == "tp_cp_dp_ep"
    # a whole identifier only: the attention-TP group and other TP subgroups keep the generic reading
    assert inside.group_from_text("self.attn_tp_group") == "tp"
    assert inside.group_from_text("self.moe_tp_group") == "tp"
    assert inside.group_from_text("get_pp_group()") == "pp"
    for elsewhere in ("mini", "mini.runtimes.x", "other.runtime.scheduler"):
        assert knowledge.world_of(elsewhere).group_from_text("self.tp_group") == "tp"
    assert knowledge.world.span("tp_cp_dp_ep") == {"tp", "cp", "dp", "ep"}


def test_the_group_word_a_scoped_world_hands_on_reads_as_itself():
    # a call passes the world's group by its word (the callee binds the text alone)
    assert GENERIC_WORLD.group_from_text("tp_cp_dp_ep") == "tp_cp_dp_ep"
    assert GENERIC_WORLD.group_from_text("get_tp_cp_group()") == "tp_cp"


_BINDINGS = """
def serve(parallel):
    group = parallel.tp_group
    return group.cpu_group


class Cache:
    def __init__(self, handed):
        self.handed = handed
        self.own = state().parallel.tp_group
"""


def _module(module: str):
    knowledge = merge_presets([pack("torch_distributed"), Preset(name="mini", world=BOUND)])
    return ModuleContext("worker.py", module, ast.parse(_BINDINGS), knowledge, Settings(), False)


BOUND = World(packages=("mini",), words=(("parallel.tp_group", "tp_cp_dp_ep"),))


def test_a_module_of_a_scoped_world_follows_its_own_names_and_fields_to_the_worlds_words():
    ctx = _module("mini.worker")
    assert ctx.world is BOUND
    assert ctx.group_word("parallel.tp_group.cpu_group") == "tp_cp_dp_ep"
    assert ctx.group_word("group.cpu_group") == "tp_cp_dp_ep"  # every binding of the name holds the form
    assert ctx.group_word("self.own") == "tp_cp_dp_ep"
    # a parameter's group is what its callers hand it
    assert ctx.group_word("handed") is None and ctx.group_word("self.handed") is None
    elsewhere = _module("other.worker")
    assert elsewhere.group_word("group.cpu_group") is None
    assert elsewhere.group_word("parallel.tp_group.cpu_group") == "tp"


# each name below is bound once by a plain ``name = <the full group>``, and once otherwise elsewhere in the file
_REBOUND = """
from registry import imported


def full(parallel):
    plain = parallel.tp_group
    handed = parallel.tp_group
    looped = parallel.tp_group
    held = parallel.tp_group
    indexed = parallel.tp_group
    walrus = parallel.tp_group
    caught = parallel.tp_group
    imported = parallel.tp_group
    tupled = parallel.tp_group
    grown = parallel.tp_group
    return plain


def others(groups, handed):
    for looped in groups:
        pass
    with groups.opened() as held:
        pass
    indexed = groups[0]
    if (walrus := groups.pop()):
        pass
    try:
        pass
    except ValueError as caught:
        pass
    first, tupled = groups
    grown += groups


class Cache:
    def __init__(self):
        self.late = None
        self.mixed = None

    def setup(self, handed):
        self.late = state().parallel.tp_group
        self.mixed = handed
"""


def test_a_name_bound_otherwise_anywhere_in_the_file_is_not_read_as_its_plain_writes_group():
    knowledge = merge_presets([pack("torch_distributed"), Preset(name="mini", world=BOUND)])
    ctx = ModuleContext("worker.py", "mini.worker", ast.parse(_REBOUND), knowledge, Settings(), False)
    assert ctx.group_word("plain.cpu_group") == "tp_cp_dp_ep"  # every binding of the name holds the form
    # a parameter elsewhere, a loop, ``with``, tuple or walrus target, an element, ``except ... as``, an import,
    # an augmented assignment: the name may hold an attention-TP group there
    for name in ("handed", "looped", "held", "indexed", "walrus", "caught", "imported", "tupled", "grown"):
        assert ctx.group_word(name + ".cpu_group") is None, name
    # a field first set to None, and then to the full group alone, is that group; one also set to a
    # parameter is not
    assert ctx.group_word("self.late.cpu_group") == "tp_cp_dp_ep"
    assert ctx.group_word("self.mixed.cpu_group") is None


def test_a_world_collective_stays_over_the_world_whatever_words_its_receiver_holds():
    knowledge = merge_presets([pack("torch_distributed"), pack("accelerate"), Preset(name="mini", world=BOUND)])
    ctx = ModuleContext("worker.py", "mini.worker", ast.parse(""), knowledge, Settings(), False)
    over_world = ast.parse("parallel.tp_group.wait_for_everyone()").body[0].value
    assert ctx.match_collective(over_world, "parallel.tp_group.wait_for_everyone", None).group == "world"
    # a collective of no fixed group is still over the group its receiver's words name
    over_group = ast.parse("parallel.tp_group.barrier()").body[0].value
    assert ctx.match_collective(over_group, "parallel.tp_group.barrier", None).group == "tp_cp_dp_ep"


_PARALLEL = """
    class _Parallel:
        tp_group = None
        attn_tp_group = None
        attn_cp_group = None
        dp_group = None


    _STATE = _Parallel()


    def get_parallel():
        return _STATE


    def get_tp_group():
        return get_parallel().tp_group


    def get_attn_tp_group():
        return get_parallel().attn_tp_group


    def get_attn_cp_group():
        return get_parallel().attn_cp_group


    def get_dp_group():
        return get_parallel().dp_group
"""

_WORKER = """
    import time

    import torch.distributed as dist

    from ..utils import broadcast_pyobj
    from ..distributed.communication_op import tensor_model_parallel_all_reduce
    from ..offload import Offload
    from ..parallel import get_attn_cp_group, get_attn_tp_group, get_dp_group, get_parallel, get_tp_group


    def receive(inbox):
        parallel = get_parallel()
        local = inbox.poll(parallel.attn_dp_rank)
        tp_group = parallel.tp_group
        reqs = broadcast_pyobj(local, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])
        if reqs:
            dist.barrier(group=get_dp_group().cpu_group)                    # 18: agreed along DP in SGLang


    def agreed_over_attention_tp():
        started = time.perf_counter()
        flag = broadcast_pyobj(started > 5.0, 0, get_attn_tp_group().cpu_group)
        if flag:
            dist.barrier(group=get_tp_group().cpu_group)                    # 25: the DP and CP peers decide apart
        if flag:
            dist.barrier(group=get_attn_cp_group().cpu_group)               # 27: the CP peers decide apart


    def sync(group):
        dist.barrier(group=group)


    def agreed_over_attention_tp_then_a_helper():
        parallel = get_parallel()
        started = broadcast_pyobj(time.perf_counter() > 5.0, 0, parallel.attn_tp_group.cpu_group)
        if started:
            sync(parallel.tp_group.cpu_group)                               # 38: as at 25, through the helper


    def drain_over_a_handed_group():
        started = broadcast_pyobj(time.perf_counter() > 5.0, 0, get_attn_tp_group().cpu_group)
        offload = Offload(tp_group=get_attn_tp_group().cpu_group)
        if started:
            offload.drain()                                                 # 45: the attention-TP group, agreed


    def all_reduce_under_an_attention_tp_flag(x):
        started = broadcast_pyobj(time.perf_counter() > 5.0, 0, get_attn_tp_group().cpu_group)
        if started:
            tensor_model_parallel_all_reduce(x)                             # 51: the runtime's helper, as at 25


    def receive_where_the_group_has_peers(inbox):
        parallel = get_parallel()
        reqs = inbox.poll(parallel.attn_dp_rank)
        if parallel.tp_size > 1:
            reqs = broadcast_pyobj(reqs, parallel.tp_group.rank, parallel.tp_group.cpu_group)
        if reqs:
            dist.barrier(group=get_dp_group().cpu_group)                    # 60: as at 18, the TP group's size read so too
"""

# a cache handed the group it drains over, under the name of the TP group
_OFFLOAD = """
    import torch.distributed as dist


    class Offload:
        def __init__(self, tp_group):
            self.tp_group = tp_group

        def drain(self):
            dist.barrier(group=self.tp_group)
"""


def _findings(tmp_path, package: str) -> list:
    base = tmp_path / package
    for folder in (base, base / "srt", base / "srt" / "managers"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    (base / "srt" / "parallel.py").write_text(textwrap.dedent(_PARALLEL))
    (base / "srt" / "offload.py").write_text(textwrap.dedent(_OFFLOAD))
    (base / "srt" / "managers" / "worker.py").write_text(textwrap.dedent(_WORKER))
    found = check_paths([str(base)], report="per-site").findings
    return sorted((os.path.basename(f.path), f.line, f.code) for f in found)


def test_sglang_reads_its_tp_group_as_the_attention_tp_cp_and_dp_ranks():
    world = load_presets(["torch_distributed", "sglang"]).world_of("sglang.srt.managers.scheduler")
    assert world.group_from_text("get_parallel().tp_group.cpu_group") == "tp_cp_dp_ep"
    assert world.group_from_text("parallel.tp_group") == "tp_cp_dp_ep"
    assert world.group_from_text("get_tp_group().cpu_group") == "tp_cp_dp_ep"
    # a group handed on under the name (a layer's, a cache's ``self.tp_group``) may be the attention-TP one
    assert world.group_from_text("self.tp_group") == "tp"
    assert world.group_from_text("self.attn_tp_cpu_group") == "tp"
    assert world.group_from_text("get_attention_tp_group()") == "tp"
    assert world.group_from_text("get_dp_tp_group()") == "dp_tp"
    # the diffusion runtime lays its ranks out otherwise, and vLLM's TP group is a plain one
    knowledge = load_presets(["torch_distributed", "vllm", "sglang"])
    assert knowledge.world_of("sglang.multimodal_gen.runtime.x").group_from_text("get_tp_group()") == "tp"
    assert knowledge.world_of("vllm.distributed.parallel_state").group_from_text("get_tp_group()") == "tp"


def test_a_value_broadcast_over_sglangs_tp_group_is_agreed_along_dp(tmp_path):
    # 18 and 60 go; the full-group collectives under a test agreed over attention TP alone stay (25, 38, 51), as
    # does the CP barrier (27); the cache's drain over the attention-TP group it was handed stays clean (45)
    assert _findings(tmp_path, "sglang") == [("worker.py", 25, "CSL101"), ("worker.py", 27, "CSL101"),
                                             ("worker.py", 38, "CSL101"), ("worker.py", 51, "CSL101")]


def test_the_same_code_in_another_package_reads_a_plain_tp_group(tmp_path):
    # the DP peers' requests are still apart after a TP broadcast; the guard agreed over TP decides a TP barrier
    assert _findings(tmp_path, "other") == [("worker.py", 18, "CSL101"), ("worker.py", 27, "CSL101"),
                                            ("worker.py", 60, "CSL101")]


def test_a_scoped_world_declaring_spans_of_its_own_is_refused():
    # a scoped world names groups of the run's lattice: spans it declared would be silently ignored
    spans = World(packages=("mini",), words=(("tp_group", "tp"),), named=(("tp", frozenset({"tp", "dp"})),))
    with pytest.raises(ValueError):
        merge_presets([pack("torch_distributed"), Preset(name="mini", world=spans)])
