"""The fact gatherer: which files get parsed, and the facts of each.

Files are chosen in rounds by the byte prefilters (:mod:`.prefilter`).
Round 1 parses the files that may hold a collective call site.  The
functions found there to issue a collective directly become *wrapper names*;
each later round parses the files that can reach one of the names learnt in
the round before, until no new name turns up.  A file parsed before a
wrapper it calls was known had that call summarised; it gets a deeper look
(only the functions now deep, merged into its earlier facts) in the same
batch as the next round's new files, and in up to three rounds after the
last one.  Facts come from the cache when their whole input is known
(:mod:`.cache`), else from the workers (:mod:`.workers`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import Optional

from ..analysis.attached import attached_reaching, calls_attached
from ..analysis.groupgetters import GetterScan
from ..analysis.records import FileFacts, is_pending, merge_partial, prefetch_pending, settle_ready_pending
from ..analysis.syntax import CONSTRUCTORS, called_as
from ..analysis.typedcalls import module_entry, module_entry_parts, typed_entry
from ..analysis.vocabulary import GENERIC_METHODS
from . import timeline
from .discovery import read_file
from .prefilter import ImportStatements, SiteFilter, WrapperDefinitions, WrapperPrefilter
from .workers import ParseJob

#: rounds of deeper looks after the last prefilter round, at most
MAX_DEEPER_ROUNDS = 3


class FactGatherer:
    """Gathers the facts of one run (see the module docstring)."""

    def __init__(self, knowledge, preset_names: list, workers, fact_cache, module_of, bar=None):
        self.knowledge = knowledge
        self.presets = tuple(preset_names)
        self.workers = workers
        self.fact_cache = fact_cache
        self.module_of = module_of
        self.bar = bar
        #: resolved path -> FileFacts
        self.facts: dict = {}
        #: names of the functions found to issue a collective directly
        self.known_wrappers: set = set()
        self.imports = ImportStatements()  # shared by every round's prefilter
        #: resolved path -> FileFacts of a file no round parsed that defines a
        #: callee whose exceptions or result decide a collective (read for
        #: what it raises and returns only)
        self.callee_facts: dict = {}

    def gather(self, all_files: list) -> dict:
        """The facts of the files worth parsing among ``all_files``
        (``SourceFile``), by resolved path.  A file not read yet is read by
        the first round, which looks at every file."""
        user_patterns = {pattern for f in all_files for pattern in f.settings.collectives}
        may_hold_site = SiteFilter(self.knowledge, sorted(user_patterns), self.imports)
        # the first round reads every file: it learns what the tree's getters define as it goes
        getters = None if self.workers.spans_known else GetterScan()
        by_path: dict = {}  # the readable files, by resolved path (once the first round read them)
        needles: set = set()
        remaining = list(all_files)
        rounds = 0
        while remaining:
            rounds += 1
            uses_wrapper = None
            if rounds > 1:
                definitions = WrapperDefinitions(self.facts.values(), self.known_wrappers)
                uses_wrapper = WrapperPrefilter(needles, definitions, self.imports)
            rest: list = []

            def chosen(candidates=remaining, first=rounds == 1, uses_wrapper=uses_wrapper, rest=rest):
                # a generator: the workers start on the first files while the
                # prefilter is still reading the rest
                scan = getters if first else None
                for f in candidates:
                    if f.data is None:
                        if f.problem is None:
                            read_file(f)
                        if f.data is None:  # reported with its problem, never parsed
                            continue
                    if scan is not None:
                        scan.add(f.data)
                    if (f.explicit and f.report) or (first and may_hold_site(f.data)) \
                            or (uses_wrapper is not None and uses_wrapper.search(f.data)):
                        yield f
                    else:
                        rest.append(f)
                if scan is not None:
                    self.workers.learn_spans(scan.spans())
                    self.knowledge = self.workers.context.knowledge

            # Files parsed before a wrapper they call was known get a deeper
            # look in the same batch as the next round's files (one wait fewer).
            with timeline.span("deeper look"):
                deeper = [] if rounds == 1 else self._deeper_look(by_path)
                self.workers.keep_trees(f.real for f in deeper)
            if self.bar is not None:
                self.bar.start(f"analysing, round {rounds}", 0)
            with timeline.span(f"round {rounds}"):
                found_any = self._parse_and_merge(itertools.chain(deeper, chosen()), deeper)
            if rounds == 1:
                by_path.update((f.real, f) for f in all_files if f.data is not None)
            remaining = rest
            if not found_any:
                break
            with timeline.span("wrappers learnt"):
                new_names = self._learn_wrappers()
            # a wrapper that is itself named like a collective (a coordinator's
            # ``all_reduce``) had its callers selected in the first round
            # a typed wrapper is no needle: its method name alone would select
            # every file calling a method of that name, and the files the
            # rounds parse for their own collectives get their deeper look
            # a module's short-named function is a needle by its name, judged by its module
            # (WrapperDefinitions.function_modules)
            fresh = {n.rpartition(".")[2].encode() for n in new_names
                     if ":" not in n and may_hold_site.needs_comm(n.rpartition(".")[2]) is not False} - needles
            if not fresh:
                break
            needles |= fresh
        # Files summarised before the last wrappers were known get a deeper look.
        for _round in range(MAX_DEEPER_ROUNDS):
            with timeline.span("deeper look"):
                again = self._deeper_look(by_path)
                self.workers.keep_trees(f.real for f in again)
            if not again:
                break
            if self.bar is not None:
                self.bar.start("re-analysing callers of newly found wrappers", 0)
            with timeline.span("deeper round"):
                self._parse_and_merge(again, again)
            with timeline.span("wrappers learnt"):
                if not self._learn_wrappers():
                    break
        self.workers.keep_trees(())
        with timeline.span("deciding callees and classes"):
            # Whether a callee raises on some ranks only, and what it returns, is
            # read off its summary: summarise those defined in files no round parsed.
            callees = self._deciding_callees(by_path)
            # A class whose object decides a collective is read where it is defined.
            classes = self._deciding_classes(by_path)
        wanted = dict(classes)
        for f, names in callees:  # one extraction of a file chosen both ways
            if f.real in wanted:
                wanted[f.real] = (f, wanted[f.real][1] | names)
        callees = [(f, names) for f, names in callees if f.real not in wanted]
        if wanted or callees:
            # One map for both kinds (a round waits for its last file: two
            # maps one after the other waited twice); the facts of a class's
            # file join the program's, a callee's are kept apart.
            if self.bar is not None:
                self.bar.start("reading classes and callees whose objects, exceptions or results decide a "
                               "collective", 0)
            files = [f for f, _names in wanted.values()] + [f for f, _names in callees]
            raising = {real: names for real, (_f, names) in wanted.items()}
            raising.update((f.real, names) for f, names in callees)
            with timeline.span("class and callee files"):
                parsed = self._parse(files, raising=raising)
            for facts in parsed:
                if facts.path not in wanted:
                    self.callee_facts[facts.path] = facts
                    continue
                before = self.facts.get(facts.path)
                if before is not None:  # parsed for its classes only
                    facts.defined_names = facts.defined_names | before.defined_names
                self.facts[facts.path] = facts
        return self.facts

    def _deep_sites(self):
        """The call sites of every function analysed in depth, in the facts'
        order."""
        for facts in self.facts.values():
            for fn in facts.functions:
                if fn.deep:
                    for variant in fn.variants.values():
                        yield from variant.sites

    def _unparsed_modules(self, by_path: dict) -> dict:
        """Dotted module -> SourceFile of the read files no round parsed (or
        parsed for their classes only)."""
        return {self.module_of(path): f for path, f in by_path.items()
                if path not in self.facts or self.facts[path].skipped}

    def _deciding_callees(self, by_path: dict) -> list:
        """The callees whose exception decides whether a collective runs (a
        ``RaisedBy`` atom in the conditions of a call site of a function
        analysed in depth), or whose result does (a ``CallResult`` atom
        there: ``if pg_utils.is_parallel(group):``), that a read file no
        round parsed (or parsed for its classes only) defines at its top
        level: ``[(SourceFile, the qualified names)]``, in path order."""
        wanted: set = set()
        seen: set = set()
        for site in self._deep_sites():
            for cond in site.conds:
                if id(cond.atoms) not in seen:
                    seen.add(id(cond.atoms))
                    deciding_definitions(cond.atoms, wanted, seen)
        if not wanted:
            return []
        unparsed = self._unparsed_modules(by_path)
        chosen: dict = {}
        for module, qualname in sorted(wanted):
            found = unparsed.get(module)
            top = qualname.partition(".")[0]
            if found is not None and _top_definition(rb"(?:async[ \t]+)?(?:def|class)", top)(found.data):
                chosen.setdefault(found.real, (found, set()))[1].add(qualname)
        return [(chosen[real][0], frozenset(chosen[real][1])) for real in sorted(chosen)]

    def _deciding_classes(self, by_path: dict) -> dict:
        """The classes of the tree that code analysed in depth constructs, or
        calls a classmethod of, where that call's result reaches a condition
        of a call site or is handed to a call (directly, or as what a
        function of the analysed files returns), defined at the top level of
        a read file no round parsed (or parsed for its classes only): resolved
        path -> ``(SourceFile, the class's name and the methods called)``.
        Unread, the class is unknown: the call's result is every argument at
        once and every attribute read of it all of them (a settings object's
        degree carried the model path chosen on this rank).  Read, each
        field holds what was stored into it.  A class reached through a
        package whose ``__init__.py`` re-exports it is looked for in the
        modules under that package (the one defining it, as
        :meth:`~cslint.analysis.resolution.Resolver.class_under_package`
        reads it)."""
        functions: dict = {}
        for facts in self.facts.values():
            for fn in facts.functions:
                functions.setdefault((fn.module, fn.qualname), []).append(fn)
        made: set = set()
        seen: set = set()
        values: list = []
        for site in self._deep_sites():
            for atoms in [cond.atoms for cond in site.conds] + list(site.args) \
                    + [atoms for _keyword, atoms in site.kwargs]:
                if id(atoms) not in seen:
                    seen.add(id(atoms))
                    values.append(atoms)
        constructed_classes(values, functions, made, seen, _MethodsCalled(self.facts.values()))
        if not made:
            return {}
        unparsed = self._unparsed_modules(by_path)
        modules = sorted(unparsed)
        chosen: dict = {}
        for dotted in sorted(made):
            parts = dotted.split(".")
            for split in range(len(parts) - 1, max(len(parts) - 3, 0), -1):
                module, name = ".".join(parts[:split]), parts[split]
                method = parts[split + 1:]
                if not name[:1].isupper():
                    continue
                defines = _class_definition(name)
                found = unparsed.get(module)
                if found is None or not defines(found.data):
                    # a package re-exporting the class: the one module under it defining it
                    under = [unparsed[m] for m in _under_package(modules, module) if defines(unparsed[m].data)]
                    found = under[0] if len(under) == 1 else None
                if found is not None:
                    names = chosen.setdefault(found.real, (found, set()))[1]
                    names.add(name)
                    names.update(f"{name}.{m}" for m in method)
                    break
        return {real: (f, frozenset(names)) for real, (f, names) in sorted(chosen.items())}

    def _parse_and_merge(self, files, deeper: list) -> bool:
        """Extract ``files`` (those in ``deeper`` as re-analysis patches of
        their earlier facts); False when there was nothing to extract."""
        earlier = {f.real: self.facts[f.real] for f in deeper}
        parsed = self._parse(files, earlier)
        for facts in parsed:
            before = earlier.get(facts.path)
            self.facts[facts.path] = facts if before is None else merge_partial(before, facts)
        return bool(parsed)

    def _deeper_look(self, by_path: dict) -> list:
        """The read files whose facts summarised a function that calls a
        wrapper known now."""
        wrappers = KnownWrappers(self.known_wrappers)  # split once, not once per file
        return [by_path[path] for path, facts in self.facts.items()
                if facts.error is None and path in by_path
                and needs_deeper_look(facts, wrappers, by_path[path].data)]

    def _learn_wrappers(self) -> set:
        """Add the names of the functions that issue a collective to the
        known wrappers; the ones not known before (the next round's needles)."""
        names = set()
        for facts in self.facts.values():
            names |= wrapper_names(facts, self.knowledge.ambiguous_names)
            names |= typed_wrapper_names(facts, self.knowledge.ambiguous_names)
        known = self.known_wrappers | names
        inherited = inherited_wrapper_names(self.facts.values(), known, self.knowledge.ambiguous_names)
        while inherited - known:  # a subclass of a subclass: the chain is followed to its end
            known |= inherited
            inherited = inherited_wrapper_names(self.facts.values(), known, self.knowledge.ambiguous_names)
        names = known
        names -= self.known_wrappers
        self.known_wrappers |= names
        return names

    def _parse(self, files, earlier: Optional[dict] = None, raising: Optional[dict] = None) -> list:
        """Facts of ``files`` (an iterable; from the cache or extracted by
        workers).  With ``earlier`` facts of the same bytes, only functions
        that the known wrappers now make deep are extracted, as patches for
        ``merge_partial``.  ``raising``: resolved path -> the qualified names of
        the functions to extract there for what they raise alone.  A file is known by its resolved path: the facts
        and their cache entry are the same whatever path the user spelled."""
        out: list = []
        deep = frozenset(self.known_wrappers)
        deep_text = ",".join(sorted(deep))
        presets = self.presets + tuple(f"{group}={'+'.join(sorted(dims))}"
                                       for group, dims in self.knowledge.world.named)
        fact_cache, bar = self.fact_cache, self.bar

        def jobs():
            for f in files:
                only = raising.get(f.real) if raising is not None else None
                already_deep = None
                before = (earlier or {}).get(f.real)
                if before is not None and not before.skipped and before.error is None:
                    already_deep = frozenset(i for i, fn in enumerate(before.functions) if fn.deep)
                module = self.module_of(f.real)
                store = None
                if fact_cache is not None:
                    # the key covers the job below, all of it
                    key = fact_cache.key("facts", f.real, module, f.settings.fingerprint(), ",".join(presets),
                                         deep_text, repr(sorted(already_deep) if already_deep is not None else None),
                                         repr(sorted(only)) if only is not None else "", f.data)
                    cached = fact_cache.get(key)
                    if isinstance(cached, FileFacts):
                        out.append(cached)
                        if bar is not None:
                            bar.expect()
                            bar.advance()
                        continue
                    store = fact_cache.file_for(key)
                yield ParseJob(f.real, f.data, f.settings, module, deep, already_deep, store, only,
                               lazy=store is None and only is None and already_deep is None)

        if fact_cache is not None:
            fact_cache.prepare()
        out += self.workers.map(jobs(), bar)
        for facts in out:  # the pending summaries are worked out where their trees are kept
            for fn in facts.functions:
                if is_pending(fn):
                    fn.filler = self.workers
        return out


def _under_package(modules: list, package: str):
    """The modules of the sorted list ``modules`` under ``package``, in order."""
    prefix = package + "."
    for index in range(bisect.bisect_left(modules, prefix), len(modules)):
        if not modules[index].startswith(prefix):
            break
        yield modules[index]


def _class_definition(name: str):
    """A test of a module's bytes: whether a line of it starts the
    definition of the top-level class ``name`` (``^class NAME\\b`` in
    multi-line mode).  Asked of every module under a package that may
    re-export the class."""
    return _top_definition(rb"class", name)


def _top_definition(keyword: bytes, name: str):
    """A test of a module's bytes: whether a line of it starts with
    ``keyword`` (a regex of the defining keywords) and the name ``name``
    (``^KEYWORD NAME\\b`` in multi-line mode).  Spelled as a search for a
    newline followed by the definition (a literal start lets the regex
    engine skip ahead instead of trying every byte: five times faster on
    vLLM) or the definition at the very start."""
    definition = keyword + rb"[ \t]+" + re.escape(name.encode()) + rb"\b"
    after_newline = re.compile(rb"\n" + definition).search
    at_start = re.compile(definition).match
    return lambda data: after_newline(data) is not None or at_start(data) is not None


def wrapper_names(facts: FileFacts, ambiguous: frozenset = frozenset()) -> set:
    """Names of the functions of a file that issue a collective directly
    (a call, on a receiver the file does not type, of a name under which the
    file attaches one of its deep functions to objects counts as one:
    :func:`~cslint.analysis.attached.attached_reaching`, a context manager's
    ``self.params[0].all_gather(...)``): their callers elsewhere must be
    analysed in depth too.  Only direct
    wrappers spread across files by name (deeper chains are followed within
    a file; a module-level function calling one of its file's spreads with
    its module, :func:`_module_functions_calling`):
    following every transitive caller by name would pull in most of a large
    tree through names such as ``state_dict``.  ``ambiguous`` names (the
    collective names that are also ordinary methods: ``gather``, ``reduce``)
    do not spread either: a ``def reduce`` somewhere would otherwise deepen
    every caller of ``functools.reduce`` and ``Tensor.gather``; calls through
    a communicator are still recognised as collectives directly."""
    out = set()
    attached = attached_reaching(facts.functions)
    issuing: set = set()  # the qualified names of the file's direct wrappers
    for fn in facts.functions:
        if not fn.deep:
            continue
        # a constructor that issues a collective: ``Mailbox(group)`` is the
        # call other files make
        written = called_as(fn.qualname)
        if not written:
            continue
        name = written[-1]
        if name.startswith("<") or name.startswith("__"):
            continue
        if not any(site.collective is not None or attached and calls_attached(site, attached)
                   for v in fn.variants.values() for site in v.sites):
            continue
        issuing.add(fn.qualname)
        short = len(name) < 6 or name in GENERIC_METHODS or name in ambiguous
        if short and (fn.class_key or "." in fn.qualname):
            continue
        # a short, common or ambiguous name (``send``) spreads only with its module:
        # a call another file makes of it through that module, ``p2p.send``
        out.add(module_entry(facts.module, name) if short else name)
    out.update(module_entry(facts.module, name) for name in _module_functions_calling(facts, issuing))
    return out


def _module_functions_calling(facts: FileFacts, issuing: set) -> list:
    """The names of the module-level functions of a file that issue no
    collective themselves but reach one through functions of the file that
    do (``def make_group(): return _plain_group()``, and on some paths only,
    ``if flag: barrier_all()``: a caller elsewhere running it under a
    test that differs between ranks is as wrong), at any depth inside the
    file (``poll_both()`` -> ``poll_one()`` -> ``reduce_flags()`` ->
    ``dist.all_reduce``: the file's own chain, which its extraction already
    follows to make each of them deep).  They spread with their module only
    (:func:`~cslint.analysis.typedcalls.module_entry`): a call another file
    makes through that module or by a name imported from it, never a bare
    name: by name alone, the callers of the callers pull in most of a large
    tree.  (A conditional call made DeepSpeed's ``initialize`` deep, whose
    configuration, read from a file only where its path exists, then
    reached every engine field, 96 findings more, until a configuration
    file the function is handed and only reads counted as the same on every
    rank: analysis/configfiles.py.)"""
    module = facts.module
    candidates = [fn for fn in facts.functions
                  if fn.deep and not fn.class_key and "." not in fn.qualname and fn.qualname not in issuing
                  and not fn.qualname.startswith("<") and not fn.qualname.startswith("__")]
    reaching = set(issuing)
    out = []
    grew = True
    while grew:  # each pass adds the callers of the functions the last one added
        grew = False
        for fn in candidates:
            name = fn.qualname
            if name in reaching:
                continue
            if any(site.ref is not None and site.ref[0] == "func" and site.ref[1] == module
                   and site.ref[2] in reaching for v in fn.variants.values() for site in v.sites):
                reaching.add(name)
                out.append(name)
                grew = True
    return out


def inherited_wrapper_names(all_facts, known, ambiguous: frozenset = frozenset()) -> set:
    """Names of the classes with no constructor of their own that derive,
    directly, from a class whose name is among the ``known`` wrappers (its
    constructor issues a collective): ``TensorExchange(group)`` runs the
    ``__init__`` it inherits, so the call issues that collective as the
    base's own call does.  Named as :func:`wrapper_names` asks."""
    out = set()
    for facts in all_facts:
        for made in facts.classes:
            name = made.name
            if name in known or len(name) < 6 or name in GENERIC_METHODS or name in ambiguous \
                    or not made.bases or not CONSTRUCTORS.isdisjoint(made.methods):
                continue
            if any(_class_name(base) in known for base in made.bases):
                out.add(name)
    return out


def _class_name(base) -> str:
    """The class name a base reference ends in (``("class", "m:Outer.Name")``,
    ``("qual", "pkg.mod.Name")``)."""
    return base[1].rpartition(":")[2].rpartition(".")[2]


def typed_wrapper_names(facts: FileFacts, ambiguous: frozenset = frozenset()) -> set:
    """``module:Class.method`` of the methods of a file that do not issue a
    collective themselves but hand their work to a method of their own class
    that does (through ``self``): typed wrappers, which spread to another
    file's call only where the receiver is an instance of that class
    (:mod:`cslint.analysis.typedcalls`).  Named as :func:`wrapper_names` asks."""
    issuing = {(fn.class_key, fn.qualname.rsplit(".", 1)[-1]) for fn in facts.functions
               if fn.deep and fn.class_key and any(site.collective is not None
                                                   for v in fn.variants.values() for site in v.sites)}
    out = set()
    for fn in facts.functions:
        if not fn.deep or not fn.class_key:
            continue
        name = fn.qualname.rsplit(".", 1)[-1]
        if (fn.class_key, name) in issuing or name.startswith("<") or name.startswith("_") \
                or name in GENERIC_METHODS or len(name) < 6 or name in ambiguous:
            continue
        if any(site.ref is not None and site.ref[0] == "method" and site.ref[1] == fn.class_key
               and (fn.class_key, site.ref[2]) in issuing for v in fn.variants.values() for site in v.sites):
            out.add(typed_entry(fn.class_key, name))
    return out


class KnownWrappers:
    """The known wrapper names split once for :func:`needs_deeper_look`:
    the plain names, and each typed wrapper's method name with the names of
    the classes whose entries have it."""

    def __init__(self, names):
        self.plain = frozenset(name for name in names if ":" not in name and "." not in name)
        typed: dict = {}  # method name -> the class (or module) names (bytes) of its typed entries
        for name in names:
            if ":" in name:
                cls, _, method = name.rpartition(".")
                typed.setdefault(method, set()).add(cls.rpartition(":")[2].encode())
            elif (parts := module_entry_parts(name)) is not None:  # a module's short-named function:
                module, function = parts                                # the file must name the module
                typed.setdefault(function, set()).add(module.rpartition(".")[2].encode())
        self.typed = typed

    def called(self, called_names, data: Optional[bytes]) -> bool:
        """Whether ``called_names`` holds one of the names (a typed
        wrapper's method only where ``data`` names one of its classes at
        all: a receiver can be typed as the class only then)."""
        if not self.plain.isdisjoint(called_names):
            return True
        if data is None:
            return not self.typed.keys().isdisjoint(called_names)
        return any(any(cls in data for cls in self.typed[method])
                   for method in self.typed.keys() & called_names)


def needs_deeper_look(facts: FileFacts, names, data: Optional[bytes] = None) -> bool:
    """Whether a file summarised some function that calls one of ``names``
    (a set of wrapper names, or :class:`KnownWrappers`; a typed wrapper's
    entry by its method's name, where the file's bytes ``data`` name its
    class at all: a receiver can be typed as the class only then).  The
    names the file's summarised functions call are gathered first, so the
    file's bytes are searched only for a class whose method they call."""
    wrappers = names if isinstance(names, KnownWrappers) else KnownWrappers(names)
    if facts.skipped:
        return wrappers.called(facts.called_names, data)
    called: set = set()
    for fn in facts.functions:
        if not fn.deep:
            called |= fn.called_names
    return bool(called) and wrappers.called(called, data)


def deciding_definitions(atoms, out: set, seen: set, results: bool = True) -> None:
    """Add to ``out`` where the callees whose exceptions ``atoms`` read may
    be defined, as ``(module, qualified name)``: an imported name
    ``pkg.mod.Name`` is the function or class ``Name`` of ``pkg.mod``, or
    the method ``mod.Name`` of ``pkg``; and, with ``results``, where the
    module-level functions may be whose results are among ``atoms``
    themselves (``if pg_utils.is_parallel(group):``, not a result nested in
    another value), handed arguments that carry something (``pkg.mod.name``:
    ``name`` of ``pkg.mod``), or handed no arguments at all, wherever the
    result is read (``if ids.my_rank() > 0:``: what the callee returns of its
    own reads is all such a call can bring, ``ProgramReads._callee_returns``).
    Summarising every callee whose result some condition reads took five
    times the files on vLLM."""
    for atom in atoms:
        tag = atom.tag
        if tag == "R":
            ref = atom.ref
            # a call whose arguments carry nothing reads nothing of them (what
            # its callee reads itself is read only for a call with no arguments:
            # ProgramReads._callee_returns)
            if ref.tag == "part" and ref.ref.tag == "qual" and not atom.args and not atom.kwargs:
                ref = ref.ref  # one element of what a call with no arguments returns (``r, w = ids.coords()``)
            if ref.tag == "qual" and (results and atom.fallback or not atom.args and not atom.kwargs):
                head, _, name = ref.dotted.rpartition(".")
                if head:
                    out.add((head, name))
        elif tag == "E" or tag == "T":
            ref = atom.ref
            if ref.tag == "qual":
                head, _, name = ref.dotted.rpartition(".")
                if head:
                    out.add((head, name))
                    owner, _, cls = head.rpartition(".")
                    if owner:
                        out.add((owner, f"{cls}.{name}"))
            elif ref.tag == "func":
                out.add((ref.module, ref.qualname))
        elif (tag == "J" or tag == "C" or tag == "A") and id(atom.inner) not in seen:
            seen.add(id(atom.inner))
            deciding_definitions(atom.inner, out, seen, False)


def constructed_classes(values: list, functions: dict, out: set, seen: set,
                        methods: Optional["_MethodsCalled"] = None) -> None:
    """Add to ``out`` the dotted names of the unresolved calls among the
    atom sets ``values`` whose name has a capitalised part: a class's
    construction or one of its classmethods (``pkg.conf.Settings.for_model``),
    however deep in attribute reads, projections and collective results,
    and in the returns of the analysed functions (``functions``: (module,
    qualified name) -> FuncFacts; ``methods``: what a ``self.m()`` call
    runs, :class:`_MethodsCalled`) the atoms call (a helper building the
    object).  The pending summaries of the functions met are asked ahead
    together, in file order (one at a time, the pass waited on a round trip
    per function), and the returns of each are followed as it comes back
    (:func:`~cslint.analysis.records.settle_ready_pending`), while the
    workers work out the others.  What is added to ``out`` is the same in any
    order."""
    waiting: list = []  # the functions called whose returns are not followed yet
    while values or waiting:
        targets: dict = {}  # id -> function called
        for atoms in values:
            _constructed_calls(atoms, functions, out, seen, targets, methods)
        level = sorted(targets.values(), key=lambda fn: (fn.path, fn.line, fn.key))
        prefetch_pending(level)
        listed = {id(fn) for fn in waiting}
        waiting.extend(fn for fn in level if id(fn) not in listed)
        settle_ready_pending(waiting)
        values = []
        for fn in waiting:
            if is_pending(fn):
                continue
            for variant in fn.variants.values():
                if id(variant.returns) not in seen:
                    seen.add(id(variant.returns))
                    values.append(variant.returns)
        waiting = [fn for fn in waiting if is_pending(fn)]


class _MethodsCalled:
    """The methods a ``self.m()`` call of a class may run: the class's own
    ``m``, and where it defines none (a mixin calling what the class it is
    mixed into defines), the ``m`` of each class of the analysed files
    naming it as a base.  A helper method handing back a new object
    (``return Plan(batch=...)``) is then followed as a module-level helper
    is.  The tables are made when the first method call is met."""

    def __init__(self, all_facts):
        self.all_facts = all_facts
        self.methods: Optional[dict] = None  # (class key, name) -> [FuncFacts]
        self.derived: dict = {}  # class key -> the keys of the classes naming it as a base

    def _made(self) -> dict:
        methods: dict = {}
        keys: dict = {}  # (module, class name) -> class key
        for facts in self.all_facts:
            for cls in facts.classes:
                keys[(cls.module, cls.name)] = cls.key
        for facts in self.all_facts:
            for fn in facts.functions:
                if fn.class_key is not None:
                    methods.setdefault((fn.class_key, fn.qualname.rpartition(".")[2]), []).append(fn)
            for cls in facts.classes:
                for base in cls.bases:
                    key = base.key if base.tag == "class" else \
                        keys.get(tuple(base.dotted.rsplit(".", 1))) if base.tag == "qual" else None
                    if key is not None:
                        self.derived.setdefault(key, []).append(cls.key)
        return methods

    def get(self, class_key: str, name: str) -> list:
        methods = self.methods
        if methods is None:
            methods = self.methods = self._made()
        found = methods.get((class_key, name))
        if found is not None:
            return found
        return [fn for sub in sorted(self.derived.get(class_key, ())) for fn in methods.get((sub, name), ())]


def _constructed_calls(atoms, functions: dict, out: set, seen: set, targets: dict, methods) -> None:
    """:func:`constructed_classes` within one atom set: the class names go
    to ``out``, the analysed functions called to ``targets``."""
    for atom in atoms:
        tag = atom.tag
        if tag == "R":
            ref = atom.ref
            found = ()
            if ref.tag == "func":
                found = functions.get((ref.module, ref.qualname), ())
            elif ref.tag == "method" and methods is not None:
                found = methods.get(ref.class_key, ref.name)
            elif ref.tag == "qual":
                head, _, name = ref.dotted.rpartition(".")
                found = functions.get((head, name), ())
                # (built from arguments that carry something, or from none at all: ``ids.State().leader``,
                # whose fields alone say what it holds)
                if not found and (atom.fallback or not atom.args and not atom.kwargs) \
                        and any(part[:1].isupper() for part in ref.dotted.split(".")):
                    out.add(ref.dotted)
            for fn in found:
                targets.setdefault(id(fn), fn)
        elif (tag == "J" or tag == "C" or tag == "A") and id(atom.inner) not in seen:
            seen.add(id(atom.inner))
            _constructed_calls(atom.inner, functions, out, seen, targets, methods)
