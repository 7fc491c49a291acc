"""Find the libcst nodes a finding points at.

Codemods never re-derive the analysis: a finding already says where the
collective call is (``line``/``column`` .. ``end_line``/``end_column``) and
where its controlling statement is (``guard``).  This module turns those
positions back into libcst nodes, with the chain of ancestors from the module
down, so the rewrites can see which block, statement and function a node lives
in.

Positions come from libcst's ``PositionProvider`` (1-based lines, 0-based
columns); findings use 1-based columns, hence the ``- 1`` below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from cslint.model import Finding

Path = tuple[cst.CSTNode, ...]  # ancestors, module first, the node itself last

EXIT_TYPES = (cst.Return, cst.Raise, cst.Continue, cst.Break)
LOOP_TYPES = (cst.For, cst.While)


class LocateError(Exception):
    """The finding's positions do not match the source (stale finding, edited file)."""


class SourceIndex:
    """A parsed module plus the positions of its nodes."""

    def __init__(self, module: cst.Module, *, top_level_names: set[str] | None = None, line_base: int = 0,
                 file_text: str | None = None) -> None:
        # unsafe_skip_copy keeps node identity: edits are keyed by the very
        # nodes we locate here.
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(PositionProvider)
        # When the module is a chunk of a larger file, `top_level_names` are
        # what the file's imports bind, and a chunk line + `line_base` is the
        # file line (a chunk starts deep in its file).
        self.top_level_names = top_level_names
        self.line_base = line_base
        # the whole file's text, for rewrites that also edit other functions (None: not at hand)
        self.file_text = file_text

    def range(self, node: cst.CSTNode) -> CodeRange | None:
        return self.positions.get(node)

    def paths_at(self, file_line: int, column0: int) -> list[Path]:
        """Every node path whose node starts exactly at (file line, column0).

        Descends only into children whose range contains the position, so the
        cost is the depth of the tree times the width of the visited levels.
        """
        line = file_line - self.line_base
        found: list[Path] = []
        stack: list[Path] = [(self.module,)]
        while stack:
            path = stack.pop()
            node = path[-1]
            for child in children(node):
                rng = self.positions.get(child)
                if rng is None:
                    continue
                if _before(line, column0, rng.start.line, rng.start.column):
                    continue
                if not _before(line, column0, rng.end.line, rng.end.column):
                    continue
                child_path = path + (child,)
                if rng.start.line == line and rng.start.column == column0:
                    found.append(child_path)
                stack.append(child_path)
        return found

    def call_path(self, finding: Finding) -> Path:
        """The path to the collective call (or wrapper call) of a finding."""
        candidates = [p for p in self.paths_at(finding.line, finding.column - 1) if isinstance(p[-1], cst.Call)]
        if not candidates:
            raise LocateError(f"no call starts at {finding.line}:{finding.column}")
        exact = [
            p for p in candidates
            if (self.positions[p[-1]].end.line, self.positions[p[-1]].end.column)
            == (finding.end_line - self.line_base, finding.end_column - 1)
        ]
        if finding.callee:
            # a stale finding (file edited since the check) must not rewrite another call
            exact = [p for p in exact if dotted_name(p[-1].func) == finding.callee]
            candidates = [p for p in candidates if dotted_name(p[-1].func) == finding.callee]
            if not candidates:
                raise LocateError(f"no call of `{finding.callee}` starts at {finding.line}:{finding.column}")
        if exact:
            return exact[-1]
        return candidates[-1]  # innermost: `a.f(x).g(y)` starts two calls at `a`

    def guard_path(self, finding: Finding) -> Path | None:
        """The path to the controlling statement of a finding, if it has one."""
        if finding.guard is None:
            return None
        paths = self.paths_at(finding.guard.line, finding.guard.column - 1)
        statements = [p for p in paths if isinstance(p[-1], (cst.BaseStatement, cst.BaseSmallStatement, cst.ExceptHandler))]
        if not statements:
            # ast puts an `elif` at its test's keyword; libcst may start it elsewhere
            raise LocateError(f"no statement starts at {finding.guard.line}:{finding.guard.column}")
        # the deepest: `return x` is both a SimpleStatementLine and a Return
        return statements[-1]


def _before(l1: int, c1: int, l2: int, c2: int) -> bool:
    """(l1, c1) strictly before (l2, c2)."""
    return (l1, c1) < (l2, c2)


def dotted_name(node: cst.CSTNode) -> str:
    """`self.dist.tp_allgather` for an Attribute/Name chain, else ''."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return ""


def enclosing_function(path: Path) -> cst.FunctionDef | None:
    for node in reversed(path[:-1]):
        if isinstance(node, cst.FunctionDef):
            return node
    return None


def block_of(path: Path, depth: int) -> tuple[cst.CSTNode, int]:
    """For the statement at ``path[depth]``: its block owner and index in it.

    The owner is an ``IndentedBlock`` or the ``Module`` (a one-line suite
    ``if x: return`` is a ``SimpleStatementSuite``; its body holds small
    statements and is not a block of statements).
    """
    owner = path[depth - 1]
    body = getattr(owner, "body", None)
    if isinstance(owner, (cst.IndentedBlock, cst.Module)) and isinstance(body, Sequence):
        for index, item in enumerate(body):
            if item is path[depth]:
                return owner, index
    raise LocateError("statement is not in a block")


def statement_depths(path: Path) -> list[int]:
    """Indices into ``path`` of compound/simple statements that sit in a block."""
    return [
        i for i in range(1, len(path))
        if isinstance(path[i], cst.BaseStatement) and isinstance(path[i - 1], (cst.IndentedBlock, cst.Module))
    ]


def common_block(a: Path, b: Path) -> tuple[cst.CSTNode, int, int, int, int] | None:
    """The deepest block holding both paths' statements.

    Returns (owner, depth_in_a, index_a, depth_in_b, index_b) where the
    depths point at the two distinct top statements inside that block.
    """
    best = None
    for da in statement_depths(a):
        owner = a[da - 1]
        if da - 1 >= len(b) or b[da - 1] is not owner or da >= len(b):
            continue
        owner_a, ia = block_of(a, da)
        owner_b, ib = block_of(b, da)
        if owner_a is owner_b:
            best = (owner_a, da, ia, da, ib)
    return best


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}
# fields that only ever hold whitespace, comments, commas and parentheses
_TRIVIA = ("whitespace", "lpar", "rpar", "leading_lines", "comma", "semicolon", "header", "footer",
           "lines_after_decorators", "newline", "colon", "equal", "dot", "lbracket", "rbracket",
           "lbrace", "rbrace", "trailing_whitespace", "operator_whitespace")


def _is_node(value: object) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes that can hold code, read from the node's fields.

    libcst's ``node.children`` runs a visitor per call; reading the dataclass
    fields directly (skipping whitespace/punctuation fields) is several times
    cheaper, and the walks here do not depend on the exact order.
    """
    names = _FIELD_NAMES.get(type(node))
    if names is None:
        names = _FIELD_NAMES[type(node)] = tuple(
            f.name for f in dataclasses.fields(node) if not any(t in f.name for t in _TRIVIA)
        )
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if type(value) in (tuple, list):
            found.extend(v for v in value if _is_node(v))
        elif _is_node(value):
            found.append(value)
    return found


def walk(node: cst.CSTNode, *, into_functions: bool = False):
    """Pre-order traversal (not into nested functions/lambdas/classes unless asked)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in reversed(children(current)):
            if not into_functions and isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            stack.append(child)


def parent_map(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """id(child) -> parent for the subtree under ``root`` (nested defs included)."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        for child in children(current):
            parents[id(child)] = current
            stack.append(child)
    return parents
