"""A field rebuilt, on some ranks only, with an object of a class that never
binds an attribute (an adapter that merges its update into a plain
replicated copy of the sharded layer it wraps): where the field holds that
object, a read of the attribute raises; the ranks that read it hold the
objects the field's other writes put there, so the read does not read the
rebuild's test through the field (issue 14, lackednames.py)."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch.distributed as dist
    from torch import nn
    from torch.distributed.fsdp import fully_shard


    class Sharded(nn.Module):
        def __init__(self, size, group, gather=False):
            super().__init__()
            self.size = size
            self.group = group
            self.gather = gather


    class Replicated({base}):
        {body}
        def __init__(self, size):
            super().__init__()
            self.size = size
            {own}


    def wrap_it(module):
        return module


    class Adapter:
        def __init__(self, layer, group):
            self.layer = layer
            self.group = group

        def step(self, delta):
            if dist.get_rank() == 0:
                self.merge(delta)

        def merge(self, delta):
            full = Replicated(size=self.layer.size)
            full.weight = delta
            {write}

        def forward(self, x):
            if self.layer.gather:
                dist.all_reduce(x, group=self.group)
            return x
    {elsewhere}
"""


def _flagged(base="nn.Module", own="self.rows = size", write="self.layer = fully_shard(full)", elsewhere="",
             body="pass"):
    source = textwrap.dedent(SOURCE.format(base=base, own=own, write=write, elsewhere=elsewhere, body=body))
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "dist.all_reduce" in text)
    return any(f.line == line for f in check_source(source, report="per-site").findings)


def test_an_attribute_the_rebuilt_object_never_has_reads_the_other_writes():
    assert not _flagged()


def test_rebuilt_without_a_wrapper_too():
    assert not _flagged(write="self.layer = full")


def test_a_rebuilt_class_that_binds_the_attribute_still_spreads():
    assert _flagged(own="self.gather = False")


def test_a_name_bound_by_a_computed_setattr_still_spreads():
    assert _flagged(own="setattr(self, 'ga' + 'ther', False)")


def test_a_registered_name_still_spreads():
    assert _flagged(own="self.register_buffer('gather', None)")


def test_a_wrapper_no_preset_says_hands_the_module_back_still_spreads():
    assert _flagged(write="self.layer = wrap_it(full)")


def test_a_library_base_no_preset_describes_still_spreads():
    assert _flagged(base="SomeLibraryBase")


def test_the_attribute_stored_on_another_object_still_spreads():
    elsewhere = "\n    def tune(layer):\n        layer.gather = True\n"
    assert _flagged(elsewhere=elsewhere)


def test_the_attribute_stored_through_the_same_field_still_spreads():
    elsewhere = "\n    def tune(adapter):\n        adapter.layer.gather = True\n"
    assert _flagged(elsewhere=elsewhere)


def test_the_attribute_stored_through_a_field_of_another_name_is_another_object():
    elsewhere = "\n    def tune(block):\n        block.proj.gather = True\n"
    assert not _flagged(elsewhere=elsewhere)


def test_a_name_a_class_body_only_reads_in_a_target_is_not_bound():
    # ``KINDS[gather] = ...`` stores into a module table under the key ``gather`` holds: it binds no ``gather``
    assert not _flagged(body="KINDS[gather] = 'replicated'")


def test_a_name_a_class_body_binds_still_spreads():
    assert _flagged(body="gather = False")
