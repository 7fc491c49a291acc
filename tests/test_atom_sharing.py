"""Atoms are shared while a file is extracted and cross the worker pipe intact.

Equal atoms made while one file is extracted are one object (a worker
pickles it once, the parent makes it once), and a file's facts come back
from a pickle equal, atom for atom and class for class.
"""

from __future__ import annotations

import pickle
import textwrap
from collections import Counter

from cslint.analysis import atoms, callrefs
from cslint.analysis.facts import extract_file_facts
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

MODULE = textwrap.dedent("""
    import torch.distributed as dist

    class Stepper:
        def step(self, x):
            if self.ready and self.ready:
                dist.all_reduce(x)
            if self.ready:
                dist.barrier()
            self.count = len(self.queue)
            return helper(self.queue) + helper(self.queue)

        def drain(self):
            while self.queue:
                dist.barrier()
                self.queue.pop()

    def helper(q):
        if dist.get_rank() == 0:
            dist.broadcast(q, 0)
        return len(q)
""").encode()


def _atoms_in(value, out: list, seen: set) -> list:
    """Every atom (a tuple whose first item is an atom's tag) reachable from ``value``."""
    if id(value) in seen:
        return out
    seen.add(id(value))
    if isinstance(value, tuple) and value and isinstance(value[0], str) and hasattr(type(value), "_fields") \
            and type(value).__module__ in (atoms.__name__, callrefs.__name__):
        out.append(value)
    if isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            _atoms_in(item, out, seen)
    elif isinstance(value, dict):
        for key, item in value.items():
            _atoms_in(key, out, seen)
            _atoms_in(item, out, seen)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            _atoms_in(getattr(value, name), out, seen)
    return out


def _facts():
    return extract_file_facts("pkg/stepper.py", MODULE, Settings(), KNOWLEDGE, module="pkg.stepper")


def test_equal_atoms_of_one_file_are_one_object():
    found = _atoms_in(_facts(), [], set())
    assert any(atom.tag == "F" for atom in found), "the fixture reads fields"
    first: dict = {}
    for atom in found:
        assert first.setdefault(atom, atom) is atom, f"two objects for {atom}"
    assert len(first) == len(found)


def test_facts_come_back_from_a_pickle_equal_and_of_their_classes():
    facts = _facts()
    before = _atoms_in(facts, [], set())
    back = pickle.loads(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))
    after = _atoms_in(back, [], set())
    assert len(after) == len(before) > 0
    assert Counter(after) == Counter(before)  # (a set unpickled may iterate in another order)
    assert {type(atom) for atom in after} == {type(atom) for atom in before}
    assert [f.variants for f in back.functions] == [f.variants for f in facts.functions]
    assert back == facts
    assert [type(site.span) for f in back.functions for v in f.variants.values() for site in v.sites] \
        == [type(site.span) for f in facts.functions for v in f.variants.values() for site in v.sites]


def test_an_atom_class_is_called_with_one_tuple_of_its_items():
    read = atoms.FieldRead(("F", "pkg:Stepper", "queue"))
    assert read == atoms.field_read("pkg:Stepper", "queue")
    assert (read.class_key, read.attr) == ("pkg:Stepper", "queue")
    assert read._replace(attr="count") == atoms.field_read("pkg:Stepper", "count")


def test_the_worker_pipe_writes_records_with_their_own_reducers_and_keeps_them():
    import pickletools

    from multiprocessing.reduction import ForkingPickler

    from cslint.engine import reducers, workers  # noqa: F401 (workers registers the reducers with the pipe's pickler)

    assert set(atoms.ATOM_CLASSES + callrefs.REF_CLASSES) <= set(reducers.FACT_REDUCERS)
    assert all(ForkingPickler._extra_reducers[cls] is reduce for cls, reduce in reducers.FACT_REDUCERS.items())
    facts = _facts()
    data = bytes(ForkingPickler.dumps(facts))
    before = _atoms_in(facts, [], set())  # each atom object once

    def newobj(pickled: bytes) -> int:
        return sum(1 for op, _, _ in pickletools.genops(pickled) if op.name == "NEWOBJ")

    # every record goes through its own reducer (REDUCE), none through the
    # generic object.__reduce_ex__ path (NEWOBJ), the slower one to write
    plain = pickle.dumps(facts, protocol=pickle.DEFAULT_PROTOCOL)  # as ForkingPickler.dumps
    assert newobj(plain) > len(before) > 0
    assert newobj(data) == 0
    back = pickle.loads(data)
    after = _atoms_in(back, [], set())
    assert Counter(after) == Counter(before)
    assert Counter(type(atom) for atom in after) == Counter(type(atom) for atom in before)
    shared: dict = {}
    assert all(shared.setdefault(atom, atom) is atom for atom in after), "an atom shared before is shared after"
    assert [f.variants for f in back.functions] == [f.variants for f in facts.functions]
    assert back == facts
    assert [type(site.span) for f in back.functions for v in f.variants.values() for site in v.sites] \
        == [type(site.span) for f in facts.functions for v in f.variants.values() for site in v.sites]



def test_the_cache_stores_facts_with_the_same_reducers(tmp_path):
    import pickletools

    from cslint.engine.cache import FactCache, store_pickle

    facts = _facts()
    target = str(tmp_path / "ab" / "facts.pickle")
    store_pickle(target, facts)
    with open(target, "rb") as handle:
        data = handle.read()
    assert not any(op.name == "NEWOBJ" for op, _, _ in pickletools.genops(data))
    back = FactCache.get_path(target)
    assert back == facts
    assert Counter(type(atom) for atom in _atoms_in(back, [], set())) \
        == Counter(type(atom) for atom in _atoms_in(facts, [], set()))


def test_a_call_result_read_through_another_reference_keeps_the_call():
    """``atoms.with_ref``: one part of what a call returns is the same call
    (arguments, place, depth, alike displays) under a part reference, shared
    with the equal atom made by hand; ``passed`` adds keyword arguments."""
    ref = callrefs.func_ref("pkg.stepper", "helper")
    arg = frozenset({atoms.field_read("pkg:Stepper", "queue")})
    made = atoms.call_result(ref, (arg,), (("q", arg),), arg, "pkg/stepper.py", 7, "helper(q)", 2, (0,))
    part = callrefs.part_ref(1, ref)
    read = atoms.with_ref(made, part)
    assert read is atoms.call_result(part, (arg,), (("q", arg),), arg, "pkg/stepper.py", 7, "helper(q)", 2, (0,))
    assert atoms.with_ref(made, ref) is made
    extra = (("none", frozenset()),)
    assert atoms.with_ref(made, part, extra).kwargs == (("q", arg),) + extra
    assert atoms.with_ref(made, part, extra)[:3] == read[:3] and atoms.with_ref(made, part, extra)[4:] == read[4:]
