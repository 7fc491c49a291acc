"""The walks of ``results.AtomBuilder`` over nested call results open each
shared atom set once (issue 13).

Atom sets nest as a DAG: one set is read through many projections and
attribute reads (``x.a``, ``len(x)``, ``x.a == y`` each wrap the same set of
``x``), so a set ``k`` levels down is reached along up to ``2 ** k`` paths.
``nesting`` (how deep the results nest), the search of a call's own earlier
result among its arguments (``ok = gate(batch, ok)``) and its replacement
each walked every path; on SGLang's srt/ they made 3.5 M calls of 116 M.
Each set is now measured, searched and rebuilt once; the answers stay what
they were.
"""

import pytest

from cslint.analysis import results
from cslint.analysis.atoms import AttributeRead, Projection, call_result, made
from cslint.analysis.callrefs import func_ref

LEVELS = 30  # 2 ** 30 paths: a walk along each never ends


def _shared_dag(bottom: frozenset, levels: int = LEVELS) -> frozenset:
    """``levels`` sets, each holding a projection and an attribute read of the one below."""
    atoms = bottom
    for level in range(levels):
        atoms = frozenset({made(Projection, ("J", "WC-", atoms)), made(AttributeRead, ("A", atoms, f"f{level}"))})
    return atoms


class _WalkedAgain(Exception):
    pass


def _counted(monkeypatch, name: str, limit: int) -> list:
    """Count the calls of ``results.<name>`` (its recursion included); stop past ``limit``."""
    calls = []
    original = getattr(results, name)

    def counting(*args, **kwargs):
        calls.append(1)
        if len(calls) > limit:
            raise _WalkedAgain(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(results, name, counting)
    return calls


def _walked(work):
    """``work()``, failed short where a walk went along the same sets again (no repr of the DAG)."""
    try:
        return work()
    except _WalkedAgain as again:
        pytest.fail(f"results.{again} walked the same sets again", pytrace=False)


def test_nesting_measures_each_shared_set_once(monkeypatch):
    results.AtomBuilder()  # (a file's extraction starts: nothing measured before)
    inner = call_result(func_ref("m", "deep"), (), (), frozenset(), "m.py", 3, "deep", 3)
    dag = _shared_dag(frozenset({inner}))
    calls = _counted(monkeypatch, "nesting", 4 * LEVELS)
    assert _walked(lambda: results.nesting(dag)) == 3  # the call result at the bottom still decides the depth
    assert len(calls) <= LEVELS + 1
    # a set with no call result under it nests nowhere
    assert results.nesting(_shared_dag(frozenset(), 3)) == 0


def test_a_call_finds_and_replaces_its_own_earlier_result_once_per_shared_set(monkeypatch):
    builder = results.AtomBuilder()
    gate = func_ref("m", "gate")
    other = call_result(func_ref("m", "other"), (), (), frozenset(), "m.py", 8, "other", 1)
    earlier = call_result(gate, (frozenset({other}),), (), frozenset(), "m.py", 7, "gate", 2)
    _counted(monkeypatch, "nesting", 8 * LEVELS)
    searched = _counted(monkeypatch, "_holds_call", 8 * LEVELS)
    rebuilt = _counted(monkeypatch, "_replace_call", 8 * LEVELS)
    (result,) = _walked(lambda: builder.call(gate, (_shared_dag(frozenset({earlier, other}), 2),), (), frozenset(),
                                             "m.py", 7, "gate"))
    assert searched and rebuilt
    # the earlier result of this very call stands for itself (depth 1) beside the other call's result
    itself = call_result(gate, (), (), frozenset(), "m.py", 7, "gate", 1)
    (arg,) = result.args
    bottoms = {atom for top in arg for mid in top.inner for atom in mid.inner}
    assert bottoms == {itself, other}
    searched.clear()
    rebuilt.clear()
    dag = _shared_dag(frozenset({earlier, other}))
    _walked(lambda: builder.call(gate, (dag,), (), frozenset(), "m.py", 7, "gate"))
    assert len(searched) <= 4 * LEVELS and len(rebuilt) <= 4 * LEVELS  # (linear in the levels)


def test_another_call_site_keeps_the_result_it_is_handed(monkeypatch):
    builder = results.AtomBuilder()
    gate = func_ref("m", "gate")
    earlier = call_result(gate, (), (), frozenset(), "m.py", 7, "gate", 1)
    dag = _shared_dag(frozenset({earlier}))
    _counted(monkeypatch, "nesting", 8 * LEVELS)
    searched = _counted(monkeypatch, "_holds_call", 8 * LEVELS)
    (result,) = _walked(lambda: builder.call(gate, (dag,), (), frozenset(), "m.py", 9, "gate"))  # another line
    assert len(searched) <= 4 * LEVELS
    assert len(result.args) == 1 and result.args[0] is dag  # (``is``: a failed == would print the whole DAG)


def test_flatten_reads_the_atoms_flattened_before_without_opening_them(monkeypatch):
    builder = results.AtomBuilder()
    other = call_result(func_ref("m", "other"), (), (), frozenset(), "m.py", 8, "other", 1)
    nested = call_result(func_ref("m", "outer"), (frozenset({other}),), (), frozenset(), "m.py", 9, "outer", 2)
    atoms = frozenset({nested, made(Projection, ("J", "WC-", frozenset({nested})))})
    first = builder.flatten(atoms)
    opened = []
    original = results.AtomBuilder._flatten_atom
    monkeypatch.setattr(results.AtomBuilder, "_flatten_atom",
                        lambda self, *args: opened.append(1) or original(self, *args))
    assert builder.flatten(atoms) == first
    assert not opened
    # an atom met for the first time is flattened as before: the callee's own result beside its fallback's
    fresh = call_result(func_ref("m", "fresh"), (frozenset({other}),), (), frozenset({other}), "m.py", 10, "fresh", 2)
    bare = call_result(func_ref("m", "fresh"), (), (), frozenset(), "m.py", 10, "fresh", 1)
    assert builder.flatten(frozenset({fresh})) == {bare, other} and opened


def test_flatten_hands_back_what_it_made_of_the_same_set_object():
    """A call evaluated again on the dataflow's next pass gets the
    environment's very sets: their flattened form is the one made before,
    not a set built again of their atoms' memo entries; an equal set of its
    own is flattened alike."""
    builder = results.AtomBuilder()
    other = call_result(func_ref("m", "other"), (), (), frozenset(), "m.py", 8, "other", 1)
    nested = call_result(func_ref("m", "outer"), (frozenset({other}),), (), frozenset(), "m.py", 9, "outer", 2)
    atoms = frozenset({nested, made(Projection, ("J", "WC-", frozenset({nested})))})
    first = builder.flatten(atoms)
    assert builder.flatten(atoms) is first
    assert builder.flatten(frozenset(set(atoms))) == first
    # another depth of flattening is its own answer (the inner collective is not kept here)
    assert builder.flatten(atoms, True, 0) is not first and builder.flatten(atoms, True, 0) == first
    # a whole set's answer lives in a memo of its own, apart from its atoms' (no tag marks it there)
    assert (id(atoms), False, 1) in builder._flat_sets
    assert all(atom is not atoms for atom, _flattened in builder._flat.values())


def test_a_call_evaluated_again_searches_only_the_sets_it_has_not_met(monkeypatch):
    """The search for a call's own earlier result among its arguments is
    answered from what the same call site found before: the next pass over
    the statement hands it the same sets.  A new set is searched, and the
    earlier result found in it still stands for itself."""
    builder = results.AtomBuilder()
    gate = func_ref("m", "gate")
    other = call_result(func_ref("m", "other"), (), (), frozenset(), "m.py", 8, "other", 1)
    dag = _shared_dag(frozenset({other}), 6)
    builder.call(gate, (dag,), (), frozenset(), "m.py", 7, "gate")
    searched = _counted(monkeypatch, "_holds_call", 8 * LEVELS)
    builder.call(gate, (dag,), (), frozenset(), "m.py", 7, "gate")
    assert len(searched) <= 2  # the argument and the fallback, each answered at once
    earlier = call_result(gate, (frozenset({other}),), (), frozenset(), "m.py", 7, "gate", 2)
    (result,) = builder.call(gate, (frozenset({earlier, other}),), (), frozenset(), "m.py", 7, "gate")
    itself = call_result(gate, (), (), frozenset(), "m.py", 7, "gate", 1)
    assert result.args == (frozenset({itself, other}),)
