"""The world a preset declares (presets.World): which dimensions a group spans
and what a value agreed over a group still differs along come from the loaded
presets, not one fixed lattice (issue 14)."""

import dataclasses
import textwrap

from cslint.api import check_source
from cslint.presets import GENERIC_WORLD, World, load_presets, tensorrt_llm

TRTLLM_LIKE = World(factors=("tp", "pp", "cp"), inside=(("dp", "tp"), ("ep", "tp")))


def test_a_declared_world_spans_the_dimensions_inside_a_factor():
    assert TRTLLM_LIKE.span("tp") == {"tp", "dp", "ep"}
    assert TRTLLM_LIKE.span("tp_cp") == {"tp", "cp", "dp", "ep"}
    assert TRTLLM_LIKE.span("pp") == {"pp"}
    assert TRTLLM_LIKE.span("dp") == {"dp"}
    assert "x" in TRTLLM_LIKE.span("world") and "x" in TRTLLM_LIKE.span("group:self.g")
    assert GENERIC_WORLD.span("tp") == {"tp"}


def test_an_unnamed_split_agreed_over_some_factors_differs_along_the_others_only():
    every = GENERIC_WORLD.span("world")
    assert TRTLLM_LIKE.residual(every, TRTLLM_LIKE.span("tp_cp")) == {"pp"}
    assert TRTLLM_LIKE.residual(every, TRTLLM_LIKE.span("pp")) == {"tp", "cp", "dp", "ep"}
    assert TRTLLM_LIKE.residual(every, TRTLLM_LIKE.span("world")) == frozenset()
    # the generic lattice keeps the split it cannot name
    assert GENERIC_WORLD.residual(every, GENERIC_WORLD.span("tp_cp")) == {"pp", "dp", "ep", "x"}


def test_the_loaded_presets_own_the_world():
    assert load_presets(["torch_distributed", "vllm"]).world == GENERIC_WORLD
    assert load_presets(["torch_distributed", "vllm", "tensorrt_llm"]).world.span("tp") == {"tp", "dp", "ep"}


EXECUTOR = """
    class Executor:
        def __init__(self, dist):
            self.dist = dist
            if self.dist.pp_size > 1:
                self.event_loop = self._loop_pp
            else:
                self.event_loop = self._loop

        def _ready(self):
            return all(self.dist.tp_cp_allgather(self.dist.rank % 2 == 0))

        def _loop(self):
            while True:
                if self._ready():
                    self.dist.allgather(1)

        def _loop_pp(self):
            while True:
                if self._ready():
                    self.dist.allgather(2)

        def dp_leader(self):
            if self.dist.dp_rank == 0:
                self.dist.tp_allgather(3)
"""


def _lines(presets):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(EXECUTOR), presets=presets).findings)


def test_a_verdict_agreed_over_tp_and_cp_is_agreed_where_the_stage_has_one_rank():
    # VALID: the loop bound where pp has one rank reads a verdict gathered over TP+CP,
    # which in TensorRT-LLM's world (TP x PP x CP, attention-DP inside TP) is every rank.
    # INVALID: the PP loop reads the same verdict, which still differs between stages;
    # a DP rank's test guards a TP collective, and DP ranks are TP ranks there.
    assert _lines(["torch_distributed", "tensorrt_llm"]) == [(21, "CSL101"), (25, "CSL101")]


def test_without_a_declared_world_the_generic_lattice_stands(monkeypatch):
    # the same preset with no world of its own: the unnamed split survives the
    # TP+CP gather, and a DP rank's test says nothing about the TP group

    monkeypatch.setattr(tensorrt_llm, "PRESET", dataclasses.replace(tensorrt_llm.PRESET, world=None))
    assert _lines(["torch_distributed", "tensorrt_llm"]) == [(16, "CSL101"), (21, "CSL101")]


def test_an_unnamed_split_agreed_over_a_group_inside_a_factor_keeps_that_factor_but_not_the_group():
    every = GENERIC_WORLD.span("world")
    assert TRTLLM_LIKE.residual(every, TRTLLM_LIKE.span("ep")) == {"tp", "pp", "cp", "dp"}


DP_GATHER = """
    class Executor:
        def __init__(self, dist):
            self.dist = dist
            self.active_requests = []

        def vote(self):
            if len(self.active_requests) > 0:
                self.dist.dp_vote(1)
"""


def test_a_value_that_differs_along_a_factor_differs_along_the_dimensions_inside_it(monkeypatch):
    # under attention-DP a rank's requests differ between TP ranks; the attention-DP
    # ranks are TP ranks, so a gather over them is endangered too (not in the generic lattice)
    from cslint.config import Settings

    settings = Settings(presets=["torch_distributed", "tensorrt_llm"], collectives=["*.dp_vote:dp"])
    found = [(f.line, f.code) for f in check_source(textwrap.dedent(DP_GATHER), settings=settings).findings]
    assert found == [(9, "CSL101")]
    monkeypatch.setattr(tensorrt_llm, "PRESET", dataclasses.replace(tensorrt_llm.PRESET, world=None))
    assert check_source(textwrap.dedent(DP_GATHER), settings=settings).findings == []
