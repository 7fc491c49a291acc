"""A field an ``__init__`` sets from one of its parameters holds what the
constructor call passes there (``FuncFacts.field_params``), unless a
method the constructor calls on ``self`` assigns it again
(``self.group = group; self._swap(spare)`` with ``_swap`` setting
``self.group = spare``; ``fieldparams._fields_own_methods_assign``): then the
field holds what that method put there, and is read as unknown, not as the
parameter (reviewB53 fx/ctor/c2).  Followed through the methods those
methods call on ``self``, and through the methods of bases the file
defines.  A method that assigns other fields leaves the reading as it was."""

import textwrap

import pytest

from cslint.api import check_source

_CALLER = """

    def f(tp):
        if dist.get_rank() == 0:
            Box(tp.device_group, tp.cpu_group)
        else:
            dist.barrier(group=tp.device_group)
"""

SWAPPED = {
    "by_a_helper": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._swap(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.group = spare
    """,
    "by_a_helper_of_a_helper": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._setup(spare)
                dist.barrier(group=self.group)

            def _setup(self, spare):
                self._swap(spare)

            def _swap(self, spare):
                self.group = spare
    """,
    "by_a_method_of_a_base": """
        import torch.distributed as dist


        class Base:
            def _swap(self, spare):
                self.group = spare


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                self._swap(spare)
                dist.barrier(group=self.group)
    """,
}

KEPT = {
    "a_helper_setting_another_field": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._note(spare)
                dist.barrier(group=self.group)

            def _note(self, spare):
                self.spare = spare
    """,
    "no_helper": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.spare = spare
                dist.barrier(group=self.group)
    """,
}


def _findings(source: str) -> list:
    text = textwrap.dedent(source) + textwrap.dedent(_CALLER)
    return sorted((f.code, f.line) for f in check_source(text).findings)


@pytest.mark.parametrize("name", sorted(SWAPPED))
def test_a_field_a_constructors_method_assigns_again_is_not_the_parameter(name):
    assert [code for code, _line in _findings(SWAPPED[name])] == ["CSL101"]


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_field_no_method_assigns_again_is_the_parameter(name):
    # both arms barrier over the TP device group: the same collective on every rank
    assert _findings(KEPT[name]) == []
