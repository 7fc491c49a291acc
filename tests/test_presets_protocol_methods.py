"""A preset's protocol methods (``Preset.protocol_methods``) are method
names alone: a library runs a method of that name on an object of any
class derived from one of its own without a call naming it, and the class
may reach the library's base through classes the tree does not hold, so
no base is kept beside the name (issue 13: the bases were dead data)."""

from cslint.presets import merge_presets
from cslint.presets.registry import pack
from cslint.presets.specs import Preset


def test_the_protocol_methods_are_names_merged_over_the_presets():
    knowledge = merge_presets([pack("torch_distributed"), Preset(name="mini", protocol_methods=["on_step"])])
    assert {"forward", "backward", "run", "on_step"} <= knowledge.protocol_methods
    assert all(type(name) is str and name.isidentifier() for name in pack("torch_distributed").protocol_methods)


def test_a_name_no_preset_lists_is_no_protocol_method():
    # the negative: a method merely called ``step`` is run only where a call names it
    assert "step" not in merge_presets([pack("torch_distributed")]).protocol_methods
