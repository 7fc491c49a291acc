"""The ledger protocol of cslint.runtime (`cslint.runtime.ledger`): which calls are checked, stamps, and the
C implementation against the pure-Python reference."""

from __future__ import annotations

import importlib.util

import pytest

from cslint.runtime import ledger as ledger_mod
from cslint.runtime.fingerprint import CallPathCache
from cslint.runtime.ledger import (
    LAZY,
    RECEIVES,
    SENDS,
    SYMMETRIC,
    PyLedger,
    is_stamped,
    make_stamp,
    mix,
)

HAVE_C = importlib.util.find_spec("cslint.runtime._ledger") is not None
IMPLEMENTATIONS = [PyLedger]
if HAVE_C:
    from cslint.runtime._ledger import Ledger as CLedger

    IMPLEMENTATIONS.append(CLedger)
IDS = [cls.implementation for cls in IMPLEMENTATIONS]


class Mismatch(Exception):
    pass


def _raise_mismatch(ledger, received, checked, symmetric):
    raise Mismatch((checked, symmetric, list(received)))


def make(cls, *, carry_every=16, check_every=64, history=64, skip=None, on_mismatch=_raise_mismatch):
    paths = CallPathCache(depth=2)
    return cls("tp", lambda frame, op: paths.resolve(frame, op, "tp"), skip or paths.skipped, on_mismatch,
               depth=2, history=history, carry_every=carry_every, check_every=check_every)


def site_a(ledger, role=SYMMETRIC):
    return ledger.enter("allgather", 1, role)


def site_b(ledger, role=SYMMETRIC):
    return ledger.enter("allgather", 2, role)


def site_c(ledger, role=SYMMETRIC):
    return ledger.enter("allgather", 3, role)


def agree(ledger, checked):
    """What a symmetric collective in which every rank agreed does after the call."""
    if checked:
        ledger.reset()
    ledger.leave()


def run(ledger, sites, role=SYMMETRIC):
    """Call `sites` (functions, or (function, role) pairs) in order, always from this line (the caller
    is part of the call path); checked symmetric and lazy calls pass."""
    decisions = []
    for site in sites:
        site, this_role = site if isinstance(site, tuple) else (site, role)
        checked = site(ledger, this_role)
        decisions.append(checked)
        if checked and this_role in (SYMMETRIC, LAZY):
            ledger.reset()
        ledger.leave()
    return decisions


def test_the_c_ledger_is_built_and_selected():
    """`make venv` builds the extension; `Ledger` is the C one unless CSLINT_RUNTIME_PURE asks otherwise."""
    assert HAVE_C, "cslint.runtime._ledger was not built (pip install -e . compiles it)"
    assert ledger_mod.Ledger is CLedger or ledger_mod.Ledger is PyLedger


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_a_repeating_loop_is_checked_in_its_first_round_and_then_sampled(cls):
    ledger = make(cls, carry_every=16)
    decisions = run(ledger, [site_a, site_b, site_c] * 12)
    # first call, then each new successor (a->b, b->c, c->a) once; then every 16th call of the window
    assert decisions[:4] == [True] * 4
    later = [i for i, d in enumerate(decisions) if d and i >= 4]
    assert later == [4 + 15, 4 + 15 + 16], decisions


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_leaving_the_remembered_path_is_checked(cls):
    ledger = make(cls)
    assert run(ledger, [site_a, site_b, site_c] * 3)[4:] == [False] * 5
    # skip b once: a -> c is not what followed a last time; back on the loop, a -> b is new again
    assert run(ledger, [site_a, site_c, site_a, site_b, site_c]) == [False, True, False, True, False]


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_lazy_collectives_wait_for_the_window_and_rooted_ones_owe_a_check(cls):
    ledger = make(cls, check_every=4)
    # first call of the group, a -> a the first time, then the fourth of each window
    assert run(ledger, [site_a] * 10, LAZY) == [True, True, False, False, False, True, False, False, False, True]
    # a new successor; b -> b new too; a rooted call does not pay what it owes
    assert run(ledger, [(site_b, SENDS), (site_b, SENDS), (site_b, RECEIVES)]) == [True, True, False]
    assert ledger.owed
    # the next lazy call of the group pays it, though b -> b is the known successor and the window is short
    assert run(ledger, [(site_b, LAZY)]) == [True]
    assert not ledger.owed


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_unwrap_checks_stamps_both_ways(cls):
    ledger = make(cls)
    checked = site_a(ledger)
    stamp = ledger.stamp()
    assert is_stamped((stamp, 0)) and len(stamp) == 10
    assert ledger.unwrap([(stamp, "x"), (stamp, "y")], checked, True) == ["x", "y"]
    assert ledger.window == 0  # a symmetric check that passed starts a new window
    ledger.leave()
    # an unchecked call must not receive stamps, a checked one must receive the same stamp from everyone
    site_a(ledger)
    with pytest.raises(Mismatch):
        ledger.unwrap([1, (ledger.stamp(), 2)], False, True)
    ledger.leave()
    site_b(ledger)
    with pytest.raises(Mismatch):
        ledger.unwrap([(ledger.stamp(), 1), 2], True, True)
    with pytest.raises(Mismatch):
        ledger.unwrap([(ledger.stamp(), 1), (make_stamp(ledger.digest ^ 1), 2)], True, True)
    # payloads that merely look alike are not stamps
    assert ledger.unwrap([(b"\xc5\x1b" + b"0" * 7, 1), ("s", 2)], False, True) == [(b"\xc5\x1b" + b"0" * 7, 1),
                                                                                 ("s", 2)]
    ledger.leave()


def test_mix_is_the_documented_64_bit_fold():
    assert mix(0, 0) == 0x9E3779B97F4A7C15
    h = mix(mix(0, 12345), 7)
    assert 0 <= h < 1 << 64 and h != mix(mix(0, 12345), 8)


@pytest.mark.skipif(not HAVE_C, reason="the C ledger is not built")
def test_the_c_ledger_decides_and_stamps_exactly_like_the_reference():
    """A job may mix ranks with and without the extension: the stamps must be identical."""

    def drive(ledger):
        out = []
        pattern = [site_a, site_b, site_c, site_a, site_c, site_b] * 6 + [site_a] * 20
        roles = [SYMMETRIC, LAZY, SENDS, RECEIVES]
        for i, site in enumerate(pattern):
            checked = site(ledger, roles[i % 4])
            out.append((checked, ledger.stamp(), ledger.window, ledger.owed))
            if checked and roles[i % 4] in (SYMMETRIC, LAZY):
                ledger.reset()
            ledger.leave()
        records = [(r[0].site, r[1], r[2], r[4]) for r in ledger.records()]
        return out, records, ledger.seq

    py, c = drive(make(PyLedger, carry_every=5, check_every=7, history=16)), \
        drive(make(CLedger, carry_every=5, check_every=7, history=16))
    assert py == c
    assert len(py[1]) == 16 and py[2] == 56


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_runtime_frames_are_looked_through(cls):
    ledger = make(cls, skip=lambda code: code.co_name == "wrapper")

    def wrapper():
        return ledger.enter("allgather", None, SYMMETRIC)

    def caller():
        wrapper()  # the call site is here, not inside wrapper
        ledger.leave()

    caller()
    record = ledger.records()[-1]
    assert record[0].function.endswith("caller")
    assert ledger.current() is None


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_history_keeps_the_last_records_with_payload_types(cls):
    ledger = make(cls, history=4)
    for i in range(10):
        ledger.enter("allgather", [i] if i % 2 else (i,), SYMMETRIC)
        if i < 9:
            ledger.leave()
    records = ledger.records()
    assert [r[1] for r in records] == [6, 7, 8, 9]
    assert [r[2] for r in records] == [tuple, list, tuple, list]
    assert ledger.current()[1] == 9  # still in flight
    assert ledger.history_limit == 4


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_fast_allgather_passes_payloads_and_arguments_through(cls):
    ledger = make(cls, carry_every=3)
    seen = []

    def inner(obj, *args, **kwargs):
        seen.append((obj, args, kwargs))
        return [obj, obj]

    allgather = ledger.allgather(inner, "allgather")
    assert allgather.__name__ == "allgather"
    outs = [allgather(i, "extra", key=i) for i in range(8)]
    assert outs == [[i, i] for i in range(8)]
    stamped = [is_stamped(obj) for obj, _, _ in seen]
    # the first call, the first repeat (a new successor), then every 3rd call of the window
    assert stamped == [True, True, False, False, True, False, False, True]
    assert all(args == ("extra",) and kwargs == {"key": i} for i, (_, args, kwargs) in enumerate(seen))
    assert ledger.current() is None and ledger.seq == 8


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_fast_allgather_takes_the_object_by_keyword(cls):
    ledger = make(cls)
    allgather = ledger.allgather(lambda sendobj: [sendobj, sendobj], "allgather")
    assert [allgather(sendobj=i) for i in range(20)] == [[i, i] for i in range(20)]
    with pytest.raises(TypeError, match="takes the object to gather"):
        allgather()


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_fast_allgather_reports_an_unexpected_stamp_and_propagates_errors(cls):
    ledger = make(cls)
    calls = iter([lambda obj: [obj, obj]] * 2 + [lambda obj: [obj, (make_stamp(5), "peer")], lambda obj: 1 / 0])
    allgather = ledger.allgather(lambda obj: next(calls)(obj), "allgather")
    results = []
    with pytest.raises(Mismatch) as info:
        for _ in range(3):
            # the third call is unchecked here, but a peer checked: it is off the path this rank is on
            results.append(allgather("x"))
    assert results == [["x", "x"]] * 2
    checked, symmetric, received = info.value.args[0]
    assert (checked, symmetric) == (False, True) and received[1] == (make_stamp(5), "peer")
    with pytest.raises(ZeroDivisionError):
        allgather("x")
    assert ledger.current() is None  # the failed collective is not left in flight


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=IDS)
def test_unstamped_collectives_exchange_stamps_only_when_checked(cls):
    ledger = make(cls, check_every=4)
    exchanged = []

    def exchange(which):
        assert which is ledger and ledger.current() is not None  # inside the collective
        exchanged.append(ledger.seq - 1)
        ledger.reset()

    allreduce = ledger.unstamped(lambda value, op=None: value * 2, "allreduce", exchange)
    assert allreduce.__name__ == "allreduce"
    assert [allreduce(i, op="sum") for i in range(10)] == [2 * i for i in range(10)]
    # the first call, the first repeat (a new successor), then the fourth call of each window
    assert exchanged == [0, 1, 5, 9]
    assert ledger.current() is None
    failing = ledger.unstamped(lambda value: 1 / 0, "allreduce", None)
    with pytest.raises(ZeroDivisionError):
        failing(1)
    assert ledger.current() is None and [r[4] for r in ledger.records()][-1] == LAZY
