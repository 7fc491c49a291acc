"""What a group word spans in the analysed tree, read off the tree's own getter.

The presets read a group by its name: ``dp_tp`` spans ``{dp, tp}``, as
Megatron's data-and-tensor-parallel groups do.  A tree may define the same
word otherwise: SGLang's ``get_dp_tp_group()`` returns the attention-TP group
with attention DP and the TP group without, the TP ranks of one DP rank
either way, so a value agreed over TP is alike in it.  Where every
module-level ``get_<word>_group()`` of the tree takes no parameters and every
``return`` of it names groups the presets know by their text (arms of a
conditional expression each), ``<word>`` spans the union of what those groups
span; a getter with a parameter, without a return, or returning anything else
leaves the preset's reading.  Only words that are groups the presets name are
learnt (``get_indexer_cp_group()`` returning the TP group says nothing about
``cp``).

The first prefilter round scans each file's bytes as it reads them
(:class:`GetterScan`), so the spans are known once it has read the last file;
the workers extract the files chosen before that meanwhile, and extract again
those whose extraction asked the span of a word learnt
(:meth:`~cslint.engine.workers.Workers.learn_spans`).  With the fact cache,
every file is read first and the spans, known before any job, enter the key of
every cached fact (:attr:`~cslint.presets.World.named`).
"""

from __future__ import annotations

import ast
import re
from typing import Iterable, Optional

from ..presets import GROUP_SPANS, group_from_text

# a getter's definition, matched where a line starts with ``def get_``
# (found with bytes.find: a regex anchored on ``^`` tries every byte)
_GETTER = re.compile(rb"def get_(\w+?)_group\(")
# the next line that starts a top-level statement (not a comment, not a blank)
_TOP_LEVEL = re.compile(rb"^[^\s#]", re.M)


class GetterScan:
    """The group words the getters of the files scanned so far define
    (see the module docstring); files may come in any order: a word's spans
    are a union, and a getter not understood leaves the word for good."""

    def __init__(self):
        self._found: dict = {}  # word -> the union of its getters' spans, None once one is not understood

    def add(self, data: Optional[bytes]) -> None:
        """Scan one file's bytes (None: a file that could not be read)."""
        if not data:
            return
        for start in _line_starts(data, b"def get_"):
            match = _GETTER.match(data, start)
            if match is not None:
                self._add_getter(data, match)

    def _add_getter(self, data: bytes, match) -> None:
        found = self._found
        word = match.group(1).decode("ascii", "replace")
        if word not in GROUP_SPANS or word == "world" or found.get(word, ()) is None:
            return
        dims = _getter_span(data, match.start(), match.end())
        found[word] = None if dims is None else found.get(word, frozenset()) | dims

    def spans(self) -> tuple:
        """``(group, dimensions)`` for each group word whose getters all
        define it otherwise than the presets read it, sorted."""
        # a word its getters define as the presets read it changes nothing (nor any cache key)
        return tuple(sorted((word, dims) for word, dims in self._found.items()
                            if dims is not None and dims != GROUP_SPANS[word]))


def _line_starts(data: bytes, prefix: bytes):
    """The offsets of the lines of ``data`` that start with ``prefix``."""
    if data.startswith(prefix):
        yield 0
    needle = b"\n" + prefix
    at = data.find(needle)
    while at >= 0:
        yield at + 1
        at = data.find(needle, at + len(needle))


def learned_spans(datas: Iterable[Optional[bytes]]) -> tuple:
    """:meth:`GetterScan.spans` of the files' bytes ``datas``."""
    scan = GetterScan()
    for data in datas:
        scan.add(data)
    return scan.spans()


def _getter_span(data: bytes, start: int, body_from: int) -> Optional[frozenset]:
    """What the getter defined at ``start`` returns spans, or None."""
    following = _TOP_LEVEL.search(data, body_from)
    source = data[start:following.start() if following else len(data)]
    try:
        tree = ast.parse(source.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if len(tree.body) != 1 or type(tree.body[0]) is not ast.FunctionDef:
        return None
    getter = tree.body[0]
    arguments = getter.args
    if arguments.args or arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg or arguments.kwarg:
        return None
    returned = [leaf for value in _returned_values(getter.body) for leaf in _arms(value)]
    if not returned:
        return None
    spans = frozenset()
    for leaf in returned:
        group = group_from_text(ast.unparse(leaf)) if leaf is not None else None
        if group is None or group not in GROUP_SPANS:
            return None
        spans |= GROUP_SPANS[group]
    return spans


def _returned_values(body: list) -> list:
    """The values of the ``return`` statements of a function body, nested
    functions and classes aside (a bare ``return`` gives None)."""
    out: list = []
    stack = list(body)
    while stack:
        node = stack.pop()
        if type(node) is ast.Return:
            out.append(node.value)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def _arms(value: Optional[ast.expr]) -> list:
    """The expressions a returned value may be: both arms of a conditional expression."""
    if type(value) is ast.IfExp:
        return _arms(value.body) + _arms(value.orelse)
    return [value]
