"""The data every part of cslint exchanges: findings, their chains, fix hints.

`analysis/` produces these; `rules/` decide the code and message; `report/`
prints them; `codemods/` locate their edits from them.  Everything here is
plain data (picklable, JSON-serialisable through :meth:`Finding.to_json`) so
findings can cross process boundaries and be cached.

Positions: ``line`` is 1-based, ``column`` is 1-based (as ruff prints them);
``end_line``/``end_column`` delimit the collective call expression (end column
exclusive, 1-based).  ``Span`` uses the same convention.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

JSON_VERSION = 1


@dataclass(frozen=True)
class Span:
    """A source range; 1-based lines and 1-based columns (end exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "end_column": self.end_column}

    @classmethod
    def from_json(cls, data: dict) -> "Span":
        return cls(int(data["line"]), int(data["column"]), int(data["end_line"]), int(data["end_column"]))

    @classmethod
    def of(cls, node: Any) -> "Span":
        """The span of an ``ast`` node (ast columns are 0-based)."""
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = node.col_offset
        return cls(node.lineno, node.col_offset + 1, end_line, end_col + 1)


@dataclass(frozen=True)
class ChainLink:
    """One step of a finding's explanation.

    ``kind`` is one of: ``collective`` (the collective itself), ``call`` (a call
    that reaches the collective), ``condition`` (the controlling branch, exit,
    loop or except), ``flow`` (a value flowing from one name to another) and
    ``source`` (the rank-local origin).
    """

    path: str
    line: int
    note: str
    kind: str = "flow"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "note": self.note}


@dataclass(frozen=True)
class FixHint:
    """Which fix strategy fits, and whether applying it keeps behaviour.

    ``strategy`` is ``always-enter`` or ``consensus``; ``safe`` follows ruff's
    meaning (applying it cannot change what any rank computes);
    ``reason`` says why this strategy was chosen or why no fix is offered.
    """

    strategy: str
    safe: bool
    reason: str = ""

    def to_json(self) -> dict:
        return {"strategy": self.strategy, "safe": self.safe}


@dataclass
class Finding:
    """One collective whose participation depends on rank-local state."""

    code: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    collective: str  # the collective's short name, e.g. "tp_allgather"
    group: str  # process group: world, tp, pp, cp, dp, tp_cp, ...
    chain: list[ChainLink] = field(default_factory=list)
    fix: Optional[FixHint] = None
    # --- facts for consumers (baseline fingerprints, codemods) --------------
    function: str = ""  # qualified name of the enclosing function, "PyExecutor._can_queue"
    condition: str = ""  # normalised source text of the controlling condition
    guard_kind: str = ""  # branch | early-exit | loop | exception
    guard: Optional[Span] = None  # the controlling statement (if/while/for/return/raise/try)
    callee: str = ""  # dotted text of the call at `line`, e.g. "self.dist.tp_allgather"
    api: str = ""  # flavour of the collective API: trtllm | torch | mpi | unknown
    source: str = ""  # short text of the rank-local source, e.g. "self.active_requests"

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)

    def to_json(self) -> dict:
        """The object DESIGN.md's JSON contract specifies (plus extension keys)."""
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "collective": self.collective,
            "group": self.group,
            "chain": [link.to_json() for link in self.chain],
            "fix": self.fix.to_json() if self.fix else None,
            # extensions (compatible: consumers ignore unknown keys)
            "function": self.function,
            "condition": self.condition,
            "guard_kind": self.guard_kind,
            "guard": self.guard.to_json() if self.guard else None,
            "callee": self.callee,
            "api": self.api,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Finding":
        """The finding :meth:`to_json` wrote (``cslint fix --from-json``).

        Raises ``ValueError`` for an object that is not a finding.
        """
        try:
            fix = data.get("fix")
            guard = data.get("guard")
            return cls(
                code=str(data["code"]), path=str(data["path"]), line=int(data["line"]),
                column=int(data["column"]), end_line=int(data["end_line"]), end_column=int(data["end_column"]),
                message=str(data.get("message", "")), collective=str(data.get("collective", "")),
                group=str(data.get("group", "")),
                chain=[ChainLink(str(link["path"]), int(link["line"]), str(link.get("note", "")),
                                 str(link.get("kind", "flow"))) for link in data.get("chain", [])],
                fix=FixHint(str(fix["strategy"]), bool(fix["safe"]), str(fix.get("reason", ""))) if fix else None,
                function=str(data.get("function", "")), condition=str(data.get("condition", "")),
                guard_kind=str(data.get("guard_kind", "")), guard=Span.from_json(guard) if guard else None,
                callee=str(data.get("callee", "")), api=str(data.get("api", "")), source=str(data.get("source", "")),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a finding object ({type(exc).__name__}: {exc})") from exc

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)


@dataclass(frozen=True)
class FileError:
    """A path that could not be read at all (as opposed to a CSL001 finding)."""

    path: str
    message: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class CheckResult:
    """What one `cslint check` run produced."""

    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "version": JSON_VERSION,
            "files": self.files,
            "findings": [f.to_json() for f in sorted(self.findings, key=Finding.sort_key)],
            "errors": [e.to_json() for e in self.errors],
        }

    @classmethod
    def from_json(cls, data: Any) -> "CheckResult":
        """The result :meth:`to_json` wrote; ``ValueError`` for anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
            raise ValueError("expected an object with a `findings` list")
        if data.get("version") != JSON_VERSION:
            raise ValueError(f"unsupported report version {data.get('version')!r} (expected {JSON_VERSION})")
        errors = [FileError(str(e.get("path", "")), str(e.get("message", ""))) for e in data.get("errors", [])]
        return cls(files=int(data.get("files", 0)), findings=[Finding.from_json(f) for f in data["findings"]],
                   errors=errors)
