"""A method of one of the module's classes, called on an object the function
built of that class (``engine = cls(...)`` in a classmethod, ``engine =
Engine(...)``), is that class's method when its returns are read apart, as
``self.m()`` is (``scope._returns_shape``): ``world, rank =
engine._world_and_rank()`` reads the world size alone in ``world``, so a
world-size exit does not carry the rank element beside it.  The rank element
itself still differs, and so does a receiver of unknown class."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_ENGINE = """
    import torch.distributed as dist


    class Engine:
        def __init__(self, rank):
            self.rank = rank

        def _world_and_rank(self):
            rank = self.rank
            if dist.is_initialized():
                return dist.get_world_size(), rank
            return 1, rank

        def _gather(self, world, rank):
            if {test}:
                return [rank]
            out = [None] * world
            dist.all_gather_object(out, rank)
            return out

        @classmethod
        def init(cls, rank):
            engine = {built}
            world, rank = engine._world_and_rank()
            return engine._gather(world, rank)
"""


def _engine(test="world <= 1", built="cls(rank)"):
    return _codes(_ENGINE.replace("{test}", test).replace("{built}", built))


def test_the_world_element_of_a_method_built_in_a_classmethod_is_alike():
    assert _engine() == []


def test_the_world_element_of_a_method_of_an_object_built_by_name_is_alike():
    assert _engine(built="Engine(rank)") == []


def test_the_rank_element_still_differs():
    assert _engine(test="rank == 0") == [("CSL102", 19)]


def test_a_receiver_of_unknown_class_still_carries_the_whole_result():
    assert _engine(built="make_engine(rank)") == [("CSL102", 19)]
