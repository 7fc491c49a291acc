"""Apply the fix strategies to the findings of a `cslint check` run.

    plan = plan_fixes(check_paths(["executor.py"]))      # nothing written yet
    print(plan.diff())                                    # unified diff, `git apply`-able
    write_fixes(plan)                                     # atomic replace

Per file: parse once with libcst, locate every finding by its positions,
group findings that interact (same guard; early exits before the same
collectives in one block), let the strategy plan one statement-level edit per
group, drop groups whose edits overlap (refused together), splice the edits
into the tree in one pass and check the result parses.  Every finding ends up
in exactly one of ``applied``/``refused``; none is dropped silently.

``strategy``: ``auto`` (always-enter for early exits with an inferable
neutral value, consensus otherwise), ``always-enter`` or ``consensus``.
``exit_mode``: ``keep-local`` (default) or ``decide-from-gathered``; see
:mod:`codemods.always_enter_rewrite`.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
import tempfile
from dataclasses import dataclass, field

import libcst as cst

from cslint.diffs import unified_diff
from cslint.decoding import DecodedSource, SourceDecodeError, read_source
from cslint.engine.discovery import FIX_TEMP_PREFIX
from cslint.model import CheckResult, Finding
from cslint import paths
from cslint.rules import get_rule

from .always_enter_rewrite import EXIT_MODES, plan_always_enter
from .chunks import Chunk, split_chunks
from .consensus_rewrite import consensus_guard, plan_consensus
from .locate import SourceIndex
from .propagate_rewrite import add_fields, apply_companions, class_file_edits, plan_propagate
from .sites import Edit, FunctionScope, Plan, Refused, Site, guard_top, locate

ALWAYS_ENTER, PROPAGATE, CONSENSUS = "always-enter", "propagate", "consensus"
STRATEGIES = ("auto", ALWAYS_ENTER, PROPAGATE, CONSENSUS)


@dataclass
class AppliedFix:
    finding: Finding
    strategy: str
    safe: bool
    reason: str
    #: what every rank of the group does at the site after the rewrite
    effect: str = ""


@dataclass
class RefusedFix:
    finding: Finding
    reason: str


@dataclass
class FileFix:
    path: str
    original: str
    fixed: str
    applied: list[AppliedFix] = field(default_factory=list)
    refused: list[RefusedFix] = field(default_factory=list)
    #: fixes labelled unsafe that were not applied (``unsafe=False``)
    held_back: list[AppliedFix] = field(default_factory=list)
    #: class files a propagate fix adds a field to: path -> companions
    class_fields: dict = field(default_factory=dict)
    #: the file's own encoding (PEP 263 declaration or byte order mark): ``--write`` keeps it
    encoding: str = "utf-8"

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


@dataclass
class FixPlan:
    files: list[FileFix] = field(default_factory=list)

    @property
    def applied(self) -> list[AppliedFix]:
        return [a for f in self.files for a in f.applied]

    @property
    def refused(self) -> list[RefusedFix]:
        return [r for f in self.files for r in f.refused]

    @property
    def held_back(self) -> list[AppliedFix]:
        return [h for f in self.files for h in f.held_back]

    def diff(self, base_dir: str | None = None) -> str:
        """A unified diff of every changed file, `a/`/`b/` paths relative to ``base_dir``."""
        return "".join(unified_diff(f.original, f.fixed, paths.relative_posix(f.path, base_dir))
                       for f in self.files if f.changed)


# -- per file -------------------------------------------------------------------------


def fix_source(source: str, path: str, findings: list[Finding], *, strategy: str = "auto",
               exit_mode: str = "keep-local", unsafe: bool = True) -> FileFix:
    """Fix one file's source text; never raises for bad findings (they are refused).

    Only the functions that hold findings are parsed with libcst, each on its
    own (see :mod:`codemods.chunks`); the rest of the file is never touched,
    which keeps it byte-identical and keeps large files fast.

    ``unsafe=False`` applies only fixes labelled safe: the findings whose fix
    is unsafe go to ``held_back``, and the rest are planned again without
    them, so an unsafe edit never rides along with a safe one.  Every finding
    ends in exactly one of ``applied``, ``held_back`` and ``refused``.
    """
    _check_options(strategy, exit_mode)
    plan = _fix_source(source, path, findings, strategy, exit_mode)
    if unsafe:
        return plan
    held_back: list[AppliedFix] = []
    refused: list[RefusedFix] = []
    # Each round drops at least one finding, so this ends.
    while any(not a.safe for a in plan.applied):
        held_back.extend(a for a in plan.applied if not a.safe)
        refused.extend(plan.refused)
        keep = {id(a.finding) for a in plan.applied if a.safe}
        plan = _fix_source(source, path, [f for f in findings if id(f) in keep], strategy, exit_mode)
    plan.held_back = held_back
    plan.refused = refused + plan.refused
    return plan


def _fix_source(source: str, path: str, findings: list[Finding], strategy: str, exit_mode: str) -> FileFix:
    result = FileFix(path=path, original=source, fixed=source)
    mine = []
    for finding in findings:
        why_not = _why_not(finding, strategy, exit_mode)
        if why_not:
            result.refused.append(RefusedFix(finding, why_not))
        else:
            mine.append(finding)
    if not mine:
        return result
    try:
        chunked = split_chunks(source, mine)
    except SyntaxError as exc:
        result.refused.extend(RefusedFix(f, f"the file does not parse: {exc.msg} (line {exc.lineno})") for f in mine)
        return result
    replacements: list[tuple[Chunk, str]] = []
    imports: list[str] = []
    companions: list = []
    for chunk in chunked.chunks:
        try:
            module = cst.parse_module(chunk.text)
        except cst.ParserSyntaxError as exc:
            result.refused.extend(RefusedFix(f, f"the function does not parse with libcst: {exc.message}")
                                  for f in chunk.originals)
            continue
        new_module, applied, refused, wanted, needed = fix_module(
            module, path, chunk.originals, strategy=strategy, exit_mode=exit_mode,
            top_level_names=chunked.top_level_names, line_base=chunk.base, file_text=source,
        )
        result.applied.extend(applied)
        result.refused.extend(refused)
        if applied:
            replacements.append((chunk, chunk.unwrap(new_module.code)))
            imports.extend(wanted)
            companions.extend(needed)
    if not replacements:
        return result
    fixed = chunked.splice(replacements, list(dict.fromkeys(imports)))
    if companions:
        fixed = apply_companions(companions, fixed)
        result.class_fields = class_file_edits(companions)
    try:
        compile(fixed, path, "exec")
    except SyntaxError as exc:  # a bug in a rewrite: keep the file as it was
        moved = result.applied
        result.applied = []
        result.refused.extend(RefusedFix(a.finding, f"internal error: the rewrite does not compile ({exc})") for a in moved)
        return result
    result.fixed = fixed
    return result


def _check_options(strategy: str, exit_mode: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if exit_mode not in EXIT_MODES:
        raise ValueError(f"exit_mode must be one of {', '.join(EXIT_MODES)}, not {exit_mode!r}")


def fix_module(module: cst.Module, path: str, findings: list[Finding], *, strategy: str = "auto",
               exit_mode: str = "keep-local",
               top_level_names: set[str] | None = None, line_base: int = 0, file_text: str | None = None):
    """Fix a parsed module (or a chunk of a file): (new module, applied,
    refused, import lines it needs, edits it needs elsewhere in the file).

    The import lines (``from mpi4py import MPI``...) are not inserted here: a
    chunk has no module top; :func:`fix_source` adds them to the file's text,
    and applies the companion edits (another method's, ``__init__``'s) of a
    propagate fix.  ``line_base`` is the file line of the module's line 0
    (see :mod:`codemods.chunks`); ``file_text`` the whole file's text.
    """
    index = SourceIndex(module, top_level_names=top_level_names, line_base=line_base, file_text=file_text)
    refused: list[RefusedFix] = []
    sites: list[Site] = []
    for finding in sorted(findings, key=Finding.sort_key):
        try:
            sites.append(locate(index, finding))
        except Refused as exc:
            refused.append(RefusedFix(finding, str(exc)))

    scopes: dict[int, FunctionScope] = {}

    def scope_of(site: Site) -> FunctionScope:
        key = id(site.function) if site.function is not None else id(index.module)
        if key not in scopes:
            scopes[key] = FunctionScope(site.function if site.function is not None else index.module)
        return scopes[key]

    plans: list[tuple[Plan, list[Site]]] = []
    for unit in _units(sites, strategy, exit_mode, refused):
        plans.extend(_plan_unit(unit, index, scope_of(unit[0]), strategy, exit_mode, refused))

    plans = _drop_overlaps(plans, refused)
    if not plans:
        return module, [], refused, [], []
    edits = [p.edit for p, _ in plans]
    new_module = _apply_edits(index.module, edits, [_owner_path(p.edit, unit) for p, unit in plans])
    imports = list(dict.fromkeys(imp for e in edits for imp in e.imports))
    applied = [AppliedFix(s.finding, p.strategy, p.safe, p.reason, p.effect) for p, unit in plans for s in unit]
    companions = list(dict.fromkeys(c for e in edits for c in e.companions))
    return new_module, applied, refused, imports, companions


def options_for(finding: Finding, exit_mode: str) -> tuple:
    """The strategies the finding's rule offers, preferred first, with their labels."""
    rule = get_rule(finding.code)
    return rule.fix_options(finding, exit_mode) if rule is not None else ()


def _why_not(finding: Finding, strategy: str, exit_mode: str) -> str:
    """Why the finding cannot be fixed with ``strategy``, or "" when it may be."""
    rule = get_rule(finding.code)
    if rule is None:
        return f"{finding.code} has no automatic fix"
    options = rule.fix_options(finding, exit_mode)
    if not options:
        return rule.no_fix_reason(finding, exit_mode)
    if strategy != "auto" and strategy not in {o.strategy for o in options}:
        return f"{strategy} does not apply: {rule.why_not(finding, strategy, exit_mode)}"
    return ""


def _first_strategy(site: Site, strategy: str, exit_mode: str) -> str:
    return strategy if strategy != "auto" else options_for(site.finding, exit_mode)[0].strategy


def _unit_key(site: Site, strategy: str, exit_mode: str) -> tuple:
    """Findings with the same key are planned and applied (or refused) together."""
    kind = site.finding.guard_kind
    first = _first_strategy(site, strategy, exit_mode)
    if kind == "early-exit" and first == ALWAYS_ENTER:
        owner = guard_top(site)[0]
        return ("block", id(owner))
    if kind in ("early-exit", "branch", "loop"):
        return ("guard", id(consensus_guard(site)[0]))
    return ("site", id(site))  # no shared rewrite exists for these: each is planned (and refused) alone


def _units(sites: list[Site], strategy: str, exit_mode: str, refused: list[RefusedFix]) -> list[list[Site]]:
    units: dict[tuple, list[Site]] = {}
    for site in sites:
        try:
            key = _unit_key(site, strategy, exit_mode)
        except Refused as exc:
            refused.append(RefusedFix(site.finding, str(exc)))
            continue
        units.setdefault(key, []).append(site)
    return list(units.values())


def _plan_unit(unit: list[Site], index: SourceIndex, scope: FunctionScope, strategy: str, exit_mode: str,
               refused: list[RefusedFix]) -> list[tuple[Plan, list[Site]]]:
    """Plans for one unit; what cannot be planned is appended to ``refused`` with the reason.

    The strategies tried, and the label of the one that applies, are the
    rule's (:meth:`cslint.rules.Rule.fix_options`): ``auto`` tries them in the
    rule's order, an explicit strategy only itself.
    """
    offered = [options_for(s.finding, exit_mode) for s in unit]
    names = [o.strategy for o in offered[0] if all(o.strategy in {p.strategy for p in other} for other in offered)]
    if strategy != "auto":
        names = [n for n in names if n == strategy]
    failures: list[str] = []
    for name in names:
        try:
            plans = _plan_with(name, unit, index, scope, exit_mode, refused)
        except Refused as exc:
            failures.append(f"{name} does not fit ({exc})")
            continue
        for plan, group in plans:
            options = [next(o for o in options_for(s.finding, exit_mode) if o.strategy == name) for s in group]
            plan.safe = all(o.safe for o in options)
            why = next((o.reason for o in options if not o.safe), options[0].reason)
            tried = f"auto picked {name} because {'; '.join(failures)}; " if failures else ""
            plan.reason = f"{tried}{plan.reason}; {why}"
        return plans
    if not names:
        failures.append("the findings under this guard have no strategy in common")
    # the strategies the rule did not offer, with the rule's reason: every refusal says why each one fails
    rule = get_rule(unit[0].finding.code)
    tried = set(names)
    for other in (rule.STRATEGIES if rule is not None else ()):
        if other not in tried and (strategy == "auto" or other == strategy):
            why = rule.why_not(unit[0].finding, other, exit_mode)
            if why:
                failures.append(f"{other} does not apply ({why})")
    refused.extend(RefusedFix(s.finding, "; ".join(dict.fromkeys(failures))) for s in unit)
    return []


def _plan_with(name: str, unit: list[Site], index: SourceIndex, scope: FunctionScope, exit_mode: str,
               refused: list[RefusedFix]) -> list[tuple[Plan, list[Site]]]:
    """Plans of strategy ``name`` for the unit (raises Refused when none applies)."""
    if name == ALWAYS_ENTER:
        return [(plan_always_enter(unit, index, scope, exit_mode), unit)]
    if name == PROPAGATE:
        return [(plan_propagate(unit, index, scope), unit)]
    # consensus: one agreed test per guard (the exits of an always-enter block may have several)
    by_guard: dict[int, list[Site]] = {}
    for site in unit:
        by_guard.setdefault(id(consensus_guard(site)[0]), []).append(site)
    if len(by_guard) == 1:
        return [(plan_consensus(unit, index, scope), unit)]
    plans, failed = [], []
    for group in by_guard.values():
        try:
            plans.append((plan_consensus(group, index, scope), group))
        except Refused as exc:
            failed.append((group, exc))
    if not plans:
        raise failed[0][1]
    for group, exc in failed:
        refused.extend(RefusedFix(s.finding, f"consensus does not fit ({exc})") for s in group)
    return plans


def _drop_overlaps(plans: list[tuple[Plan, list[Site]]], refused: list[RefusedFix]) -> list[tuple[Plan, list[Site]]]:
    """Refuse, together, every pair of units whose edits touch the same statements."""
    bad: set[int] = set()
    # edits under different top-level statements cannot touch each other
    buckets: dict[int, list[int]] = {}
    for i, (_, unit) in enumerate(plans):
        buckets.setdefault(id(unit[0].call_path[1]), []).append(i)
    for members in buckets.values():
        for x, i in enumerate(members):
            p, unit_p = plans[i]
            for j in members[x + 1:]:
                q, unit_q = plans[j]
                if _overlap(p.edit, q.edit, unit_q) or _overlap(q.edit, p.edit, unit_p):
                    bad.update((i, j))
    kept = []
    for i, (plan, unit) in enumerate(plans):
        if i in bad:
            lines = ", ".join(str(s.finding.line) for s in unit)
            refused.extend(RefusedFix(s.finding, "its fix overlaps the fix of another finding in the same "
                                                 f"region (lines {lines}); they cannot be fixed together")
                           for s in unit)
        else:
            kept.append((plan, unit))
    return kept


def _overlap(a: Edit, b: Edit, b_sites: list[Site]) -> bool:
    """Same block with intersecting ranges, or b's block nested in a statement a replaces."""
    if a.owner is b.owner:
        return a.start < b.end and b.start < a.end
    replaced = {id(n) for n in a.replaced}
    return any(
        _owner_inside(b.owner, path, replaced)
        for site in b_sites
        for path in (site.call_path, site.guard_path or ())
    )


def _owner_inside(owner: cst.CSTNode, path, replaced: set[int]) -> bool:
    inside = False
    for node in path:
        if id(node) in replaced:
            inside = True
        if node is owner:
            return inside
    return False


def _apply_edits(module: cst.Module, edits: list[Edit], owner_paths: list) -> cst.Module:
    """Splice the edits in, copying only the nodes on the way to an edited block."""
    by_owner: dict[int, list[Edit]] = {}
    for edit in edits:
        by_owner.setdefault(id(edit.owner), []).append(edit)
    dirty: set[int] = set()
    for path in owner_paths:
        dirty.update(id(n) for n in path)

    def rebuild(node: cst.CSTNode) -> cst.CSTNode:
        if id(node) not in dirty:
            return node
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if isinstance(value, cst.CSTNode):
                new = rebuild(value)
                if new is not value:
                    changes[f.name] = new
            elif isinstance(value, (list, tuple)) and any(isinstance(v, cst.CSTNode) for v in value):
                items = [rebuild(v) if isinstance(v, cst.CSTNode) else v for v in value]
                if any(a is not b for a, b in zip(items, value)):
                    changes[f.name] = type(value)(items)
        if id(node) in by_owner:
            body = list(changes.get("body", node.body))
            for edit in sorted(by_owner[id(node)], key=lambda e: e.start, reverse=True):
                body[edit.start:edit.end] = edit.new
            changes["body"] = body
        return node.with_changes(**changes) if changes else node

    return rebuild(module)  # type: ignore[return-value]


def _owner_path(edit: Edit, unit: list[Site]) -> tuple:
    """The ancestors of an edit's block, read off the located paths of its findings."""
    for site in unit:
        for path in (site.call_path, site.guard_path or ()):
            for depth, node in enumerate(path):
                if node is edit.owner:
                    return path[:depth + 1]
    raise AssertionError("an edit's block lies on none of its findings' paths")


# -- many files -------------------------------------------------------------------------


def plan_fixes(result: CheckResult, *, strategy: str = "auto", exit_mode: str = "keep-local",
               unsafe: bool = True) -> FixPlan:
    """Plan fixes for every file of a check result that has findings (nothing is written).

    ``unsafe=False`` applies only fixes labelled safe; the plan's
    ``held_back`` lists the others (see :func:`fix_source`).
    """
    _check_options(strategy, exit_mode)
    by_path: dict[str, list[Finding]] = {}
    for finding in result.findings:
        by_path.setdefault(finding.path, []).append(finding)
    plan = FixPlan()
    for path in sorted(by_path):
        try:
            decoded = read_source(path)  # the decoder of `cslint check`: coding declarations, byte order marks
        except (OSError, SourceDecodeError) as exc:
            fix = FileFix(path=path, original="", fixed="")
            fix.refused = [RefusedFix(f, f"cannot read the file: {exc}") for f in by_path[path]]
            plan.files.append(fix)
            continue
        fix = fix_source(decoded.text, path, by_path[path], strategy=strategy, exit_mode=exit_mode, unsafe=unsafe)
        fix.encoding = decoded.encoding
        plan.files.append(fix)
    _add_class_fields(plan)
    return plan


def _add_class_fields(plan: FixPlan) -> None:
    """The fields propagate fixes add to the classes of the objects they
    carry conditions in (a class may live in a file the plan does not fix)."""
    wanted: dict[str, list] = {}
    for fix in plan.files:
        for path, companions in fix.class_fields.items():
            wanted.setdefault(path, []).extend(companions)
    by_path = {os.path.abspath(f.path): f for f in plan.files}
    for path, companions in sorted(wanted.items()):
        fix = by_path.get(os.path.abspath(path))
        if fix is None:
            decoded = read_source(path)
            fix = FileFix(path=path, original=decoded.text, fixed=decoded.text, encoding=decoded.encoding)
            plan.files.append(fix)
        fix.fixed = add_fields(fix.fixed, list(dict.fromkeys(companions)))


#: ``write_fixes`` stages each file in a temporary named like this beside it:
#: not a ``.py`` name, so an interrupted run never leaves a module behind
#: that a later ``cslint check`` (or any Python tool) would pick up.
TEMP_PREFIX = FIX_TEMP_PREFIX  # discovery also skips this prefix, for leftovers of older versions
TEMP_SUFFIX = ".tmp"


def is_read_only(path: str) -> bool:
    """A file nobody may write (mode bits), or that this process may not:
    ``--write`` leaves it alone rather than replace it behind its mode."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK)


def keep_read_only_files(plan: FixPlan) -> None:
    """Turn the fixes of read-only files into refusals (the file is kept as it is)."""
    for fix in plan.files:
        if fix.changed and is_read_only(fix.path):
            fix.refused.extend(RefusedFix(a.finding, "the file is read-only; not rewritten") for a in fix.applied)
            fix.applied = []
            fix.fixed = fix.original


def write_fixes(plan: FixPlan) -> list[tuple[str, str]]:
    """Replace each changed file atomically, keeping its permission bits.

    A file that cannot be replaced (a read-only file, a directory that does
    not allow new files, a full disk) is left as it was and the others are
    still written; returns ``(path, reason)`` for each file not written.
    """
    not_written = []
    for fix in plan.files:
        if not fix.changed:
            continue
        if is_read_only(fix.path):
            not_written.append((fix.path, "the file is read-only; not rewritten"))
            continue
        try:
            data = DecodedSource(fix.fixed, fix.encoding).encode(fix.fixed)
        except UnicodeEncodeError as exc:
            not_written.append((fix.path, f"the fixed text does not fit the file's encoding ({exc.reason}); "
                                          "not rewritten"))
            continue
        try:
            _replace(fix.path, data)
        except OSError as exc:
            where = os.path.dirname(os.path.abspath(fix.path))
            reason = exc.strerror or str(exc)
            if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EROFS):
                reason = f"cannot write in {where}: {reason}; not rewritten"
            else:
                reason = f"cannot rewrite: {reason}"
            not_written.append((fix.path, reason))
    return not_written


def _replace(path: str, data: bytes) -> None:
    """Write ``data`` to a temporary beside ``path``, then rename it over
    ``path``.  The temporary is removed on any error, Ctrl-C and SIGTERM
    included (the CLI turns SIGTERM into an exception)."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    handle, temp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.path.basename(path)}.", suffix=TEMP_SUFFIX,
                                    dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


# -- the libcst commands ----------------------------------------------------------------


def findings_for_file(path: str) -> list[Finding]:
    """What `cslint check` reports for one file (the standalone libcst commands use this)."""
    from cslint.api import (
        check_paths,  # imported late: the analyzer is not needed to apply plans
    )

    result = check_paths([path], report="per-site")
    target = os.path.abspath(path)
    return [f for f in result.findings if os.path.abspath(f.path) == target]


def run_command_on_module(command, tree: cst.Module, *, strategy: str, exit_mode: str) -> cst.Module:
    """Body of the libcst commands: findings from the analyzer, warnings for refusals.

    Goes through :func:`fix_source` (parsing only the functions with findings),
    then hands libcst the re-parsed result: cheaper on large files than
    resolving positions over the whole module.
    """
    path = command.context.filename
    if not path:
        command.warn("no file name (stdin?): cslint needs a path to analyse; nothing changed")
        return tree
    findings = findings_for_file(path)
    fix = fix_source(tree.code, path, findings, strategy=strategy, exit_mode=exit_mode)
    for refusal in fix.refused:
        command.warn(f"line {refusal.finding.line}: {refusal.finding.code} not fixed: {refusal.reason}")
    for applied in fix.applied:
        label = "safe" if applied.safe else "unsafe"
        command.warn(f"line {applied.finding.line}: {applied.finding.code} fixed ({applied.strategy}, {label}): "
                     f"{applied.reason}")
    return cst.parse_module(fix.fixed) if fix.changed else tree
