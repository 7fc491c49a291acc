"""A local tuple saved and unpacked later hands each name the unpacking binds
(a local or a field) what the display held at its position (issue 14,
tuple-element-taint; ``analysis/tuplelists.py``, ``tuple_locals``).

The shape: a layer's context manager swaps its attention head count, rank and
size for a decode-time split, saving the three in one tuple and putting them
back in its ``finally``.  Before, every field the restore unpacks into took the
whole tuple, so the size field took on the rank saved beside it and the
layer's ``if self.attn_tp_size > 1:`` all-reduce read as rank-local.

What must still be reported: the rank saved at the size's position, a tuple
the rank's test chooses (two bindings, one in a rank-tested arm), a binding a
failure may skip, a binding in a loop read after it, a name also bound
otherwise (a call, a parameter, a ``for`` target, ``+=``), read otherwise (a
field holding the tuple, a nested function, a comprehension, ``global``), or
unpacked into another number of names."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings]


_LAYER = """
    import contextlib
    import torch.distributed as dist


    class Layer:
        def __init__(self, group, heads):
            self.group = group
            self.heads = heads
            self.attn_tp_rank = dist.get_rank(group)
            self.attn_tp_size = dist.get_world_size(group)
            self.local_heads = heads // self.attn_tp_size

        @contextlib.contextmanager
        def swapped(self, size, rank):
            {save}
            self.local_heads = self.heads // size
            self.attn_tp_rank = rank
            self.attn_tp_size = size
            try:
                yield
            finally:
                {restore}

        def forward(self, x):
            if self.attn_tp_size > 1:
                dist.all_reduce(x, group=self.group)
            return x
"""

_SAVE = "orig = (self.local_heads, self.attn_tp_rank, self.attn_tp_size)"
_RESTORE = "(self.local_heads, self.attn_tp_rank, self.attn_tp_size) = orig"


def _layer(save=_SAVE, restore=_RESTORE, extra=""):
    return _LAYER.format(save=save, restore=restore) + extra


def test_fields_put_back_by_position_take_their_own_element():
    assert _codes(_layer()) == []


def test_a_list_target_reads_by_position_too():
    assert _codes(_layer(restore="[self.local_heads, self.attn_tp_rank, self.attn_tp_size] = orig")) == []


def test_the_rank_saved_at_the_size_position_still_differs():
    save = "orig = (self.local_heads, self.attn_tp_size, self.attn_tp_rank)"
    assert _codes(_layer(save=save)) == [("CSL101", 27)]


def test_an_unpacking_of_another_length_keeps_the_whole_tuple():
    save = "orig = (self.local_heads, self.attn_tp_rank, self.attn_tp_size, self.heads)"
    restore = "(self.local_heads, self.attn_tp_rank, self.attn_tp_size, _) = orig"
    assert _codes(_layer(save=save, restore=restore)) == []  # same length: read by position
    restore = "(self.local_heads, self.attn_tp_rank, self.attn_tp_size) = orig[:3]"
    assert _codes(_layer(save=save, restore=restore)) == [("CSL101", 27)]
    restore = "(self.local_heads, self.attn_tp_rank, *self.rest) = orig\n                self.attn_tp_size = orig[2]"
    assert _codes(_layer(save=save, restore=restore)) == [("CSL101", 28)]


def test_a_tuple_bound_otherwise_keeps_the_whole_tuple():
    for other in ("if self.heads:\n                orig = self.snapshot()",
                  "if self.heads:\n                orig = (self.local_heads, self.attn_tp_size, self.attn_tp_rank)",
                  "for orig in self.saved:\n                pass",
                  "orig += (self.attn_tp_rank,)"):
        save = _SAVE + "\n            " + other
        source = _layer(save=save, extra="\n        def snapshot(self):\n            return self.saved\n")
        assert [code for code, _ in _codes(source)] == ["CSL101"], other


def test_a_tuple_a_rank_test_chooses_still_differs():
    save = ("if dist.get_rank() == 0:\n                orig = (self.local_heads, self.attn_tp_rank, self.attn_tp_size)"
            "\n            else:\n                orig = (self.local_heads, self.attn_tp_rank, self.heads)")
    assert [code for code, _ in _codes(_layer(save=save))] == ["CSL101"]


def test_a_tuple_read_otherwise_keeps_the_whole_tuple():
    for other in ("self.kept = orig", "print([x for x in orig])", "hook = lambda: orig",
                  "def peek():\n                nonlocal orig\n                orig = (self.attn_tp_rank,) * 3"):
        save = _SAVE + "\n            " + other
        assert [code for code, _ in _codes(_layer(save=save))] == ["CSL101"], other


def test_a_tuple_handed_through_a_parameter_or_a_field_keeps_the_whole_tuple():
    source = _layer(save="self.saved = " + _SAVE.split(" = ", 1)[1],
                    restore="(self.local_heads, self.attn_tp_rank, self.attn_tp_size) = self.saved")
    assert [code for code, _ in _codes(source)] == ["CSL101"]
    extra = ("\n        def put_back(self, orig):\n"
             "            (self.local_heads, self.attn_tp_rank, self.attn_tp_size) = orig\n")
    source = _layer(restore="self.put_back(orig)", extra=extra)
    assert [code for code, _ in _codes(source)] == ["CSL101"]


def test_a_global_tuple_keeps_the_whole_tuple():
    source = _layer(save="global orig\n            " + _SAVE)
    assert [code for code, _ in _codes(source)] == ["CSL101"]


_LOCALS = """
    import torch.distributed as dist


    def step(x, group):
        rank, size = dist.get_rank(group), dist.get_world_size(group)
        {save}
        {unpack}
        if n > 1:
            dist.all_reduce(x, group=group)
"""


def test_local_names_saved_together_keep_the_whole_tuple():
    # a local element may name a list a helper or an alias changes after the save, which a
    # position would not see (reviewB54): a tuple with one keeps its positions together
    for save in ("saved = (rank, size)", "saved = (size, rank)"):
        source = _LOCALS.format(save=save, unpack="r, n = saved")
        assert _codes(source) == [("CSL101", 10)], save


def test_local_names_keep_a_rank_test_of_the_unpacking():
    source = _LOCALS.format(save="saved = (rank, size)",
                            unpack="if rank == 0:\n            r, n = saved\n        else:\n            n = 1")
    assert [code for code, _ in _codes(source)] == ["CSL101"]
    source = _LOCALS.format(save="saved = (rank, size)\n        for i in range(rank):\n            saved = (i, i)",
                            unpack="r, n = saved")
    assert [code for code, _ in _codes(source)] == ["CSL101"]


_CHOSEN = """
    import torch.distributed as dist


    def step(x, group, risky, steps):
        size = dist.get_world_size(group)
        {body}
        if n > 1:
            dist.all_reduce(x, group=group)
"""


def test_a_binding_the_rank_or_a_failure_decides_keeps_the_whole_tuple():
    for body in ("saved = (0, size)\n        if dist.get_rank(group) == 0:\n            saved = (0, 1)\n"
                 "        r, n = saved",
                 "saved = (0, size)\n        try:\n            k = risky()\n            saved = (k, 1)\n"
                 "        except Exception:\n            pass\n        r, n = saved",
                 "try:\n            risky()\n            saved = (0, 1)\n        except Exception:\n"
                 "            saved = (0, size)\n        r, n = saved",
                 "for i in range(steps):\n            if i == dist.get_rank(group):\n                saved = (i, 1)\n"
                 "        r, n = saved",
                 "if dist.get_rank(group) == 0:\n            saved = (0, 1)\n        r, n = saved"):
        assert [code for code, _ in _codes(_CHOSEN.format(body=body))] == ["CSL101"], body


def test_an_unpacking_past_the_binding_in_its_own_arm_reads_by_position():
    body = ("if size > 2:\n            saved = (self_rank.rank, 4)\n"
            "            try:\n                risky()\n            finally:\n                r, n = saved\n"
            "            if n > 1:\n                dist.all_reduce(x, group=group)\n        n = size")
    source = _CHOSEN.format(body=body).replace("def step(x, group, risky, steps):",
                                                "def step(self_rank, x, group, risky, steps):")
    assert _codes(source.replace("self_rank", "self")) == []
    # the same with a call beside the constant: the whole tuple
    assert [code for code, _ in _codes(source.replace("self_rank.rank", "dist.get_rank(group)")
                                       .replace("self_rank", "self"))] == ["CSL101"]


def test_a_parameter_of_any_kind_bound_to_the_tuple_keeps_the_whole_tuple():
    # tuple_locals hands _accepted_locals every unpacked name, parameters too: astwalk.plain_bindings
    # leaves out each parameter of every kind, so none is read by position (a positional-only one needs
    # a positional-only ``self``, whose method's field writes are not read at all yet)
    for signature in ("self, size, rank, orig", "self, size, rank, *, orig",
                      "self, size, rank, *orig", "self, size, rank, **orig"):
        source = _layer().replace("def swapped(self, size, rank):", f"def swapped({signature}):")
        assert [code for code, _ in _codes(source)] == ["CSL101"], signature
