"""How the facts are pickled: reducers looked up by type (a pickler's
``dispatch_table``, consulted in C before ``__reduce_ex__``).

The generic path (``object.__reduce_ex__``) looks up ``__getnewargs_ex__``,
``__getnewargs__``, ``__getstate__`` and ``__slotnames__`` on every object;
these reducers hand the pickler what that path ends with, so what is
unpickled is equal, class for class.  The pipe of the workers
(:mod:`cslint.engine.workers`) and the cache's files
(:func:`cslint.engine.cache.store_pickle`) both use them.  vLLM's facts (389
extractions, one pickle each, one process): pickling 378-379 ms ->
309-313 ms, unpickling unchanged (300-309 ms), 17.0 -> 17.7 MB
(docs/internals.md).
"""

from __future__ import annotations

import copyreg

from ..analysis.atoms import ATOM_CLASSES
from ..analysis.callfacts import CallFacts
from ..analysis.callrefs import REF_CLASSES
from ..analysis.records import (ClassFacts, Collective, Cond, FieldType, FieldWrite, FileFacts, FuncFacts,
                                IssuingRoute, PendingFuncFacts, Site, Variant)
from ..model import Span

_tuple_new = tuple.__new__
_object_new = object.__new__


def _reduce_tuple(record) -> tuple:
    """An atom or a fact NamedTuple: ``tuple.__new__`` of its class and
    items, as the atoms are made (C on both sides; a NamedTuple's own
    ``__new__`` and ``__getnewargs__`` are Python functions)."""
    return _tuple_new, (type(record), tuple(record))


def _reduce_record(record) -> tuple:
    """A fact dataclass: its class's bare object and its ``__dict__``, as
    the generic path writes it."""
    return _object_new, (type(record),), record.__dict__


#: class -> reducer, for every record class of the facts
FACT_REDUCERS: dict = {
    **{cls: _reduce_tuple for cls in ATOM_CLASSES + REF_CLASSES + (FieldWrite, FieldType, Collective, CallFacts,
                                                                    IssuingRoute)},
    **{cls: _reduce_record for cls in (Span, Site, Cond, Variant, FuncFacts, PendingFuncFacts, ClassFacts, FileFacts)},
}

#: a pickler's ``dispatch_table``: the standard reducers and the facts'
DISPATCH_TABLE: dict = {**copyreg.dispatch_table, **FACT_REDUCERS}
