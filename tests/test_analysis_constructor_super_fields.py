"""``super().k(...)`` in a constructor (or in a method it runs on ``self``)
runs a method of a class past the one whose method makes the call, never
that method's own class nor the class being built: a field the constructor
sets from a parameter stays that parameter where the bases the file defines
assign it nowhere (``fieldparams._fields_own_methods_assign``).  Before,
``super().__init__()`` was followed as ``self.__init__()``: the
constructor itself, whose stores made every field it sets read as assigned
again, so a ``Box(tp.device_group, ...)`` on rank 0 read as a barrier over
some other group than the other arm's.

``super().__init__()`` past every class of the file is ``object``'s (the
file defines the whole family: a base another module defines, or any but
``object``/``abc.ABC``, keeps every field unknown).  The shapes that stay
reported: a base's method (its ``__init__``, one it calls on ``self``,
one the next class of a diamond runs) assigning the field, a base handing
``self`` on, ``super().__setattr__``, an explicit ``super(Cls, self)``,
a base another module defines."""

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

KEPT = {
    "a_base_setting_other_fields": """
        import torch.distributed as dist


        class Base:
            def __init__(self, spare):
                self.spare = spare
                self.count = 0


        class Box(Base):
            def __init__(self, group, spare):
                super().__init__(spare)
                self.group = group
                dist.barrier(group=self.group)
    """,
    "no_base_of_the_file": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                super().__init__()
                self.group = group
                self.spare = spare
                dist.barrier(group=self.group)
    """,
    "two_bases_up_through_super_in_each": """
        import abc

        import torch.distributed as dist


        class Root(abc.ABC):
            def __init__(self):
                super().__init__()
                self.count = 0


        class Base(Root):
            def __init__(self, spare):
                super().__init__()
                self.spare = spare
                self._reset()

            def _reset(self):
                self.count = 1


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
}

SWAPPED = {
    "the_base_constructor_sets_the_field": """
        import torch.distributed as dist


        class Base:
            def __init__(self, spare):
                self.group = spare


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
    "the_base_constructor_calls_a_method_setting_the_field": """
        import torch.distributed as dist


        class Base:
            def __init__(self, spare):
                self._swap(spare)

            def _swap(self, spare):
                self.spare = spare


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.group = spare
    """,
    "the_next_class_of_a_diamond_sets_the_field": """
        import torch.distributed as dist


        class Mixin:
            def __init__(self, spare):
                self.group = spare


        class Base:
            def __init__(self, spare):
                super().__init__(spare)


        class Box(Base, Mixin):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
    "the_base_constructor_hands_self_on": """
        import torch.distributed as dist


        def _swap(box, spare):
            box.group = spare


        class Base:
            def __init__(self, spare):
                _swap(self, spare)


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
    "super_setattr": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                super().__setattr__("group", spare)
                dist.barrier(group=self.group)
    """,
    "super_naming_a_class": """
        import torch.distributed as dist


        class Mixin:
            def __init__(self, spare):
                self.group = spare


        class Base:
            def __init__(self, spare):
                super(Base, self).__init__(spare)


        class Box(Base, Mixin):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
    "a_base_the_file_builds_by_a_call": """
        import torch.distributed as dist


        def _base():
            class Base:
                def __init__(self, spare):
                    self.group = spare
            return Base


        class Box(_base()):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
    "a_subscripted_base": """
        import torch.distributed as dist

        from pkg.bases import Holder


        class Box(Holder[int]):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
    """,
    "a_base_method_reached_through_super_in_a_helper": """
        import torch.distributed as dist


        class Base:
            def _setup(self, spare):
                self.group = spare


        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                self._setup(spare)
                dist.barrier(group=self.group)

            def _setup(self, spare):
                super()._setup(spare)
    """,
}


#: a base whose ``__init__`` (or what constructing runs) the file shows as no ``def`` of its body: reading
#: ``super().__init__()`` as ``object``'s would make ``self.group`` the parameter where the base sets it to ``spare``
#: (``fieldparams._family_runs_unseen`` and the class-body bindings check)
_SUPER_BOX = """

        class Box(Base):
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)
"""

UNSEEN_CONSTRUCTION = {
    "a_dataclass_base": """
        import dataclasses

        import torch.distributed as dist


        @dataclasses.dataclass
        class Base:
            group: object = None
    """ + _SUPER_BOX,
    "init_bound_in_the_base_body": """
        import torch.distributed as dist


        def _install(obj, spare):
            obj.group = spare


        class Base:
            __init__ = _install
    """ + _SUPER_BOX,
    "init_bound_to_a_lambda_in_the_base_body": """
        import torch.distributed as dist


        class Base:
            __init__ = lambda self, spare: setattr(self, "group", spare)
    """ + _SUPER_BOX,
    "init_patched_onto_the_base_at_module_level": """
        import torch.distributed as dist


        class Base:
            pass


        def _install(obj, spare):
            obj.group = spare


        Base.__init__ = _install
    """ + _SUPER_BOX,
    "init_patched_by_setattr_in_a_function": """
        import torch.distributed as dist


        class Base:
            pass


        def _install(obj, spare):
            obj.group = spare


        def patch():
            setattr(Base, "__init__", _install)
    """ + _SUPER_BOX,
    "init_patched_through_an_alias": """
        import torch.distributed as dist


        class Base:
            pass


        def _install(obj, spare):
            obj.group = spare


        Alias = Base
        Alias.__init__ = _install
    """ + _SUPER_BOX,
    "a_class_decorator_on_the_base": """
        import torch.distributed as dist


        def with_init(cls):
            def __init__(self, spare):
                self.group = spare
            cls.__init__ = __init__
            return cls


        @with_init
        class Base:
            pass
    """ + _SUPER_BOX,
    "a_base_with_new_handing_back_another_object": """
        import torch.distributed as dist


        class Spare:
            group = None


        class Base:
            def __new__(cls, *args):
                return object.__new__(cls)
    """ + _SUPER_BOX,
    "a_metaclass_on_the_base": """
        import torch.distributed as dist


        class Meta(type):
            pass


        class Base(metaclass=Meta):
            pass
    """ + _SUPER_BOX,
}


@pytest.mark.parametrize("name", sorted(UNSEEN_CONSTRUCTION))
def test_a_base_constructing_through_no_def_keeps_the_field_unknown(name):
    assert [code for code, _line in _findings(UNSEEN_CONSTRUCTION[name])] == ["CSL101"]


def test_a_decorated_class_without_super_keeps_the_field_unknown():
    # the decorator may hand back a subclass whose __init__ sets the field again
    source = """
        import torch.distributed as dist


        def reset(cls):
            class Sub(cls):
                def __init__(self, group, spare):
                    super().__init__(group, spare)
                    self.group = spare
            return Sub


        @reset
        class Box:
            def __init__(self, group, spare):
                self.group = group
                dist.barrier(group=self.group)
    """
    assert [code for code, _line in _findings(source)] == ["CSL101"]


def test_an_abc_metaclass_keeps_the_parameter():
    source = """
        import abc

        import torch.distributed as dist


        class Box(metaclass=abc.ABCMeta):
            def __init__(self, group, spare):
                self.group = group
                super().__init__()
                dist.barrier(group=self.group)
    """
    assert _findings(source) == []


_PATCHED_BY_A_CALL = """
        import torch.distributed as dist


        class Base:
            def __init__(self, spare):
                self.spare = spare


        def _install(obj, spare):
            obj.group = spare


        def install(cls):
            cls.__init__ = _install


        install(Base)
""" + _SUPER_BOX


def test_super_into_a_base_a_call_may_patch_keeps_the_field_unknown():
    assert [code for code, _line in _findings(_PATCHED_BY_A_CALL)] == ["CSL101"]


def _findings(source: str) -> list:
    text = textwrap.dedent(source) + textwrap.dedent(_CALLER)
    return sorted((f.code, f.line) for f in check_source(text).findings)


#: a ``super()`` reaching a base the file defines keeps the fields unknown (reviewB56: a call handing the base on,
#: ``Base = dataclass(Base)``, a loop alias or another module may replace that base's method): only ``super()`` past
#: every class of the file is read
_KEPT_ONLY_PAST_THE_FILE = {"a_base_setting_other_fields", "two_bases_up_through_super_in_each"}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(
        strict=True, reason="super() into a base of the file keeps the fields unknown: what runs there may be "
                            "replaced outside the class body")) if name in _KEPT_ONLY_PAST_THE_FILE else name
    for name in sorted(KEPT)])
def test_super_past_bases_that_leave_the_field_keeps_the_parameter(name):
    # both arms barrier over the TP device group: the same collective on every rank
    assert _findings(KEPT[name]) == []


@pytest.mark.parametrize("name", sorted(SWAPPED))
def test_super_reaching_a_store_of_the_field_makes_it_unknown(name):
    assert [code for code, _line in _findings(SWAPPED[name])] == ["CSL101"]


_BASE = """
    class Base:
        def __init__(self, spare):
            self.group = spare
"""

_BOX = """
    import torch.distributed as dist

    from pkg.base import Base


    class Box(Base):
        def __init__(self, group, spare):
            self.group = group
            super().__init__(spare)
            dist.barrier(group=self.group)
""" + _CALLER


def test_super_into_a_base_another_module_defines_keeps_the_field_unknown(tmp_path):
    root = write_package(tmp_path, "pkg", {"base.py": _BASE, "box.py": _BOX})
    assert sorted((f.code, f.line) for f in package_findings(root)) == [("CSL101", 16), ("CSL101", 18)]


# An object of a subclass runs the subclass's overrides, and a ``super()``
# chain through a class another base of the subclass brings in: the fields
# read off the constructor's file hold only for its own class
# (constructiongroups.held_field_params), so a class the tree subclasses
# keeps them unknown.
SUBCLASSED = {
    "a_subclass_overriding_a_method_the_constructor_calls": """
        import torch.distributed as dist


        class Box:
            def __init__(self, group, spare):
                self.group = group
                self._swap(spare)
                dist.barrier(group=self.group)

            def _swap(self, spare):
                self.spare = spare


        class Sub(Box):
            def _swap(self, spare):
                self.group = spare
    """,
    "a_subclass_whose_other_base_super_reaches": """
        import torch.distributed as dist


        class Mixin:
            def __init__(self, spare):
                self.group = spare


        class Box:
            def __init__(self, group, spare):
                self.group = group
                super().__init__(spare)
                dist.barrier(group=self.group)


        class Sub(Box, Mixin):
            pass
    """,
}


@pytest.mark.parametrize("name", sorted(SUBCLASSED))
def test_a_subclass_built_keeps_the_field_unknown(name):
    text = textwrap.dedent(SUBCLASSED[name]) + textwrap.dedent(_CALLER).replace("Box(", "Sub(")
    assert [f.code for f in check_source(text).findings] == ["CSL101"]


PARTS = """
    import torch.distributed as dist


    class Part:
        def __init__(self, tensor, group):
            super().__init__()
            self.group = group
            self.data = tensor

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # VALID: every Part is built over the TP group
            return self.data


    class World:
        def __init__(self, tensor, group):
            self.group = None


    class Mixed:
        def __init__(self, tensor, group):
            super().__init__(tensor, group)
            self.group = group
            self.data = tensor

        def full(self, parallel):
            if parallel.pp_rank == 0:
                dist.all_reduce(self.data, group=self.group)          # INVALID: a Both runs World's constructor last
            return self.data


    class Both(Mixed, World):
        pass
"""

ENGINE = """
    import torch.distributed as dist

    from parts import Both, Mixed, Part


    class Engine:
        def __init__(self, parallel):
            self.parallel = parallel
            dist.barrier()

        def send(self, t):
            return Part(t, group=self.parallel.tp_group.cpu_group).full(self.parallel)

        def both(self, t, u):
            a = Mixed(t, group=self.parallel.tp_group.cpu_group)
            b = Both(u, group=self.parallel.tp_group.cpu_group)
            return a.full(self.parallel), b.full(self.parallel)
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_every_construction_over_one_group_through_super(tmp_path):
    parts = textwrap.dedent(PARTS)
    (tmp_path / "parts.py").write_text(parts)
    (tmp_path / "engine.py").write_text(textwrap.dedent(ENGINE))
    flagged = sorted({f.line for f in package_findings(tmp_path) if f.path.endswith("parts.py")})
    assert flagged == _marked(parts, "INVALID")
    assert _marked(parts, "VALID")
