"""Fast paths that answer as the plain code does: Knowledge.is_uniform /
is_not_collective as one combined fnmatch regex of every pattern (most texts
tried only against the patterns whose last part has a wildcard, which may span
dots), and Span.of as the frozen Span built field by field."""

from __future__ import annotations

import fnmatch

from cslint.presets import load_presets
from cslint.presets.knowledge import _PatternMatcher

PATTERNS = ["torch.distributed.get_world_size", "*.get_world_size", "get_world_size", "*.get_*_world_size",
            "get_*_world_size", "nvml?nit", "*.cuda.device_count", "x[ab].size", "*rank_count"]

TEXTS = ["torch.distributed.get_world_size", "dist.get_world_size", "get_world_size", "self.get_world_size",
         "get_tp_world_size", "get_tp.pp_world_size", "a.get_x.y_world_size", "nvmlInit", "nvml.nit",
         "torch.cuda.device_count", "cuda.device_count", "xa.size", "xc.size", "world_size", "rank_count",
         "a.b.rank_count", "a.b_rank_count", "get_world_size.x", "", ".", "device_count"]


def _by_fnmatch(patterns, text):
    return any(fnmatch.fnmatchcase(text, p) for p in patterns)


def test_the_matcher_answers_as_every_pattern_does():
    matcher = _PatternMatcher(PATTERNS)
    for text in TEXTS:
        assert matcher.matches(text) == _by_fnmatch(PATTERNS, text), text
    # a ``*`` in the last part spans dots: only the wildcard regex sees it
    assert matcher.matches("get_tp.pp_world_size")
    assert not _PatternMatcher([]).matches("get_world_size")


def test_the_presets_patterns_answer_as_fnmatch_does():
    knowledge = load_presets(["torch_distributed", "vllm", "sglang", "megatron", "deepspeed"])
    texts = TEXTS + [p.replace("*", "abc.def").replace("?", "q") for p in knowledge.uniform + knowledge.not_collectives]
    for text in texts:
        assert knowledge.is_uniform(text) == _by_fnmatch(knowledge.uniform, text), text
        assert knowledge.is_not_collective(text) == _by_fnmatch(knowledge.not_collectives, text), text


def test_a_span_of_a_node_is_the_span_its_fields_make():
    import ast
    import pickle

    from cslint.model import Span

    call = ast.parse("x = f(a,\n      b)").body[0].value
    span = Span.of(call)
    made = Span(call.lineno, call.col_offset + 1, call.end_lineno, call.end_col_offset + 1)
    assert span == made and hash(span) == hash(made) and vars(span) == vars(made)
    assert list(vars(span)) == ["line", "column", "end_line", "end_column"]
    assert pickle.dumps(span) == pickle.dumps(made)
    assert span.to_json() == {"line": 1, "column": 5, "end_line": 2, "end_column": 9}
