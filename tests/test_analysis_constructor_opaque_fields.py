"""A field an ``__init__`` sets from one of its parameters is that parameter
(``FuncFacts.field_params``) only where the file shows everything the
constructor runs on its object: where it hands ``self`` to code the file
does not show through its methods' own stores (a free helper, ``setattr``,
``self.__dict__``, a nested function, a method read as a value, a property
setter, also one the class body makes by a call, ``group = property(get,
put)``, a method of a base class another module defines, a method called
through its class, a method taking its object in ``*args``), the field may
hold anything after the call, and is read as unknown
(``fieldparams._fields_own_methods_assign``; reviewB54 fx/ctor, reviewA55).

Each reported shape builds ``Box(tp.device_group, tp.cpu_group)`` on rank 0
while the other ranks barrier over ``tp.device_group``: read as the
parameter, the constructor's barrier is over the same group as the other
arm's and nothing is reported.  The kept shapes are the same constructors
where nothing may assign the field again: both arms barrier over the TP
device group, the same collective on every rank."""

import textwrap

import pytest

from cslint.api import check_source
from tests.package_findings import package_findings, write_package

_CALLER = """

    def f(tp):
        if dist.get_rank() == 0:
            Box(tp.device_group, tp.cpu_group)
        else:
            dist.barrier(group=tp.device_group)
"""

SWAPPED = {
    "a_helper_setattr_on_self": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._swap(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                setattr(self, "group", spare)
    """,
    "a_helper_writing_the_dict": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._swap(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.__dict__["group"] = spare
    """,
    "the_constructor_writing_the_dict": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.__dict__.update(group=spare)
                dist.barrier(group=self.group)
    """,
    "a_property_setter": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.fallback = spare
                dist.barrier(group=self.group)

            @property
            def fallback(self):
                return None

            @fallback.setter
            def fallback(self, spare):
                self.group = spare
    """,
    "a_free_helper_handed_self": """
        import torch.distributed as dist


        def _swap(box, spare):
            box.group = spare


        class Box:
            def __init__(self, group, spare):
                self.group = group
                _swap(self, spare)
                dist.barrier(group=self.group)
    """,
    "a_method_read_as_a_value": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                swap = self._swap
                swap(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.group = spare
    """,
    "a_method_fetched_by_getattr": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                getattr(self, "_swap")(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.group = spare
    """,
    "a_method_called_through_its_class": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                Box._swap(self, spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.group = spare
    """,
    "a_nested_function": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group

                def swap():
                    self.group = spare

                swap()
                dist.barrier(group=self.group)
    """,
    "a_helper_handing_self_on": """
        import torch.distributed as dist


        def _put(box, spare):
            box.group = spare


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._swap(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                _put(self, spare)
    """,
    "a_helper_calling_a_base_method_through_super": """
        import torch.distributed as dist


        class Base:
            def _swap(self, spare):
                self.group = spare


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                self._setup(spare)
                dist.barrier(group=self.group)

            def _setup(self, spare):
                super()._swap(spare)
    """,
    "a_function_the_class_body_binds": """
        import torch.distributed as dist


        def _swap_into(box, spare):
            box.group = spare


        class Box:
            swap = _swap_into

            def __init__(self, group, spare):
                self.group = group
                self.swap(spare)
                dist.barrier(group=self.group)
    """,
    "a_class_nested_in_a_class": """
        import torch.distributed as dist


        class Outer:
            class Box:
                def __init__(self, group, spare):
                    self.group = group
                    self._swap(spare)
                    dist.barrier(group=self.group)

                def _swap(self, spare):
                    self.group = spare


        Box = Outer.Box
    """,
    "a_property_the_class_body_makes_by_a_call": """
        import torch.distributed as dist


        def _put(box, spare):
            box.fallback = spare


        class Box:
            group = property(lambda box: box.fallback, _put)

            def __init__(self, group, spare):
                self.fallback = spare
                self.group = group
                dist.barrier(group=self.group)
    """,
    "a_method_handed_its_object_in_star_args": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.spare = spare
                self._swap()
                dist.barrier(group=self.group)

            def _swap(*args):
                args[0].group = args[0].spare
    """,
    "a_loop_target": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                for self.group in (spare,):
                    pass
                dist.barrier(group=self.group)
    """,
    "a_nested_unpacking_target": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.n, (self.group, self.m) = 1, (spare, 2)
                dist.barrier(group=self.group)
    """,
}

KEPT = {
    "class_body_defaults": """
        import torch.distributed as dist


        class Box:
            group = None
            spare: list = []
            label = f"box"
            key = lambda box: box.spare

            def __init__(self, group, spare):
                self.group = group
                self.spare = spare
                dist.barrier(group=self.group)
    """,
    "a_staticmethod_helper": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.spare = self._wrap(spare)
                dist.barrier(group=self.group)

            @staticmethod
            def _wrap(spare):
                return list(spare)
    """,
    "a_helper_reading_fields": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.spare = spare
                self._check()
                dist.barrier(group=self.group)

            def _check(self):
                if self.spare is None:
                    raise ValueError(self.group)
    """,
    "an_abstract_base": """
        import abc

        import torch.distributed as dist


        class Box(abc.ABC):
            def __init__(self, group, spare):
                self.group = group
                self.spare = spare
                dist.barrier(group=self.group)
    """,
    "a_helper_handing_a_field_on": """
        import torch.distributed as dist


        def _log(value):
            return repr(value)


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self.spare = spare
                self._note()
                dist.barrier(group=self.group)

            def _note(self):
                self.text = _log(self.spare)
    """,
}


def _findings(source: str) -> list:
    text = textwrap.dedent(source) + textwrap.dedent(_CALLER)
    return sorted((f.code, f.line) for f in check_source(text).findings)


@pytest.mark.parametrize("name", sorted(SWAPPED))
def test_a_field_the_constructor_may_assign_unseen_is_not_the_parameter(name):
    assert [code for code, _line in _findings(SWAPPED[name])] == ["CSL101"]


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_field_nothing_may_assign_again_is_the_parameter(name):
    assert _findings(KEPT[name]) == []


_BASE = """
    class Base:
        def _swap(self, spare):
            self.group = spare
"""

_BOX = """
    import torch.distributed as dist

    from pkg.base import Base


    class Box(Base):
        def __init__(self, group, spare):
            self.group = group
            self._swap(spare)
            dist.barrier(group=self.group)
""" + _CALLER


def test_a_method_of_a_base_another_module_defines_makes_the_field_unknown(tmp_path):
    root = write_package(tmp_path, "pkg", {"base.py": _BASE, "box.py": _BOX})
    # (per site: the construction and the other arm's barrier)
    assert sorted((f.code, f.line) for f in package_findings(root)) == [("CSL101", 16), ("CSL101", 18)]

