"""A classmethod called through its class (``Buffers.publish(total, mine)``)
binds its first parameter to the class and the call's first argument to its
second parameter, as a call through an object does (``callrefs.ref_offset``,
``FuncFacts.bound_by_class``).  Before, such a call bound the arguments from
the first parameter on, so each value went to the parameter before its own:
the rank-picked count stored as the total (an FP where the total decides a
collective) and the total as the count (the count's own hazard silent)."""

import textwrap

from cslint.api import check_paths, check_source

BUFFERS = """
    import torch
    import torch.distributed as dist


    class Buffers:
        _total: int = 0
        _mine: int = 0

        @classmethod
        def publish(cls, total: int, mine: int):
            cls._total = total
            cls._mine = mine

        @classmethod
        def total_buffer(cls):
            return torch.empty((cls._total, 8))

        @classmethod
        def own_buffer(cls):
            return torch.empty((cls._mine, 8))

        @classmethod
        def first(cls, a: int, b: int) -> int:
            return a

        @staticmethod
        def first_static(a: int, b: int) -> int:
            return a

        def first_own(self, a: int, b: int) -> int:
            return a
"""


def _findings(body: str) -> list:
    source = textwrap.dedent(BUFFERS) + textwrap.dedent(body)
    return sorted((f.code, f.function) for f in check_source(source, report="per-site").findings)


#: the total is every rank's alike: a collective it decides is entered by every rank
AGREED_TOTAL = """
    def publish(total, counts):
        Buffers.publish(total, counts[dist.get_rank()])


    def step(x):
        if Buffers.total_buffer().shape[0] > 4:
            dist.all_reduce(x)
"""

#: this rank's count decides the collective: the count is the second argument, the class the first parameter
OWN_COUNT = """
    def publish(total, counts):
        Buffers.publish(total, counts[dist.get_rank()])


    def step(x):
        if Buffers.own_buffer().shape[0] > 4:
            dist.all_reduce(x)
"""


def test_a_classmethod_called_through_its_class_binds_the_first_argument_past_the_class():
    assert _findings(AGREED_TOTAL) == []


def test_the_rank_picked_argument_reaches_its_own_parameter():
    assert _findings(OWN_COUNT) == [("CSL101", "step")]


def test_the_rank_picked_first_argument_is_not_taken_for_the_class():
    # (before: the first argument went to ``cls``, so a rank-picked total was silent)
    body = AGREED_TOTAL.replace("Buffers.publish(total, counts[dist.get_rank()])",
                                "Buffers.publish(counts[dist.get_rank()], total)")
    assert _findings(body) == [("CSL101", "step")]


def test_a_classmethod_called_through_cls_or_an_object_binds_alike():
    through_cls = """
        class Owner(Buffers):
            @classmethod
            def refresh(cls, total, counts):
                cls.publish(counts[dist.get_rank()], total)


        def step(x):
            if Buffers.total_buffer().shape[0] > 4:
                dist.all_reduce(x)
    """
    assert _findings(through_cls) == [("CSL101", "step")]
    through_object = """
        def publish(total, counts):
            Buffers().publish(counts[dist.get_rank()], total)


        def step(x):
            if Buffers.total_buffer().shape[0] > 4:
                dist.all_reduce(x)
    """
    assert _findings(through_object) == [("CSL101", "step")]


def test_a_returned_parameter_is_the_argument_bound_to_it():
    returned = """
        def step(x, total, counts):
            if Buffers.first(counts[dist.get_rank()], total) > 4:
                dist.all_reduce(x)
    """
    assert _findings(returned) == [("CSL101", "step")]
    assert _findings(returned.replace("first(counts[dist.get_rank()], total)",
                                      "first(total, counts[dist.get_rank()])")) == []


def test_a_staticmethod_or_a_method_called_through_the_class_binds_from_the_first_parameter():
    static = """
        def step(x, total, counts):
            if Buffers.first_static(counts[dist.get_rank()], total) > 4:
                dist.all_reduce(x)
    """
    assert _findings(static) == [("CSL101", "step")]
    assert _findings(static.replace("first_static(counts[dist.get_rank()], total)",
                                    "first_static(total, counts[dist.get_rank()])")) == []
    # ``Buffers.first_own(obj, ...)``: the object is the first argument, as it is written
    explicit_self = """
        def step(x, obj, total, counts):
            if Buffers.first_own(obj, counts[dist.get_rank()], total) > 4:
                dist.all_reduce(x)
    """
    assert _findings(explicit_self) == [("CSL101", "step")]
    assert _findings(explicit_self.replace("first_own(obj, counts[dist.get_rank()], total)",
                                           "first_own(obj, total, counts[dist.get_rank()])")) == []


def test_a_classmethod_called_through_its_class_from_another_module(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "buffers.py").write_text(textwrap.dedent(BUFFERS))
    (tmp_path / "pkg" / "worker.py").write_text(textwrap.dedent("""
        import torch.distributed as dist

        from pkg.buffers import Buffers


        def step(x, total, counts):
            if Buffers.first(total, counts[dist.get_rank()]) > 4:
                dist.all_reduce(x)


        def step_own(x, total, counts):
            if Buffers.first(counts[dist.get_rank()], total) > 4:
                dist.all_reduce(x)
    """))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    assert sorted((f.code, f.function) for f in findings) == [("CSL101", "step_own")]


BASE_INIT = """
    import torch.distributed as dist


    class Base:
        def __init__(self, n, m):
            self.n = n
            self.m = m


    class Child(Base):
        def __init__(self, total, counts):
            Base.__init__(self, counts[dist.get_rank()], total)

        def step(self, x):
            if self.n > 4:
                dist.all_reduce(x)

        def step_m(self, x):
            if self.m > 4:
                dist.all_reduce(x)


    class Built:
        def __init__(self, total, counts):
            self.inner = Base(counts[dist.get_rank()], total)

        def step(self, x):
            if self.inner.n > 4:
                dist.all_reduce(x)

        def step_m(self, x):
            if self.inner.m > 4:
                dist.all_reduce(x)
"""


def test_an_initialiser_named_through_its_class_takes_the_object_as_its_first_argument():
    # ``Base.__init__(self, a, b)`` binds ``self`` to ``self`` and ``a`` to ``n``; ``Base(a, b)`` builds the object
    # itself, ``a`` going to ``n`` too (before: the explicit call bound ``a`` to ``m``)
    found = sorted((f.code, f.function) for f in check_source(textwrap.dedent(BASE_INIT), report="per-site").findings)
    assert found == [("CSL101", "Built.step"), ("CSL101", "Child.step")]
