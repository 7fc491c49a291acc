"""A method whose object is a positional-only parameter (``def m(self, /,
x)``) has ``self`` as its receiver all the same: the per-class readers of a
class's methods take it from ``callrefs.first_positional_param``
(posonlyargs first), never from ``args.args[0]``,
which there is the first parameter past the slash, or nothing.  Before, such
a method's stores into ``self`` were read as stores into that parameter, or
not read: a wrapped module stored by a positional-only ``__init__`` or
handed on by a positional-only method (``wrappers.wrapped_fields``,
``wrapped_params``), a field every store of which is a set
(``orders.class_set_fields``) or a method returning one
(``orders._set_returning``), a queue made on rank 0 alone
(``rootside._rooted_attrs``), fields put back by position from a saved tuple
(``tuplelists._accepted_locals``), what a private method's callers set
(``setfields._handed_fields``) and the fields a method sets first
(``setfields.methods_set_first``), and a size field a method stores a rank
into (``sizereads``: its first positional parameter, posonly too, may be an
object whose size fields it stores).

Each test reruns fixtures of our own -- here, or those of the tests of each
reader -- with every method's ``self`` made positional-only (``_posonly``),
expecting exactly what the slashless spelling gives: the hazards among them
stay reported."""

import re
import textwrap

import pytest

from cslint.api import check_source
from tests import test_analysis_handed_fields as handed_fields
from tests import test_analysis_root_announced as root_announced
from tests import test_analysis_tuple_locals as tuple_locals


def _posonly(source: str) -> str:
    """``source`` with ``self`` positional-only in every ``def``."""
    source = re.sub(r"(def \w+)\(self\)", r"\1(self, /)", source)
    return re.sub(r"(def \w+)\(self, (?!/)", r"\1(self, /, ", source)


def _codes(source: str) -> list:
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings)


_WRAPPED_BY_INIT = """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP


    class Trainer:
        def __init__(self, model):
            self.model = DDP(model)

        def step(self, batch):
            if dist.get_rank() == 0:
                return self.model(batch)
            return None
"""

_WRAPPED_HANDED_ON = """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP


    def run(model, batch):
        if dist.get_rank() == 0:
            return model(batch)
        return None


    class Trainer:
        def __init__(self, model):
            self.model = DDP(model)

        def step(self, batch):
            return run(self.model, batch)
"""

_SET_FIELD = """
    import torch.distributed as dist


    class Syncer:
        def __init__(self, params):
            self.params = set(params)

        def sync(self):
            for p in self.params:
                dist.all_reduce(p)
"""

_SET_RETURNED = """
    import torch.distributed as dist


    class Syncer:
        def __init__(self, params):
            self.params = set(params)

        def _pending(self):
            return self.params

        def sync(self):
            for p in self._pending():
                dist.all_reduce(p)
"""

_RANK_AS_SIZE = """
    import torch.distributed as dist


    class Layer:
        def __init__(self, group):
            self.group = group
            self.attn_tp_size = dist.get_world_size(group)

        def swapped(self):
            self.attn_tp_size = dist.get_rank(self.group)

        def forward(self, x):
            if self.attn_tp_size > 1:
                dist.all_reduce(x, group=self.group)
            return x
"""

#: source -> the one finding it has: a call of the wrapped module on rank 0 (CSL101), a loop over a set issuing a
#: collective per element (CSL103), the rank stored into the size field tested around a collective (CSL101)
REPORTED = {"wrapped_by_init": (_WRAPPED_BY_INIT, ("CSL101", 12)), "wrapped_handed_on": (_WRAPPED_HANDED_ON, ("CSL101", 8)),
            "set_field": (_SET_FIELD, ("CSL103", 11)), "set_returned": (_SET_RETURNED, ("CSL103", 14)),
            "rank_as_size": (_RANK_AS_SIZE, ("CSL101", 15))}


@pytest.mark.parametrize("name", sorted(REPORTED))
@pytest.mark.parametrize("spell", [_posonly, str], ids=["posonly", "plain"])
def test_a_hazard_over_a_field_a_positional_only_method_sets_is_reported(name, spell):
    source, finding = REPORTED[name]
    assert _codes(spell(source)) == [finding]


@pytest.mark.parametrize("test", [getattr(handed_fields, name) for name in sorted(dir(handed_fields))
                                  if name.startswith("test_")], ids=lambda test: test.__name__)
def test_handed_and_set_first_fields_read_alike(test, monkeypatch):
    lines = handed_fields._lines
    monkeypatch.setattr(handed_fields, "_lines", lambda source: lines(_posonly(source)))
    test()


@pytest.mark.parametrize("test", [getattr(tuple_locals, name) for name in sorted(dir(tuple_locals))
                                  if name.startswith("test_")], ids=lambda test: test.__name__)
def test_tuple_positions_read_alike(test, monkeypatch):
    codes = tuple_locals._codes
    monkeypatch.setattr(tuple_locals, "_codes", lambda source, **kw: codes(_posonly(source), **kw))
    test()


@pytest.mark.parametrize("test", [getattr(root_announced, name) for name in sorted(dir(root_announced))
                                  if name.startswith("test_") and "tmp_path" in getattr(root_announced, name).__code__.co_varnames],
                         ids=lambda test: test.__name__)
def test_root_side_fields_read_alike(test, monkeypatch, tmp_path):
    monkeypatch.setattr(root_announced, "_SERVER", _posonly(root_announced._SERVER))
    test(tmp_path)


#: a staticmethod handed ``self`` (``Cls._fill(self, ...)``) stores into the object through its first parameter:
#: the per-class readers read it as a receiver, as they did before positional-only ``self`` was read (reviewB56)
STATICMETHOD_HANDED_SELF = {
    "wraps_the_model": ("""
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP


        class Runner:
            def __init__(self, net):
                Runner._attach(self, net)

            @staticmethod
            def _attach(holder, net):
                holder.net = DDP(net)

            def forward(self, x):
                if dist.get_rank() == 0:
                    return self.net(x)
                return None
    """, "CSL101"),
    "fills_a_set_field": ("""
        import torch.distributed as dist


        class Reducer:
            def __init__(self, tensors):
                Reducer._collect(self, tensors)

            @staticmethod
            def _collect(holder, tensors):
                holder.tensors = set(tensors)

            def reduce(self):
                for t in self.tensors:
                    dist.all_reduce(t)
    """, "CSL103"),
}


@pytest.mark.parametrize("name", sorted(STATICMETHOD_HANDED_SELF))
def test_a_staticmethod_handed_self_stores_into_the_object(name):
    source, code = STATICMETHOD_HANDED_SELF[name]
    assert code in [found for found, _line in _codes(source)]
