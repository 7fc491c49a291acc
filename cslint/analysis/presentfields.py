"""What a field holds where it is not None.

A field some method sets to None itself (``self.state = None``: a step's
state cleared once it is used, or never made on the ranks that return
before making it) tells the ranks apart by its None-ness where that write
runs on some of them only.  An attribute of the field's value
(``self.state.batch``) is read only where the field is not None: where it is
None the read raises, and that is the question of the test that reads its
None-ness (``if self.state is None: return``), which still reads every write.
Where it is not None, it holds what the last write of anything else put
there, whichever None writes ran before that one.  So the attribute read
reads the field's structure from its other writes alone
(:func:`present_field`, a table of every write of the field but those of
None itself), not from the tests that chose where it was cleared.

``getattr(obj, "name", default)`` hands back the default where ``obj`` is
None, so it reads the field's whole structure beside the attribute
(``structure.py``).
"""

from __future__ import annotations

from .atoms import field_read
from .records import written_variants

#: Spelt after a field's name (never a Python name): the table of every write
#: of the field but those of None itself (``FieldWrite.absent``)
PRESENT_FIELD = "#present"


def present_field(attr: str) -> str:
    return attr + PRESENT_FIELD


def absent_written_fields(funcs, family_of) -> frozenset:
    """(family, attr) of the fields some method of the family sets to None itself."""
    return frozenset((family_of(write.class_key), write.attr)
                     for fn in funcs for v in written_variants(fn) for write in v.fields if write.absent)


def present_read(atom, absent_fields: frozenset, family_of):
    """The atom an attribute read of the object ``atom`` reads its structure
    from: for a field some method sets to None (a plain field read, not a
    method's own writes or a part kept apart), the table of its other writes;
    else ``atom`` itself."""
    if atom.tag != "F" or "#" in atom.attr or (family_of(atom.class_key), atom.attr) not in absent_fields:
        return atom
    return field_read(atom.class_key, present_field(atom.attr))
