"""Canonical orders worked out by a forked helper (cslint/engine/ordering.py)
are the orders the fixpoint works out itself, for every set it asks about,
and a run that uses them finds what a run without them finds.  So are the
readers of each table entry, which the helper works out next."""

import sys
import textwrap
import time

import pytest

from cslint.analysis.divergence import canonical_order
from cslint.analysis.facts import extract_file_facts
from cslint.analysis.hazards import find_hazards
from cslint.analysis.program import Program
from cslint.analysis.stepreads import CONDITION_SETS, STEP_SETS, atom_sets, readers_of
from cslint.analysis.uniformity import UniformityInfo
from cslint.config import Settings
from cslint.engine.ordering import OrdersAhead
from cslint.presets import load_presets

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the helper is forked on Linux only")

KNOWLEDGE = load_presets(["torch_distributed", "mpi4py"])

# Projections by one transform tie on rank (their order comes from digests);
# calls on one line with other arguments tie too.
MODULE = textwrap.dedent("""
    import os
    import torch.distributed as dist
    from pkg.util import pick

    LIMIT = int(os.environ.get("LIMIT", "4")) + len(os.environ.get("EXTRA", ""))

    class Stepper:
        def __init__(self, group):
            self.group = group
            self.rank = dist.get_rank()
            self.local = int(os.environ["LOCAL_RANK"])

        def step(self, batch, items):
            sizes = len(batch) + len(items) + len(self.local_list()) + LIMIT
            if pick(sizes, self.rank) and pick(sizes, self.local) or len(batch) > self.rank:
                dist.all_reduce(batch, group=self.group)
            return pick(len(items), self.rank), pick(len(batch), self.local)

        def local_list(self):
            return [self.rank] * self.local
""")

UTIL = textwrap.dedent("""
    def pick(a, b):
        return a if b else None
""")


def _program() -> Program:
    files = [extract_file_facts("pkg/step.py", MODULE.encode(), Settings(), KNOWLEDGE, module="pkg.step"),
             extract_file_facts("pkg/util.py", UTIL.encode(), Settings(), KNOWLEDGE, module="pkg.util")]
    return Program(files, KNOWLEDGE)


def _all_orders(ahead: OrdersAhead, expected: int) -> None:
    deadline = time.monotonic() + 30
    while ahead.reader is not None and len(ahead.positions) < expected and time.monotonic() < deadline:
        ahead._receive()
        time.sleep(0.01)


def _helper_sets(program: Program) -> list:
    """The sets the helper orders, in its order, while no fixpoint runs:
    (the readers worked out first, their references resolved) a step's
    sets, then the conditions' sets."""
    seen: set = set()
    readers_of(program, list(program.funcs.values()))
    return list(atom_sets(program, (STEP_SETS,), seen)) + list(atom_sets(program, (CONDITION_SETS,), seen))


def test_helper_orders_are_the_canonical_orders():
    program = _program()
    ahead = OrdersAhead.start(program)
    assert ahead is not None
    try:
        sets = _helper_sets(program)  # after the fork: the same objects as the helper's
        assert sets, "the module has no set of several atoms to order"
        assert any(len({(a.tag, getattr(a, "transform", None)) for a in s}) < len(s) for s in sets), \
            "no set whose atoms tie on rank: the digests are not exercised"
        _all_orders(ahead, len(sets))
        assert len(ahead.positions) == len(sets)
        for atoms in sets:
            positions = ahead.get(atoms)
            listed = list(atoms)
            assert tuple(listed[i] for i in positions) == canonical_order(atoms)
        copy = frozenset(list(sets[0]))
        assert copy is not sets[0] and ahead.get(copy) is None  # a set is known by identity only
    finally:
        ahead.close()


def test_a_fixpoint_with_orders_ahead_finds_the_same():
    alone = _program()
    alone.solve()
    expected = [repr(h) for h in find_hazards(UniformityInfo(alone))]
    helped = _program()
    helped.orders_ahead = OrdersAhead.start(helped)
    try:
        _all_orders(helped.orders_ahead, len(_helper_sets(_program())))
        helped.solve()
        found = [repr(h) for h in find_hazards(UniformityInfo(helped))]
    finally:
        helped.orders_ahead.close()
    assert expected, "the module has no hazard to compare"
    assert found == expected
    assert helped._ordered == alone._ordered


def _normal(readers: dict) -> dict:
    return {key: sorted(set(positions)) for key, positions in readers.items()}


def test_helper_readers_are_those_the_fixpoint_works_out():
    program = _program()
    funcs = list(program.funcs.values())
    expected = readers_of(_program(), funcs)
    # every function reads its own parameters; a callee's return is read by its caller
    assert all(position in expected[("param", fn.key)] for position, fn in enumerate(funcs))
    assert any(key[0] == "ret" for key in expected)
    for _ in range(3):  # whichever process walks which functions
        ahead = OrdersAhead.start(program)
        assert ahead is not None
        try:
            assert _normal(ahead.readers(program, funcs)) == _normal(expected)
        finally:
            ahead.close()


def test_what_neither_walk_took_is_walked_by_the_run():
    program = _program()
    funcs = list(program.funcs.values())
    expected = _normal(readers_of(_program(), funcs))
    ahead = OrdersAhead.start(program)
    ahead.close()  # a helper that ended before it sent anything
    assert _normal(ahead.readers(program, funcs)) == expected
    ahead.readers_found = (1, readers_of(program, funcs, (0,)))  # it walked the first function only
    assert _normal(ahead.readers(program, funcs)) == expected


def test_the_fixpoint_asks_the_helper_for_readers_after_its_first_round():
    alone = _program()
    alone.solve()
    expected = [repr(h) for h in find_hazards(UniformityInfo(alone))]
    helped = _program()
    helped.orders_ahead = OrdersAhead.start(helped)
    asked = []
    readers = helped.orders_ahead.readers
    helped.orders_ahead.readers = lambda program, funcs: asked.append(True) or readers(program, funcs)
    try:
        helped.solve()
        found = [repr(h) for h in find_hazards(UniformityInfo(helped))]
    finally:
        helped.orders_ahead.close()
    assert asked == [True], "the fixpoint did not take the helper's readers (or took them twice)"
    assert found == expected


def test_step_sets_start_at_the_function_the_first_round_reached():
    program = _program()
    functions = [fn.qualname for fn in program.funcs.values()]
    everything = list(atom_sets(program, (STEP_SETS,)))
    reached = functions.index("Stepper.local_list")  # the first round is past Stepper.step
    rest = list(atom_sets(program, (STEP_SETS,), reached=lambda: reached))
    assert rest and len(rest) < len(everything), "the sets of the functions left are not a part of the whole"
    assert {id(s) for s in rest} <= {id(s) for s in everything}
