"""Module memos that a class's constructor fills: calls that reach a
collective only while a module global is still None.

A *memo fill* is a collective whose result a function stores into a module
global it declares, directly in the body of ``if G is None:``::

    def _world():
        global _WORLD
        if _WORLD is None:
            _WORLD = dist.new_group(...)
        return _WORLD

A call of a parameterless module function ``T0`` reaches only memo fills
(:meth:`MemoCover.memo_only`) when every collective its calls can reach is
such a fill, every call on the way is made without arguments, and every test
deciding whether a fill or a call on the way runs reads only module globals
(and constants, ``hasattr``/``isinstance`` of them).  Called twice with
none of those globals written in between, the second call takes the path
the first took up to each ``G is None`` test; where the first reached a fill,
``G`` is no longer None, so the second reaches none.

A class's constructors fill the memo when every constructor of its family
makes the argument-free call ``T0()`` as a statement of its own body (or of
a method of the family it calls so, or of the constructor it calls so),
before any statement that can return.  A call made later in a method of the
family, of ``T0`` or of a function whose every way to a collective is an
argument-free call of such a ``T0`` (:meth:`MemoCover.uncovered`), then
reaches no collective, provided that

- no function the family's methods can run writes those globals, except the
  fills themselves and the statements of the constructors' chain before
  their call of ``T0`` (which ``T0()`` follows), and
- the method is not one of the chain's (whose call is the first) nor run
  from the statements before its call of ``T0`` (before the memo is filled).

(An object's methods run after its constructor; a module's globals are what
the constructors' calls left them.)  What the family can run is read from the
calls the tree resolves; a writer called only through a value the tree does
not resolve is not seen, nor a teardown the family cannot reach (which is
taken to end the objects' use).  A summarised constructor (no call sites by
position) counts where its first call is the chain's, nothing called before
it (``FuncFacts.first_call``: ``super().__init__(*args, **kwargs)``).
"""

from __future__ import annotations

from typing import Optional

from .constructions import is_constructor
from .records import every_called_ref
from .resolution import issued_collective

#: how many calls deep a constructor's leading call is followed
_MAX_CHAIN = 4

class MemoCover:
    """Which calls of a family's methods reach only memos its constructors
    filled (see the module docstring)."""

    def __init__(self, program):
        self.program = program
        self.resolver = program.resolver
        self._memo_only: dict = {}
        self._has_fills: set = set()  # the keys of the functions a way from which ends in a memo fill
        self._filled: dict = {}

    def sites(self, fn):
        """The call sites of a function analysed in depth, of every mode."""
        for variant in fn.variants.values():
            yield from variant.sites

    # -- what a call of T0 can reach
    def memo_only(self, key: str) -> Optional[frozenset]:
        """The ``(module, name)`` globals that the functions a call of
        ``key`` can run test or fill on the way to a collective, where that
        way only ever ends in memo fills (else None)."""
        if key not in self._memo_only:
            self._memo_only[key] = None
            self._memo_only[key] = self._memo_only_of(key, set())
        return self._memo_only[key]

    def _memo_only_of(self, key: str, seen: set) -> Optional[frozenset]:
        if key in seen:
            return frozenset()
        seen.add(key)
        fn = self.program.funcs.get(key)
        if fn is None or not fn.deep:
            return frozenset()  # (a function the file's pass found no way to a collective from)
        read: set = set()
        fills = False
        for site in self.sites(fn):
            collective = issued_collective(self.resolver, site) is not None
            if collective and not site.memo_global:
                return None
            below: frozenset = frozenset()
            if not collective and site.ref is not None:
                targets = self.resolver.resolve(site.ref)
                leads = []
                for target in targets:
                    part = self._memo_only_of(target.key, seen)
                    if part is None:
                        return None
                    if part or target.key in self._has_fills:
                        leads.append(part)
                        fills = fills or target.key in self._has_fills
                if not leads:
                    continue
                if site.args or site.kwargs or site.star:
                    return None  # a call on the way passes what may differ between calls
                below = frozenset().union(*leads)
            elif not collective:
                continue
            tested = self._tested_globals(fn, site)
            if tested is None:
                return None
            read |= tested | below
            if collective:
                fills = True
                read.add((fn.module, site.memo_global))
        if fills:
            self._has_fills.add(key)
        return frozenset(read)

    def _tested_globals(self, fn, site) -> Optional[frozenset]:
        """The module globals the tests deciding whether ``site`` runs read,
        where they read nothing else (else None).  A test that raises
        (an ``assert``) only stops the call."""
        out = set()
        for cond in site.conds:
            if cond.statement == "assert":
                continue
            names = cond.names_only
            if names is None or not _only_globals(cond.atoms):
                return None
            out.update((fn.module, name) for name in names)
        return frozenset(out)

    # -- what the constructors fill
    def filled_by(self, key: str, family: str, depth: int = 0) -> dict:
        """``T0`` key -> the line of the statement of ``key``'s body that
        calls it (itself or through a method or constructor of ``family`` so
        called), for each parameterless module function ``T0`` filling
        memos that the function calls so, before anything can return."""
        memo_key = (key, family)
        if memo_key in self._filled:
            return self._filled[memo_key]
        self._filled[memo_key] = {}
        fn = self.program.funcs.get(key)
        found: dict = {}
        if fn is not None and not fn.deep and depth < _MAX_CHAIN:
            for ref in fn.first_call:
                targets = self.resolver.resolve(ref)
                if targets and all(t.class_key is not None and self.resolver.family(t.class_key) == family
                                   for t in targets):
                    inner = [self.filled_by(t.key, family, depth + 1) for t in targets]
                    for t0 in set(inner[0]).intersection(*inner[1:]):
                        _earliest(found, t0, 0)
        elif fn is not None and fn.deep and depth < _MAX_CHAIN:
            for site in self.sites(fn):
                if site.ref is None or (site.span.line, site.span.column) not in fn.leading_calls:
                    continue
                targets = self.resolver.resolve(site.ref)
                if not targets:
                    continue
                line = site.span.line
                if len(targets) == 1 and targets[0].class_key is None and not targets[0].params \
                        and not (site.args or site.kwargs or site.star) and self.memo_only(targets[0].key) \
                        and targets[0].key in self._has_fills:
                    _earliest(found, targets[0].key, line)
                elif all(t.class_key is not None and self.resolver.family(t.class_key) == family for t in targets):
                    inner = [self.filled_by(t.key, family, depth + 1) for t in targets]
                    for t0 in set(inner[0]).intersection(*inner[1:]):
                        _earliest(found, t0, line)
        self._filled[memo_key] = found
        return found

    def chain(self, key: str, family: str, t0: str, depth: int = 0):
        """``(function key, line)`` of each function of the constructors'
        chain to their call of ``t0`` and the line of that statement."""
        line = self.filled_by(key, family).get(t0)
        if line is None or depth > _MAX_CHAIN:
            return
        fn = self.program.funcs[key]
        if not fn.deep:  # its first call is the chain's: nothing runs before it
            for ref in fn.first_call:
                for target in self.resolver.resolve(ref):
                    yield from self.chain(target.key, family, t0, depth + 1)
            return
        yield key, line
        for site in self.sites(fn):
            if site.span.line == line and site.ref is not None \
                    and (site.span.line, site.span.column) in fn.leading_calls:
                for target in self.resolver.resolve(site.ref):
                    if target.key != t0:
                        yield from self.chain(target.key, family, t0, depth + 1)

    # -- what a later call reaches
    def uncovered(self, starts, fills: frozenset) -> set:
        """Of the functions calls from ``starts`` can run, the keys of those
        with a way to a collective other than an argument-free call of one
        of ``fills`` (the filled ``T0`` keys): one that issues a collective
        itself, calls one of ``fills`` passing something, or calls such a
        function (not entering ``fills``)."""
        funcs, resolve = self.program.funcs, self.resolver.resolve
        callers: dict = {}
        bad = set()
        for key in sorted(self.runs(starts)):
            fn = funcs.get(key)
            if fn is None or not fn.deep or key in fills:
                continue
            for site in self.sites(fn):
                if issued_collective(self.resolver, site) is not None:
                    bad.add(key)
                if site.ref is None:
                    continue
                for target in resolve(site.ref):
                    if target.key not in fills:
                        callers.setdefault(target.key, set()).add(key)
                    elif site.args or site.kwargs or site.star:
                        bad.add(key)
        stack = sorted(bad)
        while stack:
            for caller in callers.get(stack.pop(), ()):
                if caller not in bad:
                    bad.add(caller)
                    stack.append(caller)
        return bad

    def runs(self, keys, partial: Optional[dict] = None) -> set:
        """The keys of the functions that calls from ``keys`` can run (them
        included); of a function of ``partial`` (key -> line), only the calls
        from that line on."""
        resolve = self.resolver.resolve
        funcs = self.program.funcs
        seen = set(keys)
        stack = list(seen)
        while stack:
            key = stack.pop()
            fn = funcs.get(key)
            if fn is None:
                continue
            if partial is not None and key in partial:
                refs = [site.ref for site in self.sites(fn)
                        if site.ref is not None and site.span.line >= partial[key]]
            else:
                refs = every_called_ref(fn)
            for ref in refs:
                if ref.tag == "paramcall":
                    continue
                for target in resolve(ref):
                    if target.key not in seen:
                        seen.add(target.key)
                        stack.append(target.key)
        return seen


def _only_globals(atoms) -> bool:
    """Whether atoms read module globals and nothing else (through what a
    test makes of them)."""
    stack = list(atoms)
    while stack:
        atom = stack.pop()
        tag = getattr(atom, "tag", None)
        if tag == "J":
            stack.extend(atom.inner)
        elif tag != "G":
            return False
    return True


def _earliest(found: dict, key: str, line: int) -> None:
    if key not in found or line < found[key]:
        found[key] = line


def memo_covered(program) -> dict:
    """id(site) -> the keys of its targets that reach only memos every
    constructor of its family filled (see the module docstring), for the
    calls of the tree's instance methods."""
    resolver = program.resolver
    members: dict = {}
    for fn in program.funcs.values():
        if fn.class_key is not None:
            family = resolver.family(fn.class_key)
            if family is not None:
                members.setdefault(family, []).append(fn)
    cover = None
    out: dict = {}
    for family in sorted(members):
        methods = members[family]
        ctors = [fn for fn in methods if fn.qualname.count(".") == 1 and is_constructor(fn)]
        if not ctors or not any(fn.leading_calls or fn.first_call for fn in ctors):
            continue
        if cover is None:
            cover = MemoCover(program)
        filled = [cover.filled_by(fn.key, family) for fn in ctors]
        t0s = set(filled[0]).intersection(*filled[1:])
        if not t0s or not _every_class_constructed(resolver, family):
            continue
        fills = frozenset(t0 for t0 in sorted(t0s) if _stays_filled(program, cover, family, methods, ctors, t0))
        if not fills:
            continue
        uncovered = cover.uncovered([fn.key for fn in methods], fills)
        early = _run_before_filled(program, cover, family, ctors, fills)
        # the chain's own calls are the first calls, which do reach the collective
        early.update(key for t0 in fills for ctor in ctors for key, _line in cover.chain(ctor.key, family, t0))
        for fn in methods:
            if not fn.deep or fn.key in early or fn.self_offset != 1 or fn.qualname.count(".") != 1 \
                    or is_constructor(fn):
                continue
            for site in cover.sites(fn):
                if site.ref is None:
                    continue
                keys = frozenset(t.key for t in resolver.resolve(site.ref)
                                 if (t.key in fills and not (site.args or site.kwargs or site.star))
                                 or (t.key not in fills and t.key not in uncovered))
                if keys:
                    out[id(site)] = keys
    return out


def _every_class_constructed(resolver, family: str) -> bool:
    """Whether an object of every class of the family runs a constructor of
    the family: the class or a base of the tree defines ``__init__``."""
    classes = resolver.classes
    for key in sorted(classes):
        if resolver.family(key) == family and not any(
                "__init__" in classes[k].methods for k in resolver.mro(key) if k in classes):
            return False
    return True


def _stays_filled(program, cover: MemoCover, family: str, methods: list, ctors: list, t0: str) -> bool:
    """Whether nothing the family's methods can run writes a global that a
    call of ``t0`` tests or fills on its way to a memo fill, but the fills
    themselves and the constructors' chain before its call of ``t0``."""
    tested = cover.memo_only(t0)
    if not tested:
        return False
    before: dict = {}  # function key -> the line of its statement that calls t0 (its chain)
    for ctor in ctors:
        for key, line in cover.chain(ctor.key, family, t0):
            before[key] = min(line, before.get(key, line))
    fill_lines = set()
    for key in sorted(cover.runs([t0])):
        fn = program.funcs.get(key)
        if fn is not None:
            fill_lines.update((key, fn.module, site.memo_global, site.span.line)
                              for site in cover.sites(fn) if site.memo_global)
    # what can run once the object is built: every method, but of the
    # constructors' chain only what follows its call of t0 (which t0() follows)
    for key in sorted(cover.runs([fn.key for fn in methods], before)):
        fn = program.funcs.get(key)
        if fn is None:
            continue
        for module, name, line in fn.global_stores:
            if (module, name) not in tested or (key, module, name, line) in fill_lines:
                continue
            if key in before and line < before[key]:
                continue
            return False
    return True


def _run_before_filled(program, cover: MemoCover, family: str, ctors: list, fills: frozenset) -> set:
    """The keys of the functions the constructors' chains can run before
    their call of a ``T0`` of ``fills``."""
    starts = []
    for t0 in sorted(fills):
        for ctor in ctors:
            for key, line in cover.chain(ctor.key, family, t0):
                fn = program.funcs[key]
                for site in cover.sites(fn) if fn.deep else ():
                    if site.ref is None:
                        continue
                    if site.span.line < line or (site.span.line == line
                                                 and (site.span.line, site.span.column) not in fn.leading_calls):
                        starts.extend(t.key for t in program.resolver.resolve(site.ref))
    return cover.runs(starts) if starts else set()
