"""World rank 0 is rank 0 of every group it belongs to and lies in the
first stage (issue 14, stage-predicate-in-tp-group): a test "this rank is
world rank 0, or this whole stage schedules" is the same on every rank of a
TP group whenever the TP group has several ranks, since the stage operand
already holds in the group world rank 0 is in.  Each shape that must stay
quiet sits beside the one that must still be reported."""

import ast
import textwrap

from cslint.analysis.feasibility import FIRST_RANK_ROOT, first_rank_facts
from cslint.api import check_source

PLANNER = """
    class Planner:
        def __init__(self, dist, enable_attention_dp):
            self.dist = dist
            self.enable_attention_dp = enable_attention_dp
            self.queue = []

        def _balance(self):
            if self.enable_attention_dp:     # a mode: each TP rank owns its queue
                return self.dist.tp_allgather(len(self.queue))
            return None

        def plan(self):
            several = self.dist.tp_size > 1 and self.enable_attention_dp
            if self.dist.rank == 0 or (self.dist.is_first_pp_rank and several):
                self._balance()                                     # quiet: the stage decides

        def plan_any_stage(self):
            if self.dist.rank == 0 or self.dist.is_last_pp_rank:
                self._balance()                                     # reported: rank 0 is not last

        def plan_tp_leader(self):
            if self.dist.tp_rank == 0 or self.dist.is_first_pp_rank:
                self._balance()                                     # reported: one leader per TP group

        def plan_across_stages(self):
            if self.dist.rank == 0 or self.dist.is_first_pp_rank:
                self.dist.pp_allgather(len(self.queue))             # reported: the PP group spans the stages
"""


def _lines(source):
    found = check_source(textwrap.dedent(source), presets=["torch_distributed", "tensorrt_llm"], report="per-site")
    return sorted((f.line, f.code) for f in found.findings)


def test_world_rank_zero_or_the_first_stage_is_agreed_over_a_tp_group():
    assert _lines(PLANNER) == [(20, "CSL101"), (24, "CSL101"), (28, "CSL101")]


def test_the_first_rank_facts_of_each_operand():
    def facts(text, fold=None):
        return first_rank_facts(ast.parse(text, mode="eval").body, fold)

    assert facts("dist.rank == 0 or (dist.is_first_pp_rank and dist.tp_size > 1)") == (
        FIRST_RANK_ROOT, frozenset({"tp"}))
    assert facts("0 == get_rank() or pp_rank == 0") == (FIRST_RANK_ROOT, frozenset())
    # a node's or a group's rank 0 is not world rank 0 alone; a last stage does not hold it
    assert facts("local_rank == 0 or dist.is_last_pp_rank") == (frozenset(), None)
    assert facts("get_rank(group) == 0 or flag") == (None, None)
    assert facts("dist.rank == 0 and dist.is_first_pp_rank") == ()
