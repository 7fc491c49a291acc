"""The byte prefilters: which files are worth a parse.

Round one (:class:`SiteFilter`): could a file hold a collective call site?
Later rounds (:class:`WrapperPrefilter`): does it use a function found to
issue one?

Most files of a large tree never call a collective, and parsing them is most
of what a run would cost.  A plain substring test on the collective names is
cheap but loose: ``broadcast`` occurs in ``broadcast_tensors``, in docstrings
("is broadcast to"), and ``gather``/``reduce`` in every ``torch.gather`` and
``functools.reduce``; on the torch package five in six files it selected held
no collective at all.  So each occurrence of a name is looked at in place:

* it must be a whole identifier that a collective pattern of the loaded
  presets (or the configuration) matches;
* it must be used the way a call site uses it: after a ``.`` (a method or a
  module attribute), in a ``def`` (the file defines it and may call it bare),
  or in an import statement (a bare call can only reach a collective the
  file imports; with a star import every bare use counts);
* a name that counts only on a communicator-looking receiver (``gather``,
  ``reduce``, ``bcast``) needs that receiver in the bytes before its ``.``
  (``dist.gather``, ``self.cpu_group.gather``, ``MPI.COMM_WORLD.bcast``), a
  receiver imported from a communication module (``import
  torch.distributed as td``), or a communicator made in the file
  (``sub = comm.Split(...)``); a bare call needs the name imported from such a
  module.

The test over-approximates what fact extraction recognises (it never drops a
file holding a site that extraction would report, star imports included).
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from typing import Iterable, Optional

from ..analysis.typedcalls import module_entry_parts
from ..presets import AMBIGUOUS_NAMES, Knowledge

_IDENTIFIER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_SPACE = frozenset(b" \t")
_DOT, _OPEN, _CLOSE, _OPEN_SQ, _CLOSE_SQ = b".()[]"

#: Lower-case byte strings that make a receiver look like a communicator; a
#: superset of what fact extraction accepts (``_comm_receiver``), plus the
#: module names of the fixed-receiver patterns (``c10d.gather``).
COMM_TOKENS = (b"dist", b"comm", b"group", b"coordinator", b"mpi", b"nccl", b"gloo", b"world", b"mesh", b"pg",
               b"c10d")

#: Calls that make a communicator (extraction treats the names they are
#: assigned to as communicators).
_COMM_FACTORY_CALLS = (b".Split(", b".Split_type(", b".Dup(", b".Create(", b".Create_group(", b".Clone(",
                       b".Create_cart(", b".Create_graph(", b".Create_intercomm(", b".Merge(", b"new_group(",
                       b"new_subgroups(")


class AnyOf:
    """``AnyOf(needles)(data)``: whether ``data`` holds one of ``needles``
    (bytes), in fewer scans than one per needle.  Each scan of a file for a
    needle reads the whole file, and most files hold none: so a part every
    needle shares (``_parallel_region`` of four wildcard literals) is looked
    for first, then, per group of needles opening alike (``.Create(``,
    ``.Create_group(``, ...), their common opening, and the needles of a
    group only where it is found."""

    #: bytes a needle's group is keyed by; a shared part shorter than this is no gate
    OPENING = 5

    def __init__(self, needles):
        needles = tuple(dict.fromkeys(needles))
        self.needles = needles
        #: an empty needle is in every file (a wildcard tail with no literal part)
        self.anywhere = b"" in needles
        core = _longest_common_part(needles) if len(needles) > 1 else b""
        self.core = core if len(core) >= self.OPENING else b""
        groups: dict = {}
        for needle in needles:
            groups.setdefault(needle[:self.OPENING], []).append(needle)
        #: (the group's common opening, its needles: () where the opening is the one needle)
        self.groups = tuple((os.path.commonprefix(group), tuple(group) if len(group) > 1 else ())
                            for group in groups.values())

    def __call__(self, data: bytes) -> bool:
        if self.anywhere:
            return True
        if self.core and self.core not in data:
            return False
        for opening, members in self.groups:
            if opening in data and (not members or any(needle in data for needle in members)):
                return True
        return False


def _longest_common_part(needles: tuple) -> bytes:
    """The longest byte string every one of ``needles`` holds (the first
    such of the shortest needle, for a tie)."""
    shortest = min(needles, key=len)
    for size in range(len(shortest), 0, -1):
        for start in range(len(shortest) - size + 1):
            part = shortest[start:start + size]
            if all(part in needle for needle in needles):
                return part
    return b""


_MAKES_A_COMMUNICATOR = AnyOf(_COMM_FACTORY_CALLS)


#: Line starts that cannot hold a call (a line inside a string is no call either).
_NOT_CODE = (b"#", b">>>")

_RECEIVER_LOOKBACK = 160  # bytes: a receiver longer than this counts as a communicator


def _looks_like_comm(text: bytes) -> bool:
    lowered = text.lower()
    return any(token in lowered for token in COMM_TOKENS)


class SiteFilter:
    """``SiteFilter(knowledge, user_patterns)(data)``: whether the bytes of a
    file may hold a collective call site (see the module docstring).

    Three scans find the candidate uses, each fast because it is anchored
    on something rare: ``.name`` (the regex engine jumps from dot to dot),
    ``def name`` and the import statements.  A bare call ``name(...)`` can
    only reach a collective that the file imports or defines, so those two
    cover it; a file with a star import is scanned for the bare names too.
    """

    def __init__(self, knowledge: Knowledge, user_patterns: Iterable[str] = (),
                 imports: Optional["ImportStatements"] = None):
        self.knowledge = knowledge
        self.imports = imports or ImportStatements()
        self.user_tails: list = []
        exact: set = set()
        wild: set = set()
        tails = [_tail(spec.pattern) for spec in knowledge.collectives]
        for pattern in user_patterns:
            tail = _tail(pattern)
            self.user_tails.append(tail)
            tails.append(tail)
        for tail in tails:
            if not tail:
                continue
            if any(ch in tail for ch in "*?["):
                wild.add(tail)
            else:
                exact.add(tail.encode())
        exact_name = _trie_pattern(sorted(exact)) if exact else b"(?!)"
        wild_name = b"(?:" + b"|".join(_identifier_pattern(tail) for tail in sorted(wild)) + b")" if wild else b"(?!)"
        name = b"(?:" + exact_name + b"|" + wild_name + b")"
        end = rb"(?![A-Za-z0-9_])"
        self.attribute = re.compile(rb"\.[ \t]*(" + exact_name + b")" + end)
        # a wildcard alternative costs a backtracking run at every dot: it is
        # scanned for only in files that hold a literal part of it
        self.wild_attribute = re.compile(rb"\.[ \t]*(" + wild_name + b")" + end)
        self.wild_literals = tuple(_longest_literal(tail) for tail in sorted(wild))
        self.holds_wild_literal = AnyOf(self.wild_literals)
        self.exact_names = frozenset(exact)
        self.wild_tails = tuple(sorted(wild))
        # no ``\b`` in front: a literal prefix lets the engine skip ahead
        self.definition = re.compile(rb"def[ \t]+(" + name + b")" + end)
        self.word = re.compile(rb"(?<![A-Za-z0-9_])(" + name + b")" + end)
        self._needs_comm: dict = {}

    # -- per identifier ------------------------------------------------------
    def needs_comm(self, word: str) -> Optional[bool]:
        """None: no collective pattern ends in ``word``; True: every pattern
        that does needs a communicator-looking receiver; False: some pattern
        takes any receiver (or none)."""
        try:
            return self._needs_comm[word]
        except KeyError:
            pass
        answer: Optional[bool] = None
        if word in AMBIGUOUS_NAMES:
            answer = True
        elif any(fnmatch.fnmatchcase(word, tail) for tail in self.user_tails):
            answer = False
        else:
            for spec in self.knowledge.candidates("collectives", word):
                receiver = spec.pattern.rsplit(".", 1)[0] if "." in spec.pattern else ""
                free = spec.receiver != "comm" and receiver in ("", "*")
                answer = False if free else (True if answer is None else answer)
                if free:
                    break
        self._needs_comm[word] = answer
        return answer

    def _names_any(self, text: bytes) -> bool:
        """Whether ``text`` holds a collective name as a whole word."""
        words = identifiers(text)
        if not words.isdisjoint(self.exact_names):
            return True
        if not self.holds_wild_literal(text):
            return False
        return any(fnmatch.fnmatchcase(word.decode("ascii", "replace"), tail)
                   for tail in self.wild_tails for word in words)

    # -- per file ------------------------------------------------------------
    def __call__(self, data: bytes) -> bool:
        context = None
        matches = self.attribute.finditer(data)
        if self.holds_wild_literal(data):
            matches = itertools.chain(matches, self.wild_attribute.finditer(data))
        for found in matches:
            word = found.group(1)
            needs = self.needs_comm(word.decode("ascii", "replace"))
            if needs is None:
                continue
            if context is None:
                context = _FileContext(data, self.imports)
            if context.is_site(found.start(1), found.end(1), word, needs):
                return True
        for found in self.definition.finditer(data):
            if found.start() and data[found.start() - 1] in _IDENTIFIER:
                continue  # ``undef x`` or ``redefine``
            if self.needs_comm(found.group(1).decode("ascii", "replace")) is False:
                return True  # the file defines (and may call) a collective-named function
        if context is None:
            context = _FileContext(data, self.imports)
        spans = context.import_spans()
        if spans and self._names_any(b" ".join(data[start:end] for start, end in spans)):
            comm_names = context.comm_imports()
            for start, end in spans:
                for found in self.word.finditer(data, start, end):
                    word = found.group(1)
                    needs = self.needs_comm(word.decode("ascii", "replace"))
                    if needs is False or (needs and word in comm_names):
                        return True
        if b"import *" in data:
            for found in self.word.finditer(data):
                needs = self.needs_comm(found.group(1).decode("ascii", "replace"))
                if needs is not None and context.is_site(found.start(1), found.end(1), found.group(1), needs,
                                                         bare_call_counts=True):
                    return True
        return False


_NOT_IDENTIFIER = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == 0x5F) else 0x20 for c in range(256))


def identifiers(text: bytes) -> set:
    """The identifier-like words of ``text`` (``bytes.translate`` and
    ``split`` run in C: far faster than a word regex)."""
    return set(text.translate(_NOT_IDENTIFIER).split())


def _identifier_pattern(tail: str) -> bytes:
    """A regex for the identifiers an fnmatch tail (``*gather_region``)
    matches."""
    out = b""
    for ch in tail:
        if ch == "*":
            out += rb"[A-Za-z0-9_]*"
        elif ch == "?":
            out += rb"[A-Za-z0-9_]"
        else:
            out += re.escape(ch.encode())
    return out


class _FileContext:
    """What the occurrence test needs to know of the whole file, computed on
    the first occurrence of a collective name."""

    def __init__(self, data: bytes, imports: ImportStatements):
        self.data = data
        self.imports = imports
        self._comm_names: Optional[set] = None
        self._spans: Optional[list] = None
        self._factory: Optional[bool] = None

    def import_spans(self) -> list:
        if self._spans is None:
            self._spans = self.imports.spans(self.data)
        return self._spans

    def comm_imports(self) -> set:
        """The names bound by imports from communication modules."""
        if self._comm_names is None:
            comm_names: set = set()
            for start, end in self.import_spans():
                text = self.data[start:end]
                if not _looks_like_comm(text):
                    continue
                statement = text.lstrip()
                from_import = statement.startswith(b"from")
                names = statement.split(b" import ", 1)[1] if from_import and b" import " in statement \
                    else statement[len(b"import"):]
                for part in names.replace(b"(", b" ").replace(b")", b" ").replace(b"\\", b" ").split(b","):
                    words = part.split(b"#", 1)[0].split()
                    if len(words) >= 3 and words[-2] == b"as":
                        comm_names.add(words[-1])
                    elif words and from_import:
                        comm_names.add(words[0])
                    # a plain ``import torch.distributed`` binds ``torch``:
                    # its uses spell the whole path, which looks like a
                    # communicator already
            self._comm_names = comm_names
        return self._comm_names

    def has_factory(self) -> bool:
        if self._factory is None:
            self._factory = _MAKES_A_COMMUNICATOR(self.data)
        return self._factory

    def on_import_line(self, position: int) -> bool:
        return any(start <= position < end for start, end in self.import_spans())

    def is_site(self, begin: int, end: int, word: bytes, needs_comm: bool, bare_call_counts: bool = False) -> bool:
        data = self.data
        line_start = data.rfind(b"\n", 0, begin) + 1
        first = line_start
        while first < begin and data[first] in _SPACE:
            first += 1
        if data.startswith(_NOT_CODE, first):
            return False  # a comment line, or an interactive example in a docstring
        before = begin - 1
        while before >= 0 and data[before] in _SPACE:
            before -= 1
        after = end
        while after < len(data) and data[after] in _SPACE:
            after += 1
        attribute = before >= 0 and data[before] == _DOT
        called = after < len(data) and data[after] == _OPEN
        if not needs_comm:
            return attribute or called or self.on_import_line(begin)
        comm_names = self.comm_imports()
        if attribute:
            receiver = self._receiver(before)
            if receiver is None or _looks_like_comm(receiver):
                return True
            head = receiver.split(b".", 1)[0].split(b"(", 1)[0].split(b"[", 1)[0]
            return head in comm_names or self.has_factory()
        if called:
            return word in comm_names or bare_call_counts
        return False

    def _receiver(self, dot: int) -> Optional[bytes]:
        """The text before the ``.`` at ``dot`` that names the receiver
        (identifiers, dots, bracketed arguments); None when it runs past the
        look-back limit."""
        data = self.data
        position = dot - 1
        limit = max(0, dot - _RECEIVER_LOOKBACK)
        depth = 0
        while position >= limit:
            byte = data[position]
            if byte in (_CLOSE, _CLOSE_SQ):
                depth += 1
            elif byte in (_OPEN, _OPEN_SQ):
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and byte not in _IDENTIFIER and byte != _DOT:
                break  # inside brackets anything goes; outside, the receiver ends
            position -= 1
        else:
            if position >= 0:
                return None
        return data[position + 1:dot].strip()


def compile_needles(needles: set):
    """A matcher for any of ``needles`` as a whole identifier (a wrapper named
    ``_stream`` must not select every file that mentions ``current_stream``),
    or None without needles.  The regex is a trie (``ab(?:c|d)`` rather than
    ``abc|abd``): ``re`` tries alternatives one by one at every position, so a
    flat alternation of a few hundred wrapper names scanned the tree several
    times slower."""
    words = sorted({n for n in needles if n})
    if not words:
        return None
    # The start of a word is checked after a match: a leading lookbehind
    # would cost the regex its first-byte scan and triple the time.
    return _WholeWords(re.compile(_trie_pattern(words) + rb"(?![A-Za-z0-9_])"))


class _WholeWords:
    """``search`` for a needle that is a whole identifier."""

    def __init__(self, regex):
        self.regex = regex

    def search(self, data: bytes):
        for found in self.regex.finditer(data):
            if found.start() == 0 or data[found.start() - 1] not in _IDENTIFIER:
                return found
        return None


class WrapperPrefilter:
    """Selects the files that use a wrapper name (rounds 2 and later).

    A file can reach another module's function only through an attribute
    (``module.fn``, ``obj.method``) or a name it imports (``from m import
    fn``), or through a star import; a bare ``fn(...)`` anywhere else calls
    the file's own ``fn``.  So a name selects a file where it follows a
    ``.``, where an import statement names it, or anywhere in a file with a
    star import.  Scanning for ``.name`` is also an order of magnitude
    faster than scanning for the bare words: the regex engine jumps from dot
    to dot.  Each attribute use is then judged by its receiver:

    * a wrapper defined only as module-level functions is reached through an
      attribute only on its module (``loss._log_softmax``;
      ``aten._log_softmax`` is another function): the file must import the
      module or spell it before the dot;
    * a method reached through ``self``/``cls``/``super()`` belongs to the
      file's own class hierarchy, so the file must name a class that defines
      the wrapper (or a subclass of one): a mixin's ``_maybe_add_hidden_state``
      called by two dozen models is not the one override that gathers;
    * a method name that several classes define (``dispatch``,
      ``process_weights_after_loading``) cannot be resolved from the name
      alone on any receiver: it too needs the name of a defining class in
      the file;
    * any other receiver (``runner.sync_weights()``) selects.
    """

    def __init__(self, needles: set, definitions: "WrapperDefinitions", imports: Optional["ImportStatements"] = None):
        self.definitions = definitions
        self.imports = imports or ImportStatements()
        self.uses = _Uses(needles)
        self._owner_words: dict = {}
        self._module_words: dict = {}

    def search(self, data: bytes) -> bool:
        uses = self.uses
        if not uses.names:
            return False
        imports: Optional[bytes] = None
        judged: dict = {}  # (name, "module" or "owner") -> verdict, for this file
        for found in uses.attribute.finditer(data):
            if imports is None:
                imports = self.imports.text(data)
            if self._attribute_selects(data, found.start(), found.group(1), imports, judged):
                return True
        if imports is None:
            imports = self.imports.text(data)
        if not identifiers(imports).isdisjoint(uses.names):
            return True
        return b"import *" in data and uses.word.search(data) is not None

    def _attribute_selects(self, data: bytes, dot: int, name: bytes, imports: bytes, judged: dict) -> bool:
        receiver_start = dot
        while receiver_start and data[receiver_start - 1] in _IDENTIFIER:
            receiver_start -= 1
        receiver = data[receiver_start:dot]
        definitions = self.definitions
        modules = definitions.function_modules.get(name)
        if modules is not None:
            if receiver in modules:
                return True
            key = (name, "module")
            if key not in judged:
                judged[key] = self._matcher(self._module_words, name, modules).search(imports) is not None
            return judged[key]
        owners = definitions.method_owners.get(name)
        if owners is None:
            return True
        own_hierarchy = receiver in (b"self", b"cls") or (receiver == b"" and data[max(0, dot - 7):dot] == b"super()")
        if own_hierarchy or name in definitions.shared_methods:
            key = (name, "owner")
            if key not in judged:
                judged[key] = self._matcher(self._owner_words, name, owners).search(data) is not None
            return judged[key]
        return True

    @staticmethod
    def _matcher(memo: dict, name: bytes, words: set):
        found = memo.get(name)
        if found is None:
            found = memo[name] = compile_needles(words)
        return found


class WrapperDefinitions:
    """Where the wrappers found so far are defined (see
    :class:`WrapperPrefilter`):

    * ``function_modules``: a name defined only as functions, never as a
      method -> the last components of the modules that define it;
    * ``method_owners``: a method name -> the names of the classes whose
      method of that name issues a collective, and of their subclasses
      among the analysed files;
    * ``shared_methods``: the method names that two or more classes define.
    """

    def __init__(self, facts_list, names: set):
        facts_list = list(facts_list)
        definers: dict = {}
        for facts in facts_list:
            for cls in facts.classes:
                for method in cls.methods:
                    if method in names:
                        definers.setdefault(method, set()).add(cls.key)
        self.shared_methods = {name.encode() for name, keys in definers.items() if len(keys) >= 2}
        owners: dict = {}
        functions: dict = {}
        methods: set = set(definers)
        for facts in facts_list:
            module_last = facts.module.rsplit(".", 1)[-1].encode()
            for fn in facts.functions:
                name = fn.qualname.rsplit(".", 1)[-1]
                if name not in names:
                    continue
                if fn.class_key:
                    methods.add(name)
                    # (a summary's call sites issue no collective: SummaryWalk._calls)
                    if fn.deep and any(site.collective is not None for v in fn.variants.values() for site in v.sites):
                        owner = fn.class_key.rsplit(":", 1)[-1].rsplit(".", 1)[-1].encode()
                        owners.setdefault(name.encode(), set()).add(owner)
                else:
                    functions.setdefault(name.encode(), set()).add(module_last)
        for entry in names:  # a short-named function spreads with its module alone (gather.wrapper_names)
            parts = module_entry_parts(entry)
            if parts is not None:
                module, function = parts
                functions.setdefault(function.encode(), set()).add(module.rpartition(".")[2].encode())
        self.function_modules = {name: modules for name, modules in functions.items()
                                 if name.decode() not in methods}
        subclasses = _subclasses_by_base_name(facts_list)
        self.method_owners = {name: _with_subclasses(found, subclasses) for name, found in owners.items()}


def _subclasses_by_base_name(facts_list) -> dict:
    """Class name -> names of the classes that list it as a base (bytes)."""
    out: dict = {}
    for facts in facts_list:
        for cls in facts.classes:
            for _kind, text in cls.bases:
                base = text.rsplit(":", 1)[-1].rsplit(".", 1)[-1].encode()
                out.setdefault(base, set()).add(cls.name.encode())
    return out


def _with_subclasses(names: set, subclasses: dict) -> set:
    found = set(names)
    frontier = list(names)
    while frontier:
        for child in subclasses.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


class _Uses:
    """The attribute uses (``.name``) and whole-word uses of a set of names."""

    def __init__(self, names: set):
        words = sorted({n for n in names if n})
        self.names = frozenset(words)
        if words:
            self.attribute = re.compile(rb"\.[ \t]*(" + _trie_pattern(words) + rb")(?![A-Za-z0-9_])")
            self.word = compile_needles(self.names)


def _trie_pattern(words: list) -> bytes:
    trie: dict = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = True  # a needle ends here

    def pattern(node: dict) -> bytes:
        branches = [re.escape(bytes([byte])) + pattern(child)
                    for byte, child in sorted((k, v) for k, v in node.items() if k is not None)]
        if None in node:
            # a needle ends here; longer ones are tried first so that whole
            # words can still match, then the empty alternative
            branches.append(b"")
        if len(branches) == 1:
            return branches[0]
        return b"(?:" + b"|".join(branches) + b")"

    whole = pattern(trie)
    pattern = None  # noqa: F841  the nested function refers to itself: without this, a reference cycle per call
    return whole


def _tail(pattern: str) -> str:
    return pattern.split(":", 1)[0].rsplit(".", 1)[-1]


def _longest_literal(tail: str) -> bytes:
    chunks = [chunk for chunk in re.split(r"[*?\[\]]", tail) if chunk]
    return max(chunks, key=len).encode() if chunks else b""


class ImportStatements:
    """The import statements of each file, found once per run: every
    prefilter round reads those of the files still unparsed.  Keyed by the
    bytes object, which is kept beside its spans so that its id is never
    reused while the entry lives."""

    def __init__(self):
        self._spans: dict = {}

    def spans(self, data: bytes) -> list:
        """(start, end) byte spans of the import statements of ``data``."""
        found = self._spans.get(id(data))
        if found is not None:
            owner, result = found
            if owner is data:
                return result
        spans = import_statements(data)
        self._spans[id(data)] = (data, spans)
        return spans

    def text(self, data: bytes) -> bytes:
        """The import statements of ``data``, one per line."""
        return b"\n".join(data[start:end] for start, end in self.spans(data))


def import_statements(data: bytes) -> list:
    """(start, end) byte spans of the import statements of a file (a
    parenthesised name list runs to its ``)``).  A ``find`` loop: a regex
    anchored at line starts is several times slower on large trees."""
    spans = []
    size = len(data)
    position = data.find(b"import")
    while position >= 0:
        line_start = data.rfind(b"\n", 0, position) + 1
        first = line_start
        while first < position and data[first] in _SPACE:
            first += 1
        line_end = data.find(b"\n", position)
        if line_end < 0:
            line_end = size
        if data.startswith((b"import ", b"from "), first) and (first == position or data.startswith(b"from ", first)):
            end = line_end
            opening = data.find(b"(", position, line_end)
            if opening >= 0 and data.find(b")", opening, line_end) < 0:
                closing = data.find(b")", opening)
                end = size if closing < 0 else closing + 1
            spans.append((first, end))
            position = data.find(b"import", end)
        else:
            position = data.find(b"import", position + 6)
    return spans

