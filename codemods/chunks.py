"""Parse only what is fixed: the functions that hold findings.

libcst parses about ten times slower than ``ast``, and a codemod only edits
statements inside the functions that hold findings.  So the stdlib ``ast``
finds, for each finding, its outermost enclosing function (or top-level
statement); only that text goes to libcst.  An indented method is kept
verbatim -- no dedent, which could corrupt multi-line strings -- and made
parseable by prefixing one ``if True:`` line per enclosing block, at that
block's own indentation.  Findings keep the file's line numbers: the
chunk's :class:`~codemods.locate.SourceIndex` translates them.  The fixed text is put back by line range, so every
byte outside the edited functions is the original.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from cslint.model import Finding

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Chunk:
    start: int  # first original line (decorators included), 1-based
    end: int  # last original line, inclusive
    text: str  # headers + original lines start..end
    base: int  # file line = chunk line + base
    originals: list[Finding] = field(default_factory=list)

    def unwrap(self, code: str) -> str:
        """The fixed text of original lines start..end (the headers dropped)."""
        return "".join(code.splitlines(keepends=True)[self.start - 1 - self.base:])


@dataclass
class ChunkedSource:
    lines: list[str]  # original lines without line ends (for quoting)
    kept: list[str]  # original lines with their ends
    chunks: list[Chunk]
    top_level_names: set[str]
    import_after: int  # imports go after this original line (0: at the top)
    newline: str

    def splice(self, replacements: list[tuple[Chunk, str]], imports: list[str]) -> str:
        by_start = {chunk.start: (chunk, text) for chunk, text in replacements}
        out: list[str] = []
        if self.import_after == 0:
            out.extend(line + self.newline for line in imports)
        line = 1
        while line <= len(self.kept):
            if line in by_start:
                chunk, text = by_start[line]
                out.append(text)
                line = chunk.end + 1
                continue
            out.append(self.kept[line - 1])
            if line == self.import_after and imports:
                if not self.kept[line - 1].endswith(("\n", "\r")):
                    out.append(self.newline)
                out.extend(text + self.newline for text in imports)
            line += 1
        return "".join(out)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])


def _child_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    blocks = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            blocks.append(value)
    for handler in getattr(node, "handlers", []) or []:
        blocks.append(handler.body)
    for case in getattr(node, "cases", []) or []:
        blocks.append(case.body)
    return blocks


def _chunk_node(tree: ast.Module, line: int) -> tuple[ast.stmt | None, list[ast.stmt]]:
    """(outermost function holding `line` or top-level-ish statement, its enclosing statements)."""
    ancestors: list[ast.stmt] = []
    blocks = [tree.body]
    while True:
        hit = None
        for block in blocks:
            for stmt in block:
                if _first_line(stmt) <= line <= (stmt.end_lineno or stmt.lineno):
                    hit = stmt
                    break
            if hit:
                break
        if hit is None:
            return (ancestors.pop() if ancestors else None), ancestors
        if isinstance(hit, _FUNCTIONS):
            return hit, ancestors
        children = _child_blocks(hit)
        inner = [s for b in children for s in b if _first_line(s) <= line <= (s.end_lineno or s.lineno)]
        if not inner:
            return hit, ancestors
        ancestors.append(hit)
        blocks = children


def split_chunks(source: str, findings: list[Finding]) -> ChunkedSource:
    """Group findings by the function text that must be parsed; raises SyntaxError."""
    tree = ast.parse(source)
    kept = source.splitlines(keepends=True)
    lines = [line.rstrip("\r\n") for line in kept]
    newline = "\r\n" if "\r\n" in source else "\n"
    chunks: dict[tuple[int, int], Chunk] = {}
    for finding in findings:
        node, ancestors = _chunk_node(tree, finding.line)
        if node is None:
            node, ancestors = tree.body[0] if tree.body else None, []
            if node is None:
                continue
        start, end = _first_line(node), node.end_lineno or node.lineno
        key = (start, end)
        if key not in chunks:
            header = "".join(_indent_of(lines[a.lineno - 1]) + "if True:" + newline for a in ancestors)
            text = header + "".join(kept[start - 1:end])
            chunks[key] = Chunk(start, end, text, base=start - 1 - len(ancestors))
        chunks[key].originals.append(finding)
    ordered = sorted(chunks.values(), key=lambda c: c.start)
    # a chunk nested in another (should not happen: chunks are outermost) is merged away
    merged: list[Chunk] = []
    for chunk in ordered:
        if merged and chunk.start <= merged[-1].end:
            merged[-1].originals.extend(chunk.originals)
            continue
        merged.append(chunk)
    names, import_after = _imports(tree, merged[0].start if merged else len(kept) + 1)
    return ChunkedSource(lines, kept, merged, names, import_after, newline)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _imports(tree: ast.Module, first_chunk: int) -> tuple[set[str], int]:
    """Names bound by top-level imports, and the line after which to add new ones."""
    names: set[str] = set()
    after = 0
    for index, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                names.add(alias.asname or alias.name.split(".")[0])
            if (stmt.end_lineno or stmt.lineno) < first_chunk:
                after = stmt.end_lineno or stmt.lineno
        elif index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str) and after == 0:
            after = stmt.end_lineno or stmt.lineno
    return names, after
