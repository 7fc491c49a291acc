"""What keeps memory linear in the size of a file.

A 4 MB file took 1.6 GB and a 20 MB file 8 GB.  The causes, each pinned
here without timing anything (``bench/memory.py`` measures peak memory):

* every CFG node had its own copy of the whole environment: nodes x
  variables, quadratic in module-level code (now shared layers,
  ``cslint/analysis/environment.py``);
* post-dominator sets as bit sets: nodes^2 bits (now one immediate
  post-dominator per node);
* nested functions that call themselves are reference cycles, which the
  run's disabled collector kept with every transfer's environments;
* each ``if`` compared its test with every sibling's, unparsing them again.
"""

from __future__ import annotations

import ast
import gc
import random
import textwrap
import tracemalloc
import types

from hypothesis import given, settings
from hypothesis import strategies as st

from cslint.analysis import alternatives, cfg as cfgmod
from cslint.analysis.controldependence import postdominators
from cslint.analysis.environment import LAYER_FROM, LayeredEnv, fork, merge_into
from cslint.analysis.facts import extract_file_facts
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed", "mpi4py", "tensorrt_llm"])


def _module_code(blocks: int) -> bytes:
    """Module-level code defining ``3 * blocks`` names before a collective."""
    parts = ["import torch.distributed as dist\n"]
    for index in range(blocks):
        parts.append(f"import module_{index} as alias_{index}\n\n\ndef helper_{index}(value):\n"
                     f"    return value + {index}\n\n\nsetting_{index} = alias_{index}.read()\n")
    parts.append("if dist.get_rank() == 0:\n    dist.barrier()\n")
    return "".join(parts).encode()


def _extraction_peak_per_byte(data: bytes) -> float:
    """Peak memory extraction allocates beyond the AST, per byte of source."""
    tree = ast.parse(data)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        facts = extract_file_facts("big.py", data, Settings(), KNOWLEDGE, tree=tree, module="big")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert any(site.collective for fn in facts.functions for v in fn.variants.values() for site in v.sites)
    return peak / len(data)


def test_module_level_dataflow_memory_is_linear():
    """Module-level code with 750 and 3,000 names: the memory extraction
    holds at its peak grows with the source, not with its square (copies per
    node took 670 then 2,300 bytes per byte of source; now about 120 and
    100, this dense code having a statement every 37 bytes)."""
    small = _extraction_peak_per_byte(_module_code(250))
    large = _extraction_peak_per_byte(_module_code(1000))
    assert large < 1.3 * small, f"{small:.0f} -> {large:.0f} bytes per byte of source: superlinear"
    assert large < 300, f"extraction peaked at {large:.0f} bytes per byte of source"


def test_extraction_leaves_no_reference_cycles():
    """Whatever extraction allocates is freed by reference counting when it
    ends: the run keeps the cyclic collector off, so a cycle would keep its
    environments (and the AST it refers to) alive."""
    source = textwrap.dedent("""\
        import torch.distributed as dist

        config = {"a": 1, "b": 2}


        def step(t, items):
            rank = dist.get_rank()
            total = 0
            for item in items:
                if item.ready and rank == 3:
                    total += item.size
            config["a"] = total
            if total > 3 and [x for x in items if x]:
                dist.all_reduce(t)
            return total if rank else None
        """).encode()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        facts = extract_file_facts("step.py", source, Settings(), KNOWLEDGE, module="step")
        assert facts.functions
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


def test_complement_partners_unparse_each_test_once(monkeypatch):
    """Sibling ``if`` statements whose tests negate each other are found
    through an index of the block, not by comparing every pair."""
    calls = []
    real = alternatives.negation_text

    def counting(test):
        calls.append(test)
        return real(test)

    monkeypatch.setattr(alternatives, "negation_text", counting)
    ifs = 400
    body = "".join(f"    if flag == {i}:\n        dist.barrier()\n" for i in range(ifs))
    source = f"import torch.distributed as dist\n\n\ndef many(flag):\n{body}".encode()
    extract_file_facts("many.py", source, Settings(), KNOWLEDGE, module="many")
    assert 0 < len(calls) <= 4 * ifs


# -- post-dominators -----------------------------------------------------------------


def _random_cfg(rng: random.Random, size: int) -> cfgmod.CFG:
    nodes = [cfgmod.Node(i, "stmt") for i in range(size)]
    graph = cfgmod.CFG(nodes=nodes, entry=0, exit=size - 1)
    for node in nodes[:-1]:
        targets = {rng.randrange(1, size)} | ({rng.randrange(1, size)} if rng.random() < 0.5 else set())
        for target in sorted(targets):
            node.succs.append((target, None))
            nodes[target].preds.append(node.id)
    return graph


def _brute_force_ipdom(graph: cfgmod.CFG) -> list:
    """By definition: u post-dominates v when every path from v to EXIT
    passes u; the immediate one is the strict post-dominator that every
    other strict post-dominator post-dominates.  Nodes that cannot reach
    EXIT (and EXIT itself) have none."""
    size = len(graph.nodes)

    def reaches_exit_avoiding(start: int, avoid: int) -> bool:
        seen, stack = {start}, [start]
        while stack:
            node = stack.pop()
            if node == graph.exit:
                return True
            for succ, _ in graph.nodes[node].succs:
                if succ != avoid and succ not in seen:
                    seen.add(succ)
                    stack.append(succ)
        return False

    out = [None] * size
    for v in range(size):
        if v == graph.exit or not reaches_exit_avoiding(v, -1):
            continue
        strict = [u for u in range(size) if u != v and not reaches_exit_avoiding(v, u)]
        for u in strict:
            if all(w == u or not reaches_exit_avoiding(u, w) for w in strict):
                out[v] = u
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=2, max_value=14), st.integers(min_value=0, max_value=10**6))
def test_postdominators_match_their_definition(size, seed):
    graph = _random_cfg(random.Random(seed), size)
    assert postdominators(graph) == _brute_force_ipdom(graph)


# -- layered environments ------------------------------------------------------------

KEYS = [f"v{i}" for i in range(12)] + [("key", "config", "a")]
ATOMS = [frozenset({i}) for i in range(5)]

operation = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 7), st.sampled_from(KEYS), st.sampled_from(ATOMS), st.booleans()),
    st.tuples(st.just("merge"), st.integers(0, 7), st.integers(0, 7)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(operation, max_size=60), st.integers(1, LAYER_FROM))
def test_layered_environments_behave_as_plain_dicts(operations, initial):
    """Forks, writes and merges give the same contents, order and equality
    as plain dict copies (layers from the first variable on, to exercise
    them)."""
    base = {f"base{i}": ATOMS[i % len(ATOMS)] for i in range(initial)}
    layered = [LayeredEnv((base,))]
    plain = [dict(base)]
    for op in operations:
        if op[0] == "write":
            _, which, key, atoms, strong = op
            which %= len(layered)
            env, model = fork(layered[which]), dict(plain[which])
            for target in (env, model):
                target[key] = atoms if strong else target.get(key, frozenset()) | atoms
        else:
            _, first, second = op
            first %= len(layered)
            second %= len(layered)
            env, model = fork(layered[first]), dict(plain[first])
            merge_into(env, layered[second])
            for key, value in plain[second].items():
                old = model.get(key)
                model[key] = value if old is None else (old if old is value else old | value)
        layered.append(env)
        plain.append(model)
    for env, model in zip(layered, plain):
        assert list(env.items()) == list(model.items())
        assert dict(env) == model and env == model and model == env and not env != model
        assert len(env) == len(model) and bool(env) == bool(model)
        for key in KEYS + ["base0", "absent"]:
            assert (key in env) == (key in model)
            assert env.get(key) == model.get(key)
    assert layered[-1] == dict(layered[-1])  # equal across representations


def test_a_whole_run_leaves_no_self_calling_closure_or_syntax_tree_in_a_cycle(tmp_path):
    """The same for a whole run, through the parts a single function does not
    reach: the test folders of mode predicates and parameter cases (CFGs
    built per case), the wrapper-learning rounds (a Program per round, walked
    for its table reads) and the prefilter's patterns.  A nested function
    that calls itself is a cycle holding whatever it closes over (a
    function's syntax tree, a round's Program); none may be left for the
    collector, and no syntax node either."""
    from cslint.api import check_paths

    (tmp_path / "comm.py").write_text(textwrap.dedent("""\
        import torch.distributed as dist


        def allreduce_counts(t, group=None):
            dist.all_reduce(t, group=group)
            return t
        """), encoding="utf-8")
    (tmp_path / "loop.py").write_text(textwrap.dedent("""\
        import torch.distributed as dist
        from comm import allreduce_counts


        class Executor:
            def __init__(self, dist_config):
                self.enable_attention_dp = dist_config.enable_attention_dp
                self.queue = []

            def step(self, t, fast=False, drain=True):
                if not fast and (drain or self.enable_attention_dp):
                    if self.queue and dist.get_rank() == 0:
                        return None
                    allreduce_counts(t)
                return t

            def run(self, t):
                while self.queue:
                    self.step(t, fast=True)
                    self.step(t)
        """), encoding="utf-8")
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = check_paths([str(tmp_path)], cache=False, jobs=1)
        assert result.findings  # the run analysed something
        gc.collect()
        # type(), not isinstance(): the garbage may hold dead weak proxies
        leftovers = [obj for obj in gc.garbage
                     if issubclass(type(obj), ast.AST)
                     or (type(obj) is types.FunctionType and obj.__module__.startswith("cslint"))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert not leftovers, sorted({getattr(obj, "__qualname__", type(obj).__name__) for obj in leftovers})
