"""Typed atoms: the symbolic values of the per-file facts.

The divergence of an expression is a frozenset of atoms, resolved by the
whole-tree pass (:mod:`cslint.analysis.program`) once every file is known.
Each atom is a ``NamedTuple`` whose first item is a one-letter tag, so atoms
stay plain tuples for pickling, hashing and comparison (two atoms of
different kinds never compare equal), and read by name everywhere:

============================  ====  =============================================
atom                          tag   meaning
============================  ====  =============================================
:class:`Source`               S     a rank-local source; ``dims`` is a tuple of
                                    ``(mode, frozenset(dims))`` pairs (``'*'`` =
                                    every mode); ``whole``: whether the value's
                                    *structure* differs too (see below);
                                    ``picks_from``: read only as the index of
                                    a pick from a parameter
:class:`Projection`           J     what ``inner``'s divergence becomes through
                                    an operation that reads or builds structure
:class:`AttributeRead`        A     ``obj.attr`` of an object that may be of a
                                    class of the tree (a field, a call result):
                                    that class's field when it is known
:class:`Param`                P     the function's parameter at ``index``
:class:`FieldRead`            F     the field ``self.attr`` of a class
:class:`GlobalRead`           G     a module-level variable
:class:`CallResult`           R     the result of a call to an analysed
                                    function; ``fallback`` is used when ``ref``
                                    does not resolve (an opaque call depends on
                                    its receiver and arguments)
:class:`CollectiveResult`     C     the result of a collective over ``group``:
                                    uniform over the group whatever ``inner`` is
:class:`EscapedBy`            X     whether a call to an analysed function
                                   fails on this rank and leaves it
                                   (``unhandled-exceptions = "hang"``)
:class:`RaisedBy`             E     an exception from a call to an analysed
                                    function: rank-local only if the callee can
                                    raise (decided by the whole-tree pass)
============================  ====  =============================================

Structure and contents
----------------------
A value may differ between ranks in two ways.  Its *structure* is what a
program reads without looking at the data inside: whether it is None, its
type, its length or shape, its key set, its identity, and the same of
everything it holds.  Its *contents* are the data: numbers, tensors'
elements, strings, devices.  An object built with a rank offset or placed on
this rank's GPU has rank-local contents and the same structure everywhere;
a list filled only on rank 0 has a rank-local structure.

A source says which of the two it makes rank-local (``Source.whole``: both,
else contents only): a rank id, a device id or a clock is a number, the same
kind of object on every rank; a per-rank request queue, a directory listing
or an exception differs in structure.  Operations move divergence between
the two (:class:`Projection`, with the transforms below): ``len(x)`` and
``x is None`` read ``x``'s structure into a number; ``range(n)``, a slice
bound, a branch's test and every implicit flow make a value's structure
follow ``n``'s contents.  Everything else keeps both as they are: an
attribute, an element, an opaque call's result keep the structure of what
they come from.  Conditions read values, so a condition is divergent when
either part of what it reads is; a loop's trip count reads its iterable's
structure.

Held values
-----------
A third part is what a value only *holds*: the rank or device identity
(:data:`IDENTITY_KINDS`; data stays contents) a library object was built
with (``Communicator(rank=rank)``, a ``CamelCase`` callee outside the
tree), the device a tensor or module was placed on (``module.to(device)``,
``torch.empty(n, device=dev)``).  The object holds
it; it is not what the object is: the object exists, has its type and its
length, and answers its own questions (``comm.should_use(x)``) alike on
every rank, so a held source (``Source.whole`` None) never makes a test
differ and is gone through every read of structure.  It comes back as
contents only where the program reads it out again by name
(``x.device``: :data:`PLACEMENT_ATTRIBUTES`).  An object of a class of the
tree needs none of this: its fields are read from the class.

A transform is three characters: what becomes of a *whole* divergence, of
a *contents-only* one and of a *held* one: ``W`` (whole), ``C`` (contents
only), ``H`` (held), ``-`` (gone); ``K``, ``Q``: read from the kind alone by
a type test (``isinstance``), as a number or a structure; ``L``: a length
made from values (a slice's width, ``range(n)``; ``Source.whole`` "L" while
passed on as is).  This rank's share of the data (``KIND_ALIKE_KINDS``) and
a length differ in size, never in kind.  No transform keeps what a value holds
and drops its contents, so a source counts less than the same source of
contents (:func:`strength`).

References to functions (``ref`` of a call or site) are typed the same way,
in :mod:`cslint.analysis.callrefs`.

The constructors (``source(...)``, ``param(...)``, ...) build the tuples
without the keyword handling of a NamedTuple's own ``__new__`` (an atom class
is called with one tuple of all its items, as ``tuple`` is: atoms are made,
pickled and unpickled by the hundred thousand on a large tree), and make one
object of equal atoms while a file is extracted.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from ..presets import KIND_ALIKE_KINDS, KIND_DEVICE_ID, KIND_RANK_ID

EMPTY: frozenset = frozenset()

_new = tuple.__new__

#: One object per distinct atom made while a file is extracted (emptied with
#: :data:`_projected`): about half would equal one made before (each read of
#: ``self.x``, each projection anew); shared, each is pickled and unpickled
#: once.  Atoms of two classes never compare equal (their tags differ).
_interned: dict = {}
_known = _interned.get


def made(atom_class, items: tuple):
    """The atom ``atom_class(items)``, or the equal one made before (looked
    up by ``items`` themselves: an atom equals the tuple of its items, so
    an atom made before costs no new object)."""
    if items in _interned:  # (``in`` and a subscript, not a call of _interned.get: atoms are made very often)
        return _interned[items]
    found = _new(atom_class, items)
    _interned[found] = found
    return found


# -- atoms ----------------------------------------------------------------------


class Source(NamedTuple):
    tag: str  # "S"
    kind: str
    text: str
    path: str
    line: int
    dims: tuple  # ((mode, frozenset(dims)), ...)
    whole: bool  # the structure differs too (else only the contents)
    #: ``(function key, parameter index)`` where the source was read only as
    #: the index of an element picked from that parameter (``lens[1 - rank]``,
    #: :func:`picking_from`), else ``()``: a call handing the function a
    #: display of one value repeated there picks that value on every rank
    picks_from: tuple


class Param(NamedTuple):
    tag: str  # "P"
    index: int


class FieldRead(NamedTuple):
    tag: str  # "F"
    class_key: Optional[str]
    attr: str


class GlobalRead(NamedTuple):
    tag: str  # "G"
    module: str
    name: str


class CallResult(NamedTuple):
    tag: str  # "R"
    ref: tuple
    args: tuple  # atoms per positional argument
    kwargs: tuple  # (keyword, atoms) pairs
    fallback: frozenset
    path: str
    line: int
    text: str
    depth: int
    #: the arguments (positions before any spread, keyword names) written out
    #: as a display of one value repeated (``positions.alike_displays``):
    #: whichever element the callee picks from one, it is that value
    alike_displays: tuple


class CollectiveResult(NamedTuple):
    tag: str  # "C"
    group: str
    inner: frozenset
    depth: int


class Projection(NamedTuple):
    tag: str  # "J"
    transform: str  # see :func:`compose`
    inner: frozenset


class AttributeRead(NamedTuple):
    tag: str  # "A"
    inner: frozenset  # the object's atoms (fields, call results, attribute reads)
    attr: str


class RaisedBy(NamedTuple):
    tag: str  # "E"
    ref: tuple
    path: str
    line: int
    text: str


class EscapedBy(NamedTuple):
    tag: str  # "X"
    ref: tuple
    path: str
    line: int
    text: str


#: Source kinds whose values are scalars (numbers, names, devices): they make
#: the contents of what is built from them rank-local, never its structure.
#: A sampler that shards by rank pads (or drops) to the same number of
#: batches everywhere, so its shard counts here too.  A random draw is a
#: number, or an array of the size its arguments ask for
#: (``np.random.randint(0, v, size=n)``): a test or a count made from one
#: still differs (``range(random.randint(1, 3))``), a list of draws does not.
CONTENTS_KINDS = frozenset({
    KIND_RANK_ID, KIND_DEVICE_ID, "process id", "host name", "wall clock", "local memory state",
    "per-rank data shard", "randomness",
})


#: Of those, the kinds that name which rank or device this is: an object
#: built with one, or placed on one, only holds it.  Data given to a
#: constructor (a sampler's shard handed to a data loader) is what the
#: object yields, not something it holds.
IDENTITY_KINDS = frozenset({KIND_RANK_ID, KIND_DEVICE_ID, "process id", "host name"})


def source(kind: str, text: str, path: str, line: int, dims: tuple, whole: Optional[bool] = None) -> Source:
    if whole is None:
        whole = kind not in CONTENTS_KINDS
    return made(Source, ("S", kind, text, path, line, dims, whole, ()))


def picking_from(atoms: frozenset, key: str, index: int) -> frozenset:
    """``atoms`` (what an index depends on) with each source marked as read
    only to pick an element from parameter ``index`` of the function ``key``
    (:attr:`Source.picks_from`)."""
    mark = (key, index)
    return frozenset(made(Source, atom[:7] + (mark,)) if atom.tag == "S" else atom for atom in atoms)


def unpicked(atom: Source) -> Source:
    """A source without its pick mark: past the call that binds the
    parameter, an index read as any other."""
    return made(Source, atom[:7] + ((),))


#: the parameter atoms and their one-atom sets, made once: every function's
#: entry variables hold them, and a worker pickles a shared object once
_PARAM_SETS = tuple(frozenset((_new(Param, ("P", index)),)) for index in range(64))
_PARAMS = tuple(next(iter(atoms)) for atoms in _PARAM_SETS)


def param(index: int) -> Param:
    return _PARAMS[index] if index < len(_PARAMS) else _new(Param, ("P", index))


def param_atoms(index: int) -> frozenset:
    """``frozenset({param(index)})``, shared."""
    return _PARAM_SETS[index] if index < len(_PARAM_SETS) else frozenset((param(index),))


#: Added to a parameter's index, the index of the parameter's *own part*: the own structure (None-ness, length,
#: kind, emptiness) of what the caller passes, kept apart from its elements where the caller keeps it apart (a list
#: it filled by ``append``, a list written out, a comprehension; a call passes it as the keyword ``OWN_ARG +
#: position`` or ``OWN_ARG + name``), else the whole argument.  A read of a parameter's own structure (``not x``,
#: ``len(x)``, ``isinstance(x, list)``, ``x is None``) reads it.
OWN_PARAM = 1024
#: the keyword prefix a call passes an argument's own part under
OWN_ARG = "#own:"
#: the keyword a call that spreads a sequence into its positional arguments (``f(*xs)``) passes that sequence's own
#: structure under: what a ``*args`` parameter's own part (its length) reads.  A call without it writes every
#: positional argument out, so such a parameter collects as many on every rank
SPREAD_OWN = OWN_ARG + "*"
#: Added to a parameter's index, the index of whether the parameter is None (``noneness.py``): what the caller's
#: argument's None-ness depends on where the call passes it apart (``NONE_ARG + position`` or ``NONE_ARG + name``:
#: nothing, for a value that is never None), else the parameter's own part.  Above every own part, below the parts
#: at a position (``positions.POSITION_PARAM``)
NONE_PARAM = 1 << 15
#: the keyword prefix a call passes an argument's None-ness under
NONE_ARG = "#none:"


_OWN_PARAMS = tuple(_new(Param, ("P", OWN_PARAM + index)) for index in range(64))
_OWN_PARAM_SETS = tuple(frozenset((atom,)) for atom in _OWN_PARAMS)


def own_params(atoms: frozenset, found: list) -> frozenset:
    """``atoms`` with each parameter of ``found`` (those it holds) read as its
    own part (``param(OWN_PARAM + index)``)."""
    if len(found) == 1 and len(atoms) == 1 and found[0].index < 64:
        return _OWN_PARAM_SETS[found[0].index]  # (most often: a parameter as it is)
    return atoms.difference(found).union([_OWN_PARAMS[atom.index] if atom.index < 64 else
                                          param(OWN_PARAM + atom.index) for atom in found])


def field_read(class_key: Optional[str], attr: str) -> FieldRead:
    return made(FieldRead, ("F", class_key, attr))


#: Spelt after a field's name, the field's own structure (never a Python
#: name): an element stored into ``self.xs`` (``self.xs[k] = v``,
#: ``self.xs.append(v)``) writes the field whole and, apart, what the store
#: changes of the container itself (``FieldWrite`` of ``own_field("xs")``:
#: the key and the implicit flow); every other write of the field writes
#: both.  A read of ``self.xs``'s own structure (its truth, length,
#: None-ness, a loop's trip count) reads ``own_field("xs")``, which is the
#: field itself where no element is stored into it.
OWN_FIELD = "#own"


def own_field(attr: str) -> str:
    return attr + OWN_FIELD


#: Spelt after a field's name (never a Python name): the table of every write
#: of the field but those rebuilding it from its own settings (rebuilds.py)
REBUILT_APART = "#unrebuilt"
BY_METHOD = "#by:"  # between a field's table and a method's name: what it writes there (selfcalls.py)


def base_field(attr: str) -> Optional[str]:
    """The field ``attr`` is the own structure of (None: a field itself)."""
    return attr[:-len(OWN_FIELD)] if attr.endswith(OWN_FIELD) else None


def field_name(attr: str) -> str:
    """The field a table of ``attr`` is of (the field itself, or the one
    whose own structure or entry position it is, or what a method writes to)."""
    if BY_METHOD in attr:
        attr = attr.partition(BY_METHOD)[0]
    if attr.endswith(OWN_FIELD):
        return attr[:-len(OWN_FIELD)]
    if REBUILT_APART in attr:  # (only ever spelt last)
        return attr[:-len(REBUILT_APART)]
    return attr.partition(ENTRY_FIELD)[0] if ENTRY_FIELD in attr else attr


#: Spelt after a field's name and before a position, one position of the
#: tuples a table stores as its entries (never a Python name): where every
#: store into ``self.pending`` writes out ``(job, pages, started)``, unpacking
#: an entry reads ``entry_field("pending", 0)`` into the job
#: (``analysis/entries.py``); the whole field still holds every position.
ENTRY_FIELD = "#at"
#: The entry position of a table filled by entry stores alone that holds the
#: own structure (None-ness, length, kind) of the values stored into it
#: (``analysis/entries.py``): ``entry_field(attr, STORED_OWN)``
STORED_OWN = "stored-own"


def entry_field(attr: str, index: int) -> str:
    return f"{attr}{ENTRY_FIELD}{index}"


def entry_base(attr: str) -> Optional[str]:
    """The field ``attr`` is an entry position of (None: not a position)."""
    return attr.partition(ENTRY_FIELD)[0] if ENTRY_FIELD in attr else None


def global_read(module: str, name: str) -> GlobalRead:
    return made(GlobalRead, ("G", module, name))


#: the part of a call's result (``callrefs.PartRef``) that a non-constant index picks from what a function of
#: the tree returns (``split_last(x, n)[rank]``): nothing more than the index's size where every return of the
#: callee hands back pieces of one value (``FuncFacts.returns_pieces``), else the index whole (its fallback)
PIECE_PICK = -2


def call_result(ref, args, kwargs, fallback, path, line, text, depth, alike_displays: tuple = ()) -> CallResult:
    return made(CallResult, ("R", ref, args, kwargs, fallback, path, line, text, depth, alike_displays))


def with_ref(result: CallResult, ref, passed: tuple = ()) -> CallResult:
    """The same call as ``result`` (arguments, place, depth) read through
    another reference ``ref``: one part of what it returns
    (``callrefs.part_ref``).  ``passed``: (keyword, atoms) pairs added to
    its keyword arguments."""
    return made(CallResult, ("R", ref, result.args, result.kwargs + passed if passed else result.kwargs,
                             result.fallback, result.path, result.line, result.text, result.depth,
                             result.alike_displays))


def collective_result(group: str, inner: frozenset, depth: int) -> CollectiveResult:
    return made(CollectiveResult, ("C", group, inner, depth))


# -- structure and contents ------------------------------------------------------

IDENT = "WCH"  # all kept: attributes, elements, arithmetic, opaque calls
CONTENTS = "CC-"  # a value whose structure is fixed: a bool from a comparison
SHAPE = "W--"  # the structure itself: ``x.shape``
LENGTH = "C--"  # a number read from the structure: ``len(x)``, ``x is None``
WHOLE = "WW-"  # structure made from contents: ``range(n)``, a test, implicit flow
DROP = "---"
HOLD = "WHH"  # what an object is built with or placed by: held inside it
UNHOLD = "WCC"  # what an object was placed by, read back: ``x.device``
ELEMENTS_HELD = "HHH"  # a container's elements, inside an object built from the container
#: the device a torch tensor maker is told to put what it makes on (``torch.tensor(x, device=dev)``): held however
#: it differs, whole too (``devices[local_rank]``, an element a rank index picks): a maker makes the same kind of
#: value of the same shape on any device, so the device never decides the value's structure; ``x.device`` reads it
#: back.  (Held as a container's elements are: the same transform.)
PLACED = ELEMENTS_HELD
KIND = "K--"  # a type test: a number read from the kind (see Kinds and lengths)
#: a kind read that forgives no length: a rank-chosen selection decides which value's kind is read
KIND_OF_SELECTED = "k--"
SIZED = "LL-"  # a length made from values: a slice's width, ``range(n)``
#: Spelt after a transform's three parts, what a value is where a type test for a class no data is of (a model, an
#: optimizer: ``Preset.no_data_classes``) has passed: this rank's share of the data (``KIND_ALIKE_KINDS``) is not
#: what it holds there, every other source is kept as the three parts say (:mod:`cslint.analysis.typetests`)
NO_DATA = "n"
PASSED_NO_DATA_TEST = IDENT + NO_DATA
#: ``Source.whole`` of a source that makes only the kinds of what a value
#: holds differ, never its size, keys or None-ness: the root of an object
#: broadcast holds the tree it mapped into the payload (its tensors where the
#: others got placeholders), the same containers as the others got back
#: (:mod:`cslint.analysis.mirrors`).  A value keeps it as it is passed on
#: (``IDENT``: an element, an attribute of the tree's object), a type test
#: read straight from it (``K``, ``Q``) reads it as a whole source's kind, and
#: every other read drops it: a length, a key, a None test, a comparison, or a
#: type test of something made from it (``k``, ``q``).
KINDS_ONLY = "K"
#: ``Source.whole`` of the sources that decide no test that reads a value as
#: it is: what a value only holds, and a kind only a type test reads
DECIDES_NO_TEST = frozenset({None, KINDS_ONLY})

_LEVEL = {"W": 0, "C": 1, "H": 2}
#: ``Source.whole`` of each part, and back (which part of a value a source
#: makes rank-local, as an index into a transform: 0 its structure, 1 its
#: contents, 2 only what it holds)
_WHOLE_OF = {"W": True, "C": False, "H": None, "L": "L"}
_LEVEL_OF_WHOLE = {True: 0, "L": 0, False: 1, None: 2, KINDS_ONLY: 1}
#: :func:`strength` by ``Source.whole``: a transform that keeps a part keeps
#: the parts before it, so a part counts as much as its place in a transform
#: (a kinds-only source survives a type test alone, which only a whole
#: source survives too: it covers no other, :func:`~cslint.analysis.divergence.merge`)
STRENGTH_OF_WHOLE = {True: 0, KINDS_ONLY: 0.25, "L": 0.5, False: 1, None: 2}


def strength(atom: Source) -> int:
    """How much a source counts (0 most): whole, contents, held.  A source
    is covered in a full divergence map only by others that count at least
    as much (that survive every transform it survives)."""
    return STRENGTH_OF_WHOLE[atom.whole]


def _composed(first: str, then: str) -> str:
    if then == IDENT:
        return first
    if first[3:] or then[3:]:  # a type test passed, before or after: it drops what it drops either way
        base = _composed(first[:3], then[:3])
        return base if base == DROP else base + NO_DATA
    out = "".join(_after(part, then) for part in first)
    # a length ``first`` reads as a structure (a W of any transform but IDENT) is a length no more: a kind read
    # after it (``k``, ``q``) does not forgive it, as reading the two in turn does not (project_source)
    return out[0].lower() + out[1:] if first != IDENT and first[0] == "W" and out[0] in "KQ" else out


def _after(part: str, then: str) -> str:
    """What ``then`` makes of ``part``; what was read from a kind stays so."""
    if part in "KQkq":
        kept = then[1 if part in "Kk" else 0]
        found = {"W": "Q", "L": "Q", "C": "K", "H": "K"}.get(kept, kept)
        return found.lower() if part in "kq" else found
    if part == "L":  # a length stays one only as it is (IDENT); no kind test reads it
        return "-" if then[0] in "KQkq" else then[0]
    return "-" if part == "-" else then[_LEVEL[part]]


_TRANSFORMS = [a + b + c for a in "WCH-" for b in "WCH-" for c in "WCH-"]
#: every pair of the 64 transforms, composed (compose runs by the hundred thousand)
_COMPOSED = {(first, then): _composed(first, then) for first in _TRANSFORMS for then in _TRANSFORMS}


def compose(first: str, then: str) -> str:
    """The transform ``first`` followed by ``then``."""
    try:
        return _COMPOSED[first, then]
    except KeyError:  # a kind or a length read (rare): composed when first met
        return _COMPOSED.setdefault((first, then), _composed(first, then))


def project_source(atom: Source, transform: str):
    """A source seen through a transform (None: it no longer counts)."""
    if transform[3:]:  # (NO_DATA) a test for a class no data is of passed: this rank's share of the data failed it
        if atom.kind in KIND_ALIKE_KINDS:
            return None
        transform = transform[:3]
    part = _LEVEL_OF_WHOLE[atom.whole]
    if atom.whole == KINDS_ONLY:  # kept as it is (IDENT) or read by a type test, and by nothing else
        first = transform[0]
        if first == "K" or first == "Q":
            return _new(Source, atom[:6] + (first == "Q",) + atom[7:])
        return atom if transform == IDENT else None
    becomes = transform[part]
    if becomes == "-":
        return None
    if becomes == "L":
        return atom if atom.whole == "L" else _new(Source, atom[:6] + ("L",) + atom[7:])
    if becomes in "KQkq":
        if part == 0 and (atom.whole == "L" and becomes in "KQ" or atom.kind in KIND_ALIKE_KINDS):
            return None  # a kind test of a length (not read as a structure before: k, q), or of this rank's share
        becomes = "C" if becomes in "Kk" else "W"
    if becomes == "W" and atom.whole == "L":
        return _new(Source, atom[:6] + (True,) + atom[7:])  # read as a structure: no longer a length only
    if _LEVEL[becomes] == part or becomes == "H" and part == 1 and atom.kind not in IDENTITY_KINDS:
        return atom  # (only a rank's or a device's identity is held: data stays contents)
    return _new(Source, atom[:6] + (_WHOLE_OF[becomes],) + atom[7:])


#: Projections already made: (transform, atoms) -> the atoms seen through it. Most repeat one seen before (the
#: implicit flow of a block, a test read by the summary walk and again by each pass of the dataflow); the result
#: follows from the value alone, so equal atom sets share it. Emptied when a file's extraction starts (a new
#: :class:`AtomBuilder`) and past :data:`_PROJECTED_LIMIT` entries: it keeps no file's atoms alive past their use.
_projected: dict = {}
_PROJECTED_LIMIT = 1 << 15


def hold(atoms: frozenset) -> frozenset:
    """``atoms`` seen through :data:`HOLD`: what an object is built with or
    placed by.  Unlike :func:`project`, the symbolic atoms go into one
    projection: an object is built from several arguments at once, and
    nothing reads them apart inside it."""
    if not atoms:
        return atoms
    key = (_TOGETHER, atoms)
    found = _projected.get(key)
    if found is not None:
        return found
    out = []
    rest = []
    for atom in atoms:
        tag = atom.tag
        if tag == "S":
            out.append(project_source(atom, HOLD))  # (HOLD drops no part)
        elif tag == "J":
            out.append(made(Projection, ("J", compose(atom.transform, HOLD), atom.inner)))
        else:
            rest.append(atom)
    if rest:
        out.append(made(Projection, ("J", HOLD, frozenset(rest))))
    return _remembered(key, frozenset(out))


#: the memo key of :func:`hold`'s results (no transform is spelt so)
_TOGETHER = "together"


def _remembered(key: tuple, found: frozenset) -> frozenset:
    """``found``, kept in the memo of :func:`hold` and :func:`project`
    under ``key`` (emptied first once it holds ``_PROJECTED_LIMIT``)."""
    if len(_projected) >= _PROJECTED_LIMIT:
        _projected.clear()
    _projected[key] = found
    return found


def project(transform: str, atoms: frozenset) -> frozenset:
    """``atoms`` seen through ``transform``: sources change at once,
    symbolic atoms (resolved by the whole-tree pass) are wrapped."""
    if transform == IDENT or not atoms:
        return atoms
    if transform == DROP:
        return EMPTY
    key = (transform, atoms)
    found = _projected.get(key)
    if found is not None:
        return found
    out = []
    rest = []
    for atom in atoms:
        tag = atom.tag
        if tag == "S":
            seen = project_source(atom, transform)
            if seen is not None:
                out.append(seen)
        elif tag == "J":
            pair = (atom.transform, transform)  # (compose's table read here: a projection of projections is common)
            combined = _COMPOSED[pair] if pair in _COMPOSED else compose(atom.transform, transform)
            if combined == IDENT:
                out.extend(atom.inner)
            elif combined != DROP:
                out.append(made(Projection, ("J", combined, atom.inner)))
        elif tag == "C":
            # a collective removes its group's dimensions from both parts
            # alike: the projection goes inside, and the result stays where
            # a later collective over the same group can see it
            inner = project(transform, atom.inner)
            if inner:
                out.append(made(CollectiveResult, ("C", atom.group, inner, atom.depth)))
        else:
            rest.append(atom)
    for atom in rest:  # one each, so that a reader can tell them apart (a field's own old value); most made before
        out.append(_known(items := ("J", transform, frozenset((atom,)))) or made(Projection, items))
    return _remembered(key, frozenset(out))


#: Attributes that hold an object's contents: a tensor's data and gradient
#: and their views, a device and its index.  Any other attribute of an object
#: the tree does not define is a field of unknown provenance; it keeps the
#: object's structure, not the rank or device the object was built with
#: (a communicator made on this rank's GPU is ``disabled`` or not alike on
#: every rank).
VALUE_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "real", "imag", "device", "index"})
#: Of those, the attributes that read back where a value was placed: what it
#: holds (its device, a device's index) is their contents.
PLACEMENT_ATTRIBUTES = frozenset({"device", "index"})


#: Attributes that read a tensor's kind: its element type and the kind of
#: device and layout it lives in.  Cutting a tensor (a rank-derived slice
#: width), filling it with this rank's data or placing it on this rank's GPU
#: leaves them as they were, so only what decides which object it is (a test
#: choosing between tensors) reaches them, as a type test reads (:data:`KIND`).
KIND_ATTRIBUTES = frozenset({"dtype", "layout", "is_cuda", "is_cpu", "is_meta", "is_xpu", "is_mps", "is_sparse",
                             "is_quantized"})


#: What ``obj.attr`` keeps of a library object ``obj``'s divergence, by
#: attribute; any other attribute keeps its structure (:data:`SHAPE`).
ATTRIBUTE_KEEPS = {attr: UNHOLD if attr in PLACEMENT_ATTRIBUTES else IDENT for attr in VALUE_ATTRIBUTES}
ATTRIBUTE_KEEPS.update(dict.fromkeys(KIND_ATTRIBUTES, KIND))
#: ``dev.type``, the kind of a device: what a device is made from names it
#: (``torch.device("cpu" if rank == 0 else "cuda")``, evaluator._device_parts),
#: contents too; what it only holds (its index) does not
ATTRIBUTE_KEEPS["type"] = "WC-"
#: ``x.device.type`` of a library value, read as one attribute: the kind of
#: device the value lives on, which placing it on this rank's GPU (kind and
#: index held together) leaves alike, as ``x.is_cuda`` (KIND_ATTRIBUTES); an
#: object of a class of the tree reads its ``device`` field instead
#: (fieldreads.FieldReads._attribute_value).  A kind read that forgives no
#: length (``k``, not :data:`KIND`): which element a rank picks of a list
#: (``ts[rank::world][0]``, a filter by rank) decides where that element
#: lives, so a rank-chosen length or selection stays a difference.
DEVICE_KIND = "device.type"
ATTRIBUTE_KEEPS[DEVICE_KIND] = KIND_OF_SELECTED


# Attribute reads nest (``self.a.b.c``); a loop such as ``node = node.next``
# would nest them without end, so past this depth an attribute of an
# attribute keeps only what a library object's attribute keeps.
MAX_ATTRIBUTE_DEPTH = 3


def attribute_depth(atoms) -> int:
    deepest = 0
    for atom in atoms:
        if atom.tag == "A":
            depth = 1 + attribute_depth(atom.inner)
            if depth > deepest:
                deepest = depth
    return deepest


def attribute(atoms: frozenset, attr: str) -> frozenset:
    """``obj.attr`` where ``obj`` has ``atoms``: what may be an object of a
    class of the tree (a field, a call result, an attribute) waits for the
    whole-tree pass to name its class; the rest keeps its structure (and
    its contents for :data:`VALUE_ATTRIBUTES`)."""
    keep = ATTRIBUTE_KEEPS.get(attr, SHAPE)
    objects = []
    rest = []
    for atom in atoms:
        (objects if atom.tag in ("F", "R", "A") else rest).append(atom)
    if not objects or attribute_depth(objects) >= MAX_ATTRIBUTE_DEPTH:
        return project(keep, atoms)
    read = made(AttributeRead, ("A", frozenset(objects), attr))
    if not rest:
        return frozenset({read})
    return project(keep, frozenset(rest)) | {read}


def whole(atoms: frozenset) -> frozenset:
    """Divergence that decides a value's structure (a test, implicit flow)."""
    return project(WHOLE, atoms)


def calls_read(atoms: frozenset) -> list:
    """The call results a value reads: whole, or through a projection (a
    test, a length) or an attribute of them."""
    out = []
    for atom in atoms:
        tag = atom.tag
        if tag == "R":
            out.append(atom)
        elif tag == "J" or tag == "A":
            out.extend(calls_read(atom.inner))
    return out


def raised_by(ref, path: str, line: int, text: str) -> RaisedBy:
    return made(RaisedBy, ("E", ref, path, line, text))


def escaped_by(ref, path: str, line: int, text: str) -> EscapedBy:
    """Whether a call to ``ref`` fails on this rank with an error nothing
    catches (``unhandled-exceptions = "hang"``): as the tests above the
    callee's failing work differ (:attr:`Variant.escapes`)."""
    return made(EscapedBy, ("X", ref, path, line, text))


# An atom class is made and unpickled from one tuple of all its items by
# ``tuple.__new__`` itself (``Source(items)``, or the constructors): a
# NamedTuple's own ``__new__`` and ``__getnewargs__`` are Python functions,
# called once per atom when a worker pickles its facts and once more when
# the parent unpickles them; the tuple's own are C.
def made_from_one_tuple(classes: tuple) -> None:
    """Give each of ``classes`` (NamedTuples) the tuple's own C
    ``__new__`` and ``__getnewargs__``."""
    for atom_class in classes:
        atom_class.__new__ = tuple.__new__
        atom_class.__getnewargs__ = tuple.__getnewargs__


#: The value atoms (the references to functions: :data:`cslint.analysis.callrefs.REF_CLASSES`).
ATOM_CLASSES = (Source, Param, FieldRead, GlobalRead, CallResult, CollectiveResult, Projection, AttributeRead,
                RaisedBy, EscapedBy)
made_from_one_tuple(ATOM_CLASSES)


def start_file() -> None:
    """Forget the projections and the shared atoms of the file before (a
    new :class:`~cslint.analysis.results.AtomBuilder`)."""
    _projected.clear()
    _interned.clear()
