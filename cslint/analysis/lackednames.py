"""An attribute the object a field is rebuilt with does not have.

``rebuilds.py`` reads a field rebuilt from its own settings (``part =
Impl(size=self.layer.size); self.layer = wrap(part)``) through the tests of
that write wherever the field's structure is read.  A read of
``self.layer.x`` where the rebuilt object has no ``x`` at all (``Impl``
and its bases never bind it) raises there; the ranks that read it are
those whose ``self.layer`` holds another object, written elsewhere.  So
that read reads the field's structure from every write but the rebuilds
(the ``#unrebuilt`` table), as ``presentfields.py`` reads an attribute of a
field some method sets to None from its other writes.

Which names an object of a class may hold: what the class and its bases
bind by their own doing (:attr:`ClassFacts.bound_names`: their bodies'
names, their methods, what their methods store or register on ``self``
by name), the names a library base holds itself (the presets'
``attribute_bases``: a module's methods and ``training``), and any name
the tree stores or registers by name on another object that may be the
rebuilt one (:attr:`FileFacts.foreign_stores`: ``layer.weight = w`` in a
helper handed the layer, ``x.layer.weight = w``; not a store through a
field of another name, ``x.proj.weight = w``: the rebuilt object is held by
no field but its own).  A class that binds a name it computes on ``self``
(``setattr(self, k, v)``), a base outside the tree and the presets, a
class body with statements other than bindings, or a file read for its
raises alone, leave the names unknown.  A wrapper the object is handed to
counts only where a preset says it hands the object back changed in place
(``fully_shard``: ``in_place_wrappers``), with the names it adds.  Not
looked for: a name some other code binds with a computed ``setattr`` on
an object it is handed, a store through another field the object was
later handed to (``self.spare = self.layer``), and the files the run never
reads (none of them reaches a collective).
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import fnmatch_any
from .astwalk import imported_names
from .atoms import field_read
from .bindings import assigned_names
from .rebuilds import UNKNOWN, rebuilt_apart

_BINDING_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_NEUTRAL_BASES = frozenset({"object", "ABC", "Protocol", "Generic"})


def class_body_names(body: list) -> Optional[frozenset]:
    """The names a class body binds (definitions, assignments, imports); None
    where it holds another statement (an ``if``, a loop) that may bind more."""
    names = set()
    for stmt in body:
        t = type(stmt)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            names.add(stmt.name)
        elif t in _BINDING_STATEMENTS:
            names.update(assigned_names(stmt))  # (``KINDS[key] = v`` reads ``KINDS`` and ``key``: it binds neither)
        elif t is ast.Import or t is ast.ImportFrom:
            names.update(imported_names(stmt))
        elif not (t is ast.Expr or t is ast.Pass):
            return None
    return frozenset(names)


def fill_bound_names(classes: list, body_names: dict, everyone: list) -> None:
    """Set :attr:`ClassFacts.bound_names` of a file's classes from the names
    their bodies bind (``body_names``: key -> :func:`class_body_names`) and
    what the scans of their methods (among ``everyone``) found stored on
    ``self``."""
    stores: dict = {}  # class key -> [its methods' scans' self stores, or None]
    for info in everyone:
        if info.class_key is not None:  # (a method; a nested function's stores on ``self`` are foreign ones)
            stores.setdefault(info.class_key, []).append(None if info.binds_computed_names else info.self_stores)
    for made in classes:
        names = body_names.get(made.key)
        own = stores.get(made.key, ())
        if names is None or None in own:
            continue
        made.bound_names = names.union(*own)


def file_foreign_stores(everyone: list) -> frozenset:
    """The attribute names a file's functions store or register by name on other objects than ``self``."""
    return frozenset().union(*(info.foreign_stores for info in everyone))


class LackedNames:
    """Which attributes the objects a field is rebuilt with lack (:meth:`held_read`)."""

    def __init__(self, files: list, rebuilt: dict, resolver, knowledge):
        self.resolver = resolver
        self.knowledge = knowledge
        self.foreign = frozenset().union(*(f.foreign_stores for f in files))
        #: (family, field) -> the objects its rebuilds write (:func:`~cslint.analysis.rebuilds.rebuilt_objects`)
        self.rebuilt = rebuilt
        self._lacks: dict = {}  # (family, field, name) -> bool

    def held_read(self, atom, name: str):
        """The atom a read of ``name`` on the object of the field read ``atom``
        reads that object's structure from: the field's table of every write
        but its rebuilds where no object a rebuild writes has ``name``; else None."""
        if atom.tag != "F" or "#" in atom.attr:
            return None
        key = (self.resolver.family(atom.class_key), atom.attr, name)
        lacks = self._lacks.get(key)
        if lacks is None:
            objects = self.rebuilt.get(key[:2])
            lacks = self._lacks[key] = bool(objects) and name not in self.foreign \
                and f"{atom.attr}.{name}" not in self.foreign and all(self._object_lacks(obj, name) for obj in objects)
        return field_read(atom.class_key, rebuilt_apart(atom.attr)) if lacks else None

    def _object_lacks(self, obj, name: str) -> bool:
        wrapper = obj.wrapper
        if wrapper is not None:
            if wrapper is UNKNOWN or wrapper.tag != "qual":
                return False
            added = next((names for pattern, names in self.knowledge.in_place_wrappers
                          if fnmatch_any(wrapper.dotted, (pattern,))), None)
            if added is None or name in added:
                return False
        cls = self.resolver.class_of_ref(obj.built) if obj.built is not None else None
        return cls is not None and self._class_lacks(cls.key, name)

    def _class_lacks(self, class_key: str, name: str) -> bool:
        resolver = self.resolver
        for key in resolver.mro(class_key):
            cls = resolver.classes.get(key)
            if cls is None or cls.bound_names is None or name in cls.bound_names:
                return False
            for ref in cls.bases:
                if resolver.class_of_ref(ref) is not None:
                    continue  # (its own names: walked in the mro)
                if ref.tag != "qual":
                    return False
                if ref.dotted.rsplit(".", 1)[-1] in _NEUTRAL_BASES:
                    continue
                names = next((names for pattern, names in self.knowledge.attribute_bases
                              if fnmatch_any(ref.dotted, (pattern,))), None)
                if names is None or name in names:
                    return False
        return True
