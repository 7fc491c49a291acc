"""Always-enter: every rank enters the collective; a skipping rank sends a neutral value.

For an early exit (CSL102) before a collective::

    if not self.fill_active:                  exit_early = False
        return False                          early_result = None
    status = (done, short)          ==>       if not self.fill_active:
    flags = self.gather(status)                   exit_early = True
    return any(s[1] for s in flags)               early_result = False
                                              if not exit_early:
                                                  status = (done, short)
                                              flags = self.gather(status if not exit_early else (None, False))
                                              if exit_early:
                                                  return early_result
                                              return any(s[1] for s in flags)

The exit is deferred, not removed: the rank that would have left still leaves
right after the collective, with the value it would have returned
(``exit_mode="keep-local"``, the default).  Everything it would have skipped
stays skipped; the only change is its participation.  The neutral value comes
from how the gathered list is consumed (see :mod:`codemods.neutral`).

The alternative, ``exit_mode="decide-from-gathered"``, drops the deferred exit:
the rank continues past the collective and decides from the gathered result
like every other rank (the shape of a status allgather that every rank always
enters).  That changes the exiting rank's result, so those fixes are unsafe,
and they are refused when code after the collective reads locals only the
participating ranks computed.  With ``keep-local`` it is still taken for an
exit that returns a value some caller tests before a collective
(``fix_facts.result_decides_callers``: ``insufficient = self.sync(); if
insufficient: return None``): there a rank keeping its own value would part
from the others at that caller; where it is refused, the exit is deferred.

For a guarded single collective (CSL101) the branch is split around it::

    if P:                                     branch_taken = False
        x = local()                           if P:
        sizes = self.gather(x)       ==>          branch_taken = True
        ok = 0 not in sizes                       x = local()
                                              gathered = self.gather(x if branch_taken else None)
                                              if branch_taken:
                                                  sizes = gathered
                                                  ok = 0 not in sizes

The libcst command (``python -m libcst.tool codemod always_enter.AlwaysEnterCommand PATH``)
is :mod:`codemods.always_enter`.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from cslint.presets import PAYLOAD

from .locate import (
    EXIT_TYPES,
    LOOP_TYPES,
    SourceIndex,
    block_of,
    children,
    walk,
)
from .neutral import ConsumptionAnalyzer, NoNeutral, code_of
from .sites import (
    Edit,
    FunctionScope,
    Plan,
    Refused,
    Site,
    binds,
    block_body,
    conditional_ancestor,
    expression,
    guard_top,
    header_contains,
    is_pure,
    locate,
    parenthesize,
    payload_arg,
    replace_in,
    split_uniform_operands,
    statement,
    substitute,
)

EXIT_MODES = ("keep-local", "decide-from-gathered")


def plan_always_enter(sites: list[Site], index: SourceIndex, scope: FunctionScope, exit_mode: str = "keep-local") -> Plan:
    """Plan the always-enter rewrite of one unit of interacting findings."""
    if exit_mode not in EXIT_MODES:
        raise ValueError(f"exit_mode must be one of {', '.join(EXIT_MODES)}, not {exit_mode!r}")
    kinds = {s.finding.guard_kind for s in sites}
    if kinds == {"early-exit"} and exit_mode == "keep-local" and all(
            s.finding.fix_facts is not None and s.finding.fix_facts.result_decides_callers for s in sites):
        # a caller tests the result: a rank keeping its own value would part from the others there,
        # so it decides from the gathered result too where it can (else its own result, as before)
        try:
            return plan_always_enter(sites, index, scope, "decide-from-gathered")
        except Refused:
            pass
    if kinds == {"early-exit"}:
        others = _other_exit_sites(sites, index)
        if others:
            # the finding names the nearest exit; the others before the collective are deferred with it,
            # or a rank they send out still skips the collective
            try:
                return _ExitRewrite(sites + others, index, scope, exit_mode).plan()
            except Refused:
                pass  # they cannot be deferred together: the finding's own exit alone, as reported
        return _ExitRewrite(sites, index, scope, exit_mode).plan()
    if kinds == {"branch"}:
        return _BranchRewrite(sites, index, scope).plan()
    raise Refused(f"always-enter handles early exits and guarded single collectives, not {', '.join(sorted(kinds))} guards")


def _other_exit_sites(sites: list[Site], index: SourceIndex) -> list[Site]:
    """Sites for the other rank-local exits before each finding's collective
    (``fix_facts.other_exits``), as if each were a finding of its own; exits
    that are already a finding's, or cannot be located, are left out."""
    taken = {(s.finding.guard.line, s.finding.guard.column) for s in sites if s.finding.guard is not None}
    out: list[Site] = []
    for site in sites:
        facts = site.finding.fix_facts
        for guard, text, uniform, operator in (facts.other_exits if facts is not None else ()):
            if (guard.line, guard.column) in taken:
                continue
            taken.add((guard.line, guard.column))
            pseudo = dataclasses.replace(
                site.finding, guard=guard, condition=text,
                fix_facts=dataclasses.replace(facts, uniform_operands=uniform, operator=operator if uniform else "",
                                              other_exits=(), presence=None))
            try:
                out.append(locate(index, pseudo))
            except Refused:
                continue
    return out


# -- shared pieces ---------------------------------------------------------------


class _Collective:
    """One collective statement of a unit and how to rewrite it."""

    def __init__(self, top: cst.BaseStatement, sites: list[Site], index: SourceIndex, scope: FunctionScope) -> None:
        self.top = top
        unique: dict[int, Site] = {}
        for site in sites:  # several findings (one per exit) may name the same call
            unique.setdefault(id(site.call), site)
        self.sites = list(unique.values())
        self.index = index
        self.scope = scope
        self.result_names = self._result_names()
        self.keep_in_place = self.result_names is not None and len(self.sites) == 1
        self.imports: list[str] = []  # module imports the neutral values need

    def _result_names(self) -> list[str] | None:
        """Local names bound to the call's value when the statement is `a = call(...)`/`call(...)`."""
        if not isinstance(self.top, cst.SimpleStatementLine) or len(self.top.body) != 1 or len(self.sites) != 1:
            return None
        small = self.top.body[0]
        call = self.sites[0].call
        if isinstance(small, cst.Expr) and small.value is call:
            return []
        if isinstance(small, cst.Assign) and small.value is call \
                and all(isinstance(t.target, cst.Name) for t in small.targets):
            return [t.target.value for t in small.targets]
        if isinstance(small, cst.AnnAssign) and small.value is call and isinstance(small.target, cst.Name):
            return [small.target.value]
        return None

    def check_hoistable(self) -> None:
        for site in self.sites:
            if not header_contains(self.top, site.call, site.call_path):
                raise Refused(
                    f"the collective at line {site.finding.line} is nested inside a compound statement below the guard"
                )
            if isinstance(self.top, cst.While):
                raise Refused("the collective is in a `while` condition; it cannot be moved out of the loop")
            blocker = conditional_ancestor(site.call_path, self.top)
            if blocker is not None:
                raise Refused(f"the collective is evaluated conditionally inside `{code_of(blocker)}`")
        start = min((self.index.range(s.call).start.line, self.index.range(s.call).start.column) for s in self.sites)
        for node in walk(self.top):
            if isinstance(node, cst.Call) and not any(node is s.call for s in self.sites):
                rng = self.index.range(node)
                inside = any(_within(self.index, node, s.call) for s in self.sites)
                runs_before = rng is not None and not inside and (rng.end.line, rng.end.column) <= start
                if runs_before and not is_pure(node):
                    raise Refused(
                        f"`{code_of(node)}` runs before the collective in the same statement; moving the "
                        "collective ahead of it would reorder side effects"
                    )

    def check_inputs(self, local_names: set[str]) -> None:
        """Refuse when a skipping rank would need a name only participating ranks assigned:
        in the callee, in an argument other than the payload, or in the payload when the
        neutral value is built from it (``torch.zeros_like(t)``)."""
        for site in self.sites:
            payload = payload_arg(site, self.index)
            facts = site.finding.fix_facts
            # the skipping rank needs the payload itself only where its neutral value is built from it
            from_payload = facts is not None and facts.join == "identity" and \
                (facts.neutral is None or PAYLOAD in facts.neutral.text)
            parts = [site.call.func] + [a.value for a in site.call.args if a is not payload or from_payload]
            for part in parts:
                for node in walk(part):
                    if isinstance(node, cst.Name) and node.value in local_names:
                        raise Refused(
                            f"the collective needs `{node.value}` on every rank, but only ranks that do not "
                            "skip compute it"
                        )

    def neutral(self, site: Site) -> tuple[cst.Arg | None, cst.BaseExpression | None]:
        """The payload argument and the neutral value a skipping rank sends instead.

        Which neutral value fits is the collective's, from its fix facts: none
        for a barrier, the identity of a reduction's op (a scratch tensor of
        the payload's shape for an in-place reduction, so the skipping rank's
        own tensor is untouched), or, for a gathered list, what leaves the
        list's readers' answers unchanged.
        """
        facts = site.finding.fix_facts
        if facts is None:
            raise Refused("the finding carries no fix facts; re-run `cslint check`")
        call = site.call
        payload = payload_arg(site, self.index)
        wrapper = not facts.direct
        if payload is None:
            if wrapper:
                raise Refused(f"`{site.finding.callee}` computes what it sends inside itself; no neutral value "
                              "can be passed in")
            if facts.join == "none" or not call.args:
                return None, None  # a barrier-like collective: nothing to neutralise
            raise Refused(f"which argument of `{site.finding.callee}` carries the payload is not known")
        if facts.payload.effects == "communicates":
            raise Refused(f"the payload `{facts.payload.text}` talks to other ranks, which would observe it")
        join = "consumption" if wrapper else facts.join
        module = self.index.module
        if join == "identity":
            neutral = facts.neutral
            if neutral is None:
                raise Refused(f"the reduction op of `{site.finding.callee}` has no known identity")
            if neutral.numeric_payload and not facts.payload.numeric:
                raise Refused(f"the identity of the reduction is a number but the payload `{facts.payload.text}` "
                              "is not visibly one")
            self.imports.extend(line for line in neutral.imports if not binds(self.index, line.split()[-1]))
            return payload, substitute(expression(neutral.text, module), {PAYLOAD: parenthesize(payload.value)})
        if join != "consumption":
            raise Refused(f"no neutral value is known for `{site.finding.collective}`")
        names = self.result_names if len(self.sites) == 1 else None
        if names == [] and not wrapper:
            return payload, cst.Name("None")  # the gathered list is dropped: any value is neutral
        if names == [] and wrapper:
            raise Refused(
                f"`{site.finding.callee}` consumes its payload internally and its result is unused; "
                "no neutral value can be inferred"
            )
        analyzer = ConsumptionAnalyzer(self.scope.function, self.scope.parents)
        try:
            text = analyzer.neutral_for(call, payload.value, self.scope.assignments, names or [])
        except NoNeutral as exc:
            raise Refused(f"no neutral value: {exc}") from exc
        return payload, expression(text, module)

    def neutralised_call(self, site: Site, flag_test: str, module: cst.Module) -> tuple[cst.Call, str]:
        """The call with its payload replaced by ``payload if <flag_test> else NEUTRAL``."""
        payload, neutral = self.neutral(site)
        if payload is None:
            return site.call, ""
        guarded = cst.IfExp(
            test=expression(flag_test, module),
            body=parenthesize(payload.value),
            orelse=parenthesize(neutral),
        )
        new_args = [a.with_changes(value=guarded) if a is payload else a for a in site.call.args]
        return site.call.with_changes(args=new_args), code_of(neutral)


def _neutral_note(text: str, site: Site) -> str:
    name = site.finding.callee or site.finding.collective
    return f"`{text}` to `{name}`" if text else f"nothing (no payload) to `{name}`"


def _within(index: SourceIndex, inner: cst.CSTNode, outer: cst.CSTNode) -> bool:
    a, b = index.range(inner), index.range(outer)
    if a is None or b is None:
        return False
    return (b.start.line, b.start.column) <= (a.start.line, a.start.column) and (a.end.line, a.end.column) <= (b.end.line, b.end.column)


def _simple_line(small: cst.BaseSmallStatement, like: cst.SimpleStatementLine | None = None) -> cst.SimpleStatementLine:
    line = cst.SimpleStatementLine(body=[small])
    if like is not None:
        line = line.with_changes(leading_lines=like.leading_lines)
    return line


def _assign(name: str, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)


def _if_block(test: cst.BaseExpression, body: list[cst.BaseStatement]) -> cst.If:
    return cst.If(test=test, body=cst.IndentedBlock(body=body))


# -- early exits ----------------------------------------------------------------------


class _ExitRewrite:
    def __init__(self, sites: list[Site], index: SourceIndex, scope: FunctionScope, exit_mode: str) -> None:
        self.sites = sites
        self.index = index
        self.scope = scope
        self.module = index.module
        self.exit_mode = exit_mode

    def plan(self) -> Plan:
        owner = None
        guards: dict[int, cst.CSTNode] = {}
        guard_site: dict[int, Site] = {}
        collectives: dict[int, list[Site]] = {}
        for site in self.sites:
            block, gi, ci, _ = guard_top(site)
            if owner is None:
                owner = block
            elif block is not owner:
                raise Refused("the interacting findings sit in different blocks and cannot be fixed together")
            if gi >= ci:
                raise Refused("the exit does not precede the collective in their shared block")
            guards[gi] = block_body(block)[gi]
            guard_site.setdefault(gi, site)
            collectives.setdefault(ci, []).append(site)
        assert owner is not None
        body = block_body(owner)
        first, last = min(guards), max(collectives)
        if any(g > last for g in guards):
            raise Refused("an exit lies after the last collective it is reported for")
        if any(first < c and c in guards for c in collectives):
            raise Refused("a statement is both an exit guard and a collective")

        exits = {gi: self._exits_of(g) for gi, g in guards.items()}
        kinds = {type(e) for found in exits.values() for e in found}
        if len(kinds) != 1:
            names = ", ".join(sorted(k.__name__.lower() for k in kinds))
            raise Refused(f"the exits before the collective are of different kinds ({names})")
        kind = kinds.pop()
        all_exits = [e for found in exits.values() for e in found]
        self._check_loop_exit(kind, owner)
        if self.exit_mode == "decide-from-gathered" and kind is not cst.Return:
            raise Refused("deciding from the gathered result only applies to `return` exits")

        flag = self.scope.fresh("exit_early")
        with_value = kind is cst.Return and any(e.value is not None for e in all_exits)
        result = self.scope.fresh("early_result") if with_value else None
        error = self.scope.fresh("early_error") if kind is cst.Raise else None
        if self.exit_mode == "decide-from-gathered":
            for e in all_exits:
                if e.value is not None and not is_pure(e.value):
                    raise Refused(f"the exit's value `{code_of(e.value)}` has side effects and would be dropped")
            result = None

        new_guards = {gi: self._rewrite_guard(g, exits[gi], flag, result, error) for gi, g in guards.items()}
        # `if config or local: exit`: the configuration part still exits at once (no rank enters the
        # collective where the configuration alone decides); only the rank-local part is deferred
        kept_exits: dict[int, cst.If] = {}
        for gi, g in guards.items():
            split = split_uniform_operands(g.test, guard_site[gi], self.index) if isinstance(g, cst.If) else None
            if split is not None and split[2] == "or" and g.orelse is None:
                uniform_test, local_test, _ = split
                kept_exits[gi] = g.with_changes(test=uniform_test)
                new_guards[gi] = new_guards[gi].with_changes(test=local_test)
        rewrites = {ci: _Collective(body[ci], sites, self.index, self.scope) for ci, sites in collectives.items()}
        reasons = []
        out: list[cst.BaseStatement] = []
        segment: list[cst.BaseStatement] = []
        wrapped_names: set[str] = set()

        def flush() -> None:
            if segment:
                # blank lines/comments above the first wrapped statement stay above the new `if`
                first_stmt = segment[0]
                leading = getattr(first_stmt, "leading_lines", ())
                body = [_strip_leading(first_stmt)] + segment[1:]
                wrapper = _if_block(expression(f"not {flag}", self.module), body)
                out.append(wrapper.with_changes(leading_lines=leading))
                segment.clear()

        for position in range(first, last + 1):
            stmt = body[position]
            if position in new_guards:
                wrapped_names |= _assigned_names(guards[position])
                if position == first:
                    like: cst.BaseStatement = stmt
                    if position in kept_exits:
                        out.append(kept_exits[position])
                        like = None
                    out.append(_simple_line(_assign(flag, cst.Name("False")), like=like))
                    if result:
                        out.append(_simple_line(_assign(result, cst.Name("None"))))
                    if error:
                        out.append(_simple_line(_assign(error, cst.Name("None"))))
                    out.append(_strip_leading(new_guards[position]))
                else:
                    if position in kept_exits:
                        segment.append(kept_exits[position])
                        new_guards[position] = _strip_leading(new_guards[position])
                    segment.append(new_guards[position])
                continue
            if position not in rewrites:
                segment.append(stmt)
                wrapped_names |= _assigned_names(stmt)
                continue
            flush()
            rewrite = rewrites[position]
            rewrite.check_inputs(wrapped_names)
            hoisted, after = self._rewrite_collective(rewrite, flag, reasons)
            out.extend(hoisted)
            if position == last:
                if self.exit_mode == "keep-local":
                    out.append(self._restore(kind, flag, result, error))
                out.extend(after)
            elif after:
                segment.extend(after)
        flush()

        if self.exit_mode == "decide-from-gathered":
            self._check_no_stale_reads(body[last + 1:], wrapped_names)
            deferred = "dropped: the rank decides from the gathered result"
        else:
            deferred = "deferred until after it"
        exit_word = {cst.Return: "return", cst.Raise: "raise", cst.Continue: "continue", cst.Break: "break"}[kind]
        lines = sorted({s.finding.line for s in self.sites})
        reason = (
            f"always-enter: every rank calls the collective at line{'s' if len(lines) > 1 else ''} "
            f"{', '.join(map(str, lines))}; the `{exit_word}` is {deferred}; skipping ranks send "
            + "; ".join(reasons)
        )
        if kept_exits:
            kept = "; ".join(f"`{code_of(g.test)}`" for g in kept_exits.values())
            reason += f"; the configuration test {kept} still exits before the collective on every rank alike"
        imports = list(dict.fromkeys(line for rewrite in rewrites.values() for line in rewrite.imports))
        edit = Edit(owner=owner, start=first, end=last + 1, new=out, replaced=body[first:last + 1], imports=imports)
        local_tests = "; ".join(f"`{code_of(g.test)}`" for g in new_guards.values() if isinstance(g, cst.If))
        called = ", ".join(dict.fromkeys(f"`{s.finding.callee or s.finding.collective}`" for s in self.sites))
        after = ("then leaves with its own result as before" if self.exit_mode == "keep-local"
                 else "and decides from the gathered result like the others")
        effect = (f"every rank {'that passes the configuration test ' if kept_exits else ''}enters {called}; "
                  f"a rank for which {local_tests} holds sends {'; '.join(reasons)}, {after}")
        return Plan(edit=edit, strategy="always-enter", safe=False, reason=reason, effect=effect)

    # -- pieces ----------------------------------------------------------------------
    def _check_loop_exit(self, kind: type, owner: cst.CSTNode) -> None:
        """A deferred exit that leaves a loop leaves it after this iteration's
        collective, while the other ranks go on to the next iteration's: the
        ranks would still part.  Only ``continue`` (the rank stays in the
        loop) can be deferred inside one."""
        if kind is cst.Continue:
            return
        node = owner
        while node is not None and node is not self.scope.function:
            if isinstance(node, LOOP_TYPES):
                word = {cst.Return: "return", cst.Raise: "raise", cst.Break: "break"}[kind]
                raise Refused(f"the `{word}` leaves a loop whose next iterations call the collective again "
                              "on the other ranks; deferring it would not keep the ranks together")
            node = self.scope.parents.get(id(node))

    def _exits_of(self, guard: cst.CSTNode) -> list[cst.CSTNode]:
        if not isinstance(guard, (cst.If, cst.With)):
            raise Refused(f"the exit is not under an `if` (found `{type(guard).__name__}`)")
        found = []
        stack: list[tuple[cst.CSTNode, bool]] = [(guard, False)]
        while stack:
            node, in_loop = stack.pop()
            if isinstance(node, EXIT_TYPES):
                if isinstance(node, (cst.Continue, cst.Break)) and in_loop:
                    continue
                found.append(node)
                continue
            for child in children(node):
                if isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    continue
                stack.append((child, in_loop or isinstance(node, LOOP_TYPES)))
        if not found:
            raise Refused("the controlling statement holds no exit to defer")
        for node in found:
            self._check_tail(node, guard)
            if isinstance(node, cst.Raise) and (node.exc is None or node.cause is not None):
                raise Refused("a bare `raise` or `raise ... from ...` cannot be deferred past the collective")
        return found

    def _check_tail(self, exit_node: cst.CSTNode, guard: cst.CSTNode) -> None:
        parents = self.scope.parents
        line = parents.get(id(exit_node))
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) or line.body[-1] is not exit_node:
            raise Refused("the exit is not the last statement on its line")
        node = line
        while node is not guard:
            parent = parents.get(id(node))
            if isinstance(parent, cst.IndentedBlock):
                if parent.body[-1] is not node:
                    raise Refused("the exit is followed by other statements in its block; it cannot be deferred")
            elif not isinstance(parent, (cst.If, cst.Else, cst.With)):
                kind = type(parent).__name__ if parent is not None else "?"
                raise Refused(f"the exit sits inside a `{kind.lower()}`; deferring it would change control flow")
            node = parent

    def _rewrite_guard(self, guard, exits, flag, result, error):
        replacements: dict[int, object] = {}
        for exit_node in exits:
            smalls: list[cst.BaseSmallStatement] = [_assign(flag, cst.Name("True"))]
            if isinstance(exit_node, cst.Return) and exit_node.value is not None and result:
                smalls.append(_assign(result, exit_node.value))
            if isinstance(exit_node, cst.Raise) and error:
                smalls.append(_assign(error, exit_node.exc))
            line = self.scope.parents[id(exit_node)]
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                lines = [cst.SimpleStatementLine(body=[s]) for s in smalls]
                lines[0] = lines[0].with_changes(leading_lines=line.leading_lines)
                lines[-1] = lines[-1].with_changes(trailing_whitespace=line.trailing_whitespace)
                replacements[id(line)] = cst.FlattenSentinel(lines)
            else:
                replacements[id(exit_node)] = cst.FlattenSentinel(smalls)
        return replace_in(guard, replacements)

    def _rewrite_collective(self, rewrite: _Collective, flag: str, reasons: list[str]):
        """(statements every rank runs, statements after the deferred exit)."""
        module = self.module
        if rewrite.keep_in_place:
            site = rewrite.sites[0]
            new_call, text = rewrite.neutralised_call(site, f"not {flag}", module)
            reasons.append(_neutral_note(text, site))
            return [replace_in(rewrite.top, {id(site.call): new_call})], []
        rewrite.check_hoistable()
        hoisted, replacements = [], {}
        for site in sorted(rewrite.sites, key=lambda s: (s.finding.line, s.finding.column)):
            new_call, text = rewrite.neutralised_call(site, f"not {flag}", module)
            reasons.append(_neutral_note(text, site))
            temp = self.scope.fresh("gathered")
            hoisted.append(_simple_line(_assign(temp, new_call)))
            replacements[id(site.call)] = cst.Name(temp)
        hoisted[0] = hoisted[0].with_changes(leading_lines=getattr(rewrite.top, "leading_lines", ()))
        after = replace_in(rewrite.top, replacements)
        if hasattr(after, "leading_lines"):
            after = after.with_changes(leading_lines=[])
        return hoisted, [after]

    def _restore(self, kind, flag, result, error) -> cst.BaseStatement:
        indent = self.module.default_indent
        if kind is cst.Return:
            action = f"return {result}" if result else "return"
        elif kind is cst.Raise:
            action = f"raise {error}"
        else:
            action = "continue" if kind is cst.Continue else "break"
        return statement(f"if {flag}:\n{indent}{action}\n", self.module)

    @staticmethod
    def _check_no_stale_reads(rest, wrapped_names: set[str]) -> None:
        for stmt in rest:
            for node in walk(stmt, into_functions=True):
                if isinstance(node, cst.Name) and node.value in wrapped_names:
                    raise Refused(
                        f"after the collective, `{node.value}` is read but only participating ranks computed it; "
                        "use exit_mode=keep-local"
                    )


def _strip_leading(node):
    return node.with_changes(leading_lines=[]) if hasattr(node, "leading_lines") else node


def _assigned_names(stmt: cst.CSTNode) -> set[str]:
    names = set()
    for node in walk(stmt):
        if isinstance(node, cst.AssignTarget):
            for sub in walk(node.target):
                if isinstance(sub, cst.Name):
                    names.add(sub.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Name):
            names.add(node.target.value)
    return names


# -- guarded single collective ---------------------------------------------------------


class _BranchRewrite:
    def __init__(self, sites: list[Site], index: SourceIndex, scope: FunctionScope) -> None:
        self.sites = sites
        self.index = index
        self.scope = scope
        self.module = index.module

    def plan(self) -> Plan:
        guard_nodes = {id(s.guard_path[-1]) for s in self.sites if s.guard_path}
        if len(self.sites) != 1 or len(guard_nodes) != 1:
            raise Refused("several collectives share this guard; always-enter moves one collective, use consensus")
        site = self.sites[0]
        guard_path = site.guard_path
        guard = guard_path[-1]
        if not isinstance(guard, cst.If):
            raise Refused("the controlling statement is not an `if`")
        try:
            owner, gi = block_of(guard_path, len(guard_path) - 1)
        except Exception as exc:  # an `elif` is not in a block
            raise Refused("the guard is an `elif`; the branch chain cannot be split around the collective") from exc
        if not isinstance(guard.body, cst.IndentedBlock):
            raise Refused("the guarded body is on the `if` line")
        in_body = [n for n in site.call_path if any(n is s for s in guard.body.body)]
        if not in_body or not any(n is guard.body for n in site.call_path):
            raise Refused("the collective is not directly in the guarded body")
        top = in_body[0]
        k = next(i for i, s in enumerate(guard.body.body) if s is top)
        for before in guard.body.body[:k]:
            for node in walk(before):
                if isinstance(node, EXIT_TYPES):
                    raise Refused(
                        f"the guarded body exits before the collective (`{code_of(node)}`); "
                        "splitting it would change control flow"
                    )
        rewrite = _Collective(top, [site], self.index, self.scope)
        rewrite.check_hoistable()
        pre_names: set[str] = set()
        for stmt in guard.body.body[:k]:
            pre_names |= _assigned_names(stmt)
        rewrite.check_inputs(pre_names)
        flag = self.scope.fresh("branch_taken")
        new_call, text = rewrite.neutralised_call(site, flag, self.module)
        pre = list(guard.body.body[:k])
        rest = list(guard.body.body[k + 1:])
        like = top if hasattr(top, "leading_lines") else None
        if rewrite.result_names == []:
            # the call is a statement of its own (`dist.all_reduce(t)`): every rank runs it as it is
            called = [replace_in(top, {id(site.call): new_call})]
            post = rest
        else:
            temp = self.scope.fresh("gathered")
            called = [_simple_line(_assign(temp, new_call), like=like)]
            post = [_strip_leading(replace_in(top, {id(site.call): cst.Name(temp)}))] + rest
        new_guard = guard.with_changes(
            body=guard.body.with_changes(body=[_simple_line(_assign(flag, cst.Name("True")))] + pre),
            leading_lines=[],
        )
        if pre or post or guard.orelse is not None or text:  # `text`: the payload depends on the flag
            out = [_simple_line(_assign(flag, cst.Name("False")), like=guard), new_guard, *called]
            if post:
                out.append(_if_block(cst.Name(flag), post))
        elif is_pure(guard.test):
            # the branch held nothing but the collective: what is left is the call itself
            out = [called[0].with_changes(leading_lines=guard.leading_lines)]
        else:  # keep evaluating the condition for what it does
            out = [guard.with_changes(body=guard.body.with_changes(body=[statement("pass\n", self.module)])),
                   *called]
        reason = (
            f"always-enter: every rank calls `{site.finding.callee or site.finding.collective}` at line "
            f"{site.finding.line}; ranks outside the branch send {_neutral_note(text, site)}"
        )
        edit = Edit(owner=owner, start=gi, end=gi + 1, new=out, replaced=[guard], imports=rewrite.imports)
        effect = (f"every rank calls `{site.finding.callee or site.finding.collective}`; a rank for which "
                  f"`{code_of(guard.test)}` is false sends {_neutral_note(text, site)} and ignores the result")
        return Plan(edit=edit, strategy="always-enter", safe=False, reason=reason, effect=effect)
