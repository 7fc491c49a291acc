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

from cslint.analysis.scope import ModuleContext
from cslint.config import Settings
from cslint.presets import GENERIC_WORLD, World, merge_presets
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
