"""Field writes: what a statement of a method writes into the fields of
``self`` -- an assignment (``self.x = v``, ``self.x[k] = v``, an unpacking
into several fields), an element added (``self.xs.append(v)``) and any other
mutator called on a field (``self.xs.clear()``), which never rebinds it --
and the field types an assignment declares (``self.x = Cls(...)``,
``self.x: Base = make()``).  Part of the statement semantics of
:mod:`cslint.analysis.transfer`, which hands each statement over; the
fixpoint (:mod:`cslint.analysis.program`) reads the writes as tables.
"""

from __future__ import annotations

import ast
from typing import Optional

from .atoms import CONTENTS, EMPTY, SIZED, own_field, project
from .callrefs import class_ref, element, qual_ref
from .copies import copies_itself
from .entries import appended_entry_writes, empty_table, entry_store_writes, entry_writes
from .flows import Flow
from .function import receiver_types
from .receivers import annotation_terms
from .rebuilds import rebuilds_of
from .records import FieldType, FieldWrite
from .presence import is_none_literal
from .scope import canonical_text
from .bindings import flatten_targets, pairwise
from .syntax import annotation_text
from .tuplelists import unpacked_positions
from .vocabulary import MUTATORS


def field_writes(transfer, s: ast.stmt, flow: Flow, fields: list, field_types: list) -> None:
    """``self.x = v``, ``self.x[k] = v`` and ``self.xs.append(v)``: the field holds the value (with the implicit
    flow) in every instance of the class; ``self.x = Cls(...)`` also says what ``self.x`` holds."""
    info = transfer.info
    evaluate = transfer.evaluator.eval
    env = flow.env
    t = type(s)
    if t is ast.Assign or ((t is ast.AnnAssign or t is ast.AugAssign) and s.value is not None):
        value = s.value
        targets = s.targets if t is ast.Assign else [s.target]
        whole, whole_value = None, value
        for target in targets:
            if type(target) is ast.Name:
                continue  # a local variable (most targets): no field
            # ``self.a, self.b = saved``: each its own position of a local tuple (tuplelists.py)
            positions = unpacked_positions(info, target, whole_value, env) \
                if t is ast.Assign and type(whole_value) is ast.Name and info.tuple_unpacked else None
            for sub, value, position in _paired_targets(targets, target, whole_value):
                attr = info.self_attr(sub)
                base_attr = info.self_attr(sub.value) if attr is None and isinstance(sub, ast.Subscript) else None
                if attr is None and base_attr is None:
                    continue
                if value is not whole_value:
                    atoms = evaluate(value, env) | flow.implicit  # its own element
                else:
                    if whole is None:  # (the implicit flow is worked out only for a statement that writes a field)
                        implicit = project(CONTENTS, flow.implicit) if flow.implicit and len(targets) == 1 \
                            and t is not ast.AugAssign and copies_itself(value, targets[0], info.ctx.imports) \
                            else flow.implicit  # copies.py
                        whole = evaluate(value, env) | implicit
                    atoms = whole
                if position is not None and positions is not None:
                    atoms = positions[position] | flow.implicit
                elif position is not None:  # ``self.a, self.b = f()``: its own element of what f returns
                    atoms = element(position, atoms, info.ctx.returns_tuples)
                extra = evaluate(sub.slice, env) if base_attr else EMPTY
                stored = base_attr is not None and type(sub.slice) is not ast.Slice
                if attr and type(value) is ast.ListComp and t is not ast.AugAssign:
                    # the list's own structure is its generators' (Evaluator.comprehension_length)
                    fields.append(FieldWrite(info.class_key, attr, atoms, s.lineno, True))
                    fields.append(FieldWrite(info.class_key, own_field(attr),
                                             transfer.evaluator.comprehension_length(value, env) | flow.implicit,
                                             s.lineno))
                    continue
                if attr and type(value) is ast.Name and t is not ast.AugAssign:
                    own = transfer.evaluator.kept_apart(value, env, params=False)
                    if own is not None:
                        # a local container whose own structure the dataflow keeps apart
                        # (filled by element stores) hands both parts on as they are
                        fields.append(FieldWrite(info.class_key, attr, atoms, s.lineno, True))
                        fields.append(FieldWrite(info.class_key, own_field(attr), own | flow.implicit, s.lineno))
                        continue
                fields.append(FieldWrite(info.class_key, attr or base_attr, atoms | extra, s.lineno, stored,
                                         attr is not None and is_none_literal(value),
                                         rebuilds_of(info).writes.get(id(s)) if attr in info.rebuild_fields else None))
                if t is ast.Assign and len(targets) == 1 and (stored and type(value) is ast.Tuple
                                                              or attr and empty_table(value)):
                    fields.extend(entry_writes(info, evaluate, attr or base_attr, value, extra, flow.env,
                                               flow.implicit, s.lineno))
                if stored:  # the container itself changes by the key alone (entries.entry_store_writes)
                    fields.extend(entry_store_writes(transfer.evaluator, base_attr, value, env, t is ast.Assign,
                                                     extra | flow.implicit, s.lineno))
                if attr and isinstance(value, ast.Call):
                    ref = info.resolve_ref(value.func)
                    if ref is not None:
                        field_types.append(FieldType(info.class_key, attr, ref))
                if attr and type(value) is ast.Name:
                    field_types.extend(handed_field_types(info, attr, value.id))
                if attr and t is ast.AnnAssign:
                    field_types.extend(declared_field_types(info, attr, s.annotation))
    if t is ast.Expr or ((t is ast.Assign or t is ast.AnnAssign) and type(s.value) is ast.Call):
        # ``self.xs.append(v)``, and a mutator whose result is kept:
        # ``entry = self.metrics.setdefault(name, {...})`` adds the key too
        call = mutator_call(s)
        if call is not None:
            attr = info.self_attr(call.func.value)
            if attr is not None:
                # a method called on the field never rebinds it (mutated_parts)
                own = transfer._added_element_own(call, flow)
                if own is None:
                    held, own = mutated_parts(transfer.evaluator, call, flow)
                else:
                    held = transfer._mutator_atoms(call, flow)
                fields.append(FieldWrite(info.class_key, attr, held, s.lineno, True))
                fields.append(FieldWrite(info.class_key, own_field(attr), own, s.lineno))
                fields.extend(appended_entry_writes(info, attr, call, transfer._mutator_atoms(call, flow), s.lineno))


def mutated_parts(evaluator, call: ast.Call, flow: Flow) -> tuple:
    """(what the field holds, its own structure) after ``self.xs.clear()``,
    ``.pop()``, ``.extend(ys)`` and the like: the call never rebinds the
    field, so whether it ran (the implicit flow) decides only how many it
    holds and which of the elements it already held are where, a length
    (:data:`SIZED`), never its kind nor the kind of what it holds; what
    it adds (the arguments) is held as it is, and makes the length too."""
    arguments = argument_atoms(evaluator, call, flow)
    how_many = project(SIZED, flow.implicit)
    return arguments | how_many, project(SIZED, arguments) | how_many


def argument_atoms(evaluator, call: ast.Call, flow: Flow) -> frozenset:
    atoms = EMPTY
    for arg in call.args:
        atoms = atoms | evaluator.eval(arg, flow.env)
    return atoms


def mutator_call(s) -> Optional[ast.Call]:
    """The call of ``xs.append(x)`` (awaited or not) as a statement, or as
    the value an assignment keeps (``entry = xs.setdefault(k, v)``)."""
    call = s.value.value if type(s.value) is ast.Await else s.value
    if type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in MUTATORS:
        return call
    return None


def _paired_targets(targets: list, target: ast.AST, value: ast.AST):
    """(name or field, the value it gets, the position of its element in
    that value or None) for each one ``target`` assigns: its own element of
    a tuple or list written out (``self.found, self.pending =
    os.listdir(root), None``, as :func:`pairwise` pairs local names), else
    the whole value, of which an element of an unpacking of one level and no
    ``*`` takes the element at its position (``self.a, self.b = f()``, as
    ``Transfer._bind`` reads it for local names)."""
    if type(target) is ast.Attribute or type(target) is ast.Subscript:
        return ((target, value, None),)  # (most field writes)
    pairs = pairwise(targets, value)
    if pairs is not None:
        return [(sub, part, None) for element, part in pairs for sub in flatten_targets(element)]
    if (type(target) is ast.Tuple or type(target) is ast.List) and len(targets) == 1 \
            and not any(type(e) is ast.Starred for e in target.elts):
        return [(sub, value, position if sub is elt else None)
                for position, elt in enumerate(target.elts) for sub in flatten_targets(elt)]
    return [(sub, value, None) for sub in flatten_targets(target)]


def declared_field_types(info, attr: str, annotation: ast.AST) -> list:
    """The field types an annotated field assignment in a method declares
    (``self.scheduler: Base = make()``), read as :func:`handed_field_types`
    reads a parameter's annotation, whatever the call hands back: a class
    of no analysed module reaches no collective, and a field declared
    ``Any`` or ``socket.socket`` holds no class of the tree."""
    return _annotated_types(info, attr, annotation_terms(annotation, info.ctx), annotation_text(annotation))


def handed_field_types(info, attr: str, name: str) -> list:
    """The field types of ``self.attr = name`` where ``name`` is an annotated
    parameter (``def __init__(self, receiver: Optional[Receiver])``): the
    classes its annotation names, as a construction of one would type the
    field (:func:`_annotated_types`)."""
    return _annotated_types(info, attr, receiver_types(info).declared_terms(name), info.annotations.get(name))


def _annotated_types(info, attr: str, declared: tuple, text: Optional[str]) -> list:
    """The field types an annotation gives ``attr``, by its type terms
    ``declared`` and its dotted ``text``: a class of this file by its bare
    name, an imported one by what the import names, each member of
    ``Optional``/``Union``/``X | None``; a standard-library type (``Any``)
    types it as no class of the tree.  An annotation that names nothing the
    file can tell (a name neither defined here nor imported, ``object``)
    keeps its text as a dotted name, which names no analysed class: the
    field is something else, never a same-named class of another module."""
    if declared:
        # a standard-library type (``Any``, ``int``) says the field holds no class of the tree: its module's
        # name is a dotted name outside the analysed code, which a method found by its name alone never is
        return _named_class_types(info, attr, declared) + [
            FieldType(info.class_key, attr, qual_ref(term[1])) for term in declared if term[0] == "library"]
    return [FieldType(info.class_key, attr, qual_ref(canonical_text(text, info.ctx.imports)))] if text else []


def _named_class_types(info, attr: str, terms: tuple) -> list:
    return [FieldType(info.class_key, attr, class_ref(term[1]) if term[0] == "class" else qual_ref(term[1]))
            for term in terms if term[0] == "class" or term[0] == "named"]
