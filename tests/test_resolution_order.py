"""The resolver answers a question the same whatever was asked before it
(cslint/analysis/resolution.py, OpenQuestions): the whole-tree analysis may
ask in any order, and in another process."""

import random
import textwrap

from cslint.analysis.facts import extract_file_facts
from cslint.analysis.resolution import Resolver
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

# What ``Holder.buf`` holds depends on what ``self.buf.clone()`` returns, a
# question about ``Holder.buf`` again: a cycle.  ``refresh`` is defined by
# two classes, so a call that finds no receiver type finds no method.
MODULE = textwrap.dedent("""
    import torch.distributed as dist

    class Buffer:
        def refresh(self):
            dist.all_reduce(self.data)

        def clone(self):
            return Buffer()

    class Other:
        def refresh(self):
            pass

    class Holder:
        def __init__(self):
            self.buf = Buffer()

        def renew(self):
            self.buf = self.buf.clone()

        def direct(self):
            self.buf.refresh()

        def through_local(self):
            current = self.buf
            current.refresh()
""")


def _facts():
    return extract_file_facts("pkg/m.py", MODULE.encode(), Settings(), KNOWLEDGE, module="pkg.m",
                              deep_names={"refresh"})


def _call_refs(facts) -> dict:
    return {fn.qualname: site.ref for fn in facts.functions for v in fn.variants.values() for site in v.sites
            if site.ref is not None and getattr(site.ref, "name", None) == "refresh"}


def _answers(facts, order: list) -> dict:
    resolver = Resolver([facts])
    return {ref: [fn.key for fn in resolver.resolve(ref)] for ref in order}


def test_a_call_on_a_field_that_holds_its_own_clone_resolves_in_any_order():
    facts = _facts()
    refs = _call_refs(facts)
    assert set(refs) == {"Holder.direct", "Holder.through_local"}
    field_first = _answers(facts, [refs["Holder.direct"], refs["Holder.through_local"]])
    local_first = _answers(facts, [refs["Holder.through_local"], refs["Holder.direct"]])
    assert field_first == local_first
    # the local holds what the field holds: a Buffer, whose refresh issues the collective
    assert field_first[refs["Holder.through_local"]] == ["pkg.m:Buffer.refresh"]
    assert field_first[refs["Holder.direct"]] == ["pkg.m:Buffer.refresh"]


def test_every_question_of_a_tree_is_answered_alike_in_shuffled_orders():
    facts = _facts()
    refs = [site.ref for fn in facts.functions for v in fn.variants.values() for site in v.sites
            if site.ref is not None]
    expected = _answers(facts, refs)
    for seed in range(5):
        order = list(refs)
        random.Random(seed).shuffle(order)
        assert _answers(facts, order) == expected
