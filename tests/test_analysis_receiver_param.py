"""The parameter a method's call binds to what it is made through
(``callrefs.receiver_param``), asked alike by the facts of a function, the
job-killing wrapper's methods, the helpers that agree a buffer in place and
those that keep a broadcast's payload on its root: the object, or a
classmethod's class; none for a staticmethod."""

import ast
import textwrap

from cslint.analysis.callrefs import is_classmethod, is_staticmethod, positional_params, receiver_param

CLASS = """
    class Box:
        def plain(self, x): ...

        def renamed(box, x): ...

        def only(self, /, x): ...

        @classmethod
        def make(cls, x): ...

        @staticmethod
        def helper(x): ...

        def spread(*args): ...

        def keywords(*, x): ...

        def bare(): ...
"""


def _methods():
    cls = ast.parse(textwrap.dedent(CLASS)).body[0]
    return {m.name: m for m in cls.body}


def test_the_receiver_is_the_first_positional_parameter_of_a_method():
    methods = _methods()
    assert [receiver_param(methods[n]) for n in ("plain", "renamed", "only")] == ["self", "box", "self"]


def test_a_classmethods_receiver_is_its_class():
    make = _methods()["make"]
    assert receiver_param(make) == "cls" and is_classmethod(make) and not is_staticmethod(make)


def test_a_staticmethod_and_a_method_without_a_positional_parameter_have_none():
    methods = _methods()
    assert is_staticmethod(methods["helper"])
    # ``*args`` takes the object unnamed; a keyword-only parameter is never bound to it
    assert [receiver_param(methods[n]) for n in ("helper", "spread", "keywords", "bare")] == [None] * 4


def test_a_call_through_an_object_binds_its_arguments_past_the_receiver_only():
    methods = _methods()
    assert positional_params(methods["plain"], True) == ["x"]
    assert positional_params(methods["make"], True) == ["x"]  # ``cls`` is bound by the call as ``self`` is
    assert positional_params(methods["only"], True) == ["x"]
    # a staticmethod called through ``self`` binds its first parameter to the first argument
    assert positional_params(methods["helper"], True) == ["x"]
    assert positional_params(methods["plain"], False) == ["self", "x"]  # ``Box.plain(box, 1)``, or a function
