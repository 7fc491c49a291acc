"""A field rebuilt, on some ranks only, with an object built from that
field's own settings (an adapter that merges its update into a fresh copy of
the layer it wraps, sharded again) holds another object there: a read of the
field's attributes still reads that.  The settings the construction reads of
the field do not make the layer class's fields differ for every other object
of the class, which never held the rebuilt one: the rebuilt object is held by
nothing but the field (issue 14, rebuilds.py)."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard


    class Linear:
        def __init__(self, size, gather=False, bias=True):
            self.size = size
            self.gather = gather
            self.weight = None
            self.bias = [0.0] * size if bias else None


    LAYERS = []


    def make_linear(size, gather=False, bias=True):
        return Linear(size, gather, bias)


    class Adapter:
        def __init__(self, layer, group):
            self.layer = layer
            self.group = group

        def step(self, delta):
            if dist.get_rank() == 0:
                self.merge(delta)

        def merge(self, delta):
            {build}
            rebuilt.weight = delta
            {write}

        def forward(self, x):
            if self.layer.gather:
                dist.all_reduce(x, group=self.group)
            return x


    class Block:
        def __init__(self, group):
            self.proj = Linear(8, gather=True)
            self.group = group

        def forward(self, x):
            if self.proj.bias is not None:
                dist.broadcast(x, src=0, group=self.group)
            return x
"""

BUILD = ("rebuilt = Linear(size=self.layer.size, gather=self.layer.gather,\n"
         "                             bias=getattr(self.layer, \"bias\", None) is not None)")
WRITE = "self.layer = fully_shard(rebuilt, reshard_after_forward=True)"


def _found(build=BUILD, write=WRITE):
    source = textwrap.dedent(SOURCE.format(build=build, write=write))
    lines = source.splitlines()
    found = {(f.line, f.code) for f in check_source(source, report="per-site").findings}
    return {text: (next(i for i, line in enumerate(lines, 1) if text in line), "CSL101") in found
            for text in ("dist.broadcast", "dist.all_reduce")}


def test_a_field_rebuilt_from_its_own_settings_leaves_the_other_objects_of_the_class_alike():
    assert _found() == {"dist.broadcast": False, "dist.all_reduce": True}


def test_rebuilt_without_a_wrapper_too():
    assert _found(write="self.layer = rebuilt") == {"dist.broadcast": False, "dist.all_reduce": True}


def test_a_rebuilt_object_kept_elsewhere_too_still_spreads():
    write = WRITE + "\n            self.spare = rebuilt"
    assert _found(write=write)["dist.broadcast"]


def test_an_object_a_factory_hands_back_still_spreads():
    assert _found(build=BUILD.replace("Linear(", "make_linear("))["dist.broadcast"]


def test_an_object_handed_to_another_call_still_spreads():
    assert _found(write="LAYERS.append(rebuilt)\n            " + WRITE)["dist.broadcast"]
