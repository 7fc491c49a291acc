"""Which collectives each side of a decision issues: the site sequences of
every path through both arms of an ``if`` (its complementary sibling, or the
rest of the block when the taken arm always leaves), and the arms of an
``if``/``elif`` chain.  Two arms that can issue the same sequences keep every
rank in step whichever way each rank goes: a sender and a receiver of the
same broadcasts, each choosing among its paths on values they agree on."""

from __future__ import annotations

import ast

from .astwalk import DEFINITIONS, irrefutable_case, walked
from .function import FunctionInfo
from .roles import groups_handed_out
from .syntax import negation_text, unparsed

#: distinct paths enumerated through one arm, at most; more gives "unknown"
#: (paths that issue the same sites are one path: an arm of a few
#: independent ``if``s without calls stays small)
MAX_PATHS = 64


class LoopToken(tuple):
    """A loop in a site sequence: the set of sequences one iteration may
    issue (a tuple subclass, so sequences stay hashable and comparable)."""

    __slots__ = ()

    def __new__(cls, bodies: frozenset):
        return tuple.__new__(cls, ("loop", bodies))

    def __getnewargs__(self):  # pickled with the facts (worker processes, cache)
        return (self[1],)

    @property
    def bodies(self) -> frozenset:
        return self[1]


class Alternatives:
    """Site sequences of the decisions of one function's variant;
    ``index`` maps ``id(call)`` to the call's site index in the variant."""

    def __init__(self, info: FunctionInfo, index: dict, crashing_arm=None):
        self.info = info
        self.index = index
        #: ``CFG.crashing_arm`` of the function's graph: an arm that only raises what ends the job is no path
        #: (the rank crashes there, the job ends), as the graph reads it; None: every arm is a path
        self.crashing_arm = crashing_arm
        self._cache: dict = {}
        self._partners: dict = {}
        self._negated_texts: dict = {}  # id(if) -> negation_text of its test
        self._block_tests: dict = {}  # id(block) -> (block, {text: [position]}, {negated text: [position]})

    def _ordered_sites(self, node) -> tuple:
        # Kept per node: the paths of every ``if`` of a function ask again
        # about the statements nested in it.
        key = ("ordered", id(node))
        cached = self._cache.get(key)
        if cached is not None and cached[0] is node:
            return cached[1]
        index = self.index
        found = [sub for sub in walked(node) if type(sub) is ast.Call and id(sub) in index]
        found.sort(key=lambda c: (c.lineno, c.col_offset))
        result = tuple(index[id(c)] for c in found)
        self._cache[key] = (node, result)
        return result

    def _paths(self, stmts):
        """Possible (site sequence, left the block) pairs through statements."""
        paths = [((), False)]
        for stmt in stmts:
            live = [(seq, left) for seq, left in paths if not left]
            if not live:
                break
            ext = self._stmt_paths(stmt)
            if ext is None:
                return None
            ended = [(seq, left) for seq, left in paths if left]
            paths = list(dict.fromkeys(ended + [(seq + e, term) for seq, _ in live for e, term in ext]))
            if len(paths) > MAX_PATHS:
                return None
        return paths

    def block_paths(self, stmts):
        """Possible (site sequence, left the block) pairs through statements
        (None: unknown, too many paths)."""
        return self._paths(stmts)

    def _stmt_paths(self, s):
        """The paths through one statement (shared: callers only read them);
        kept per statement, as every enclosing ``if`` asks again."""
        key = ("paths", id(s))
        cached = self._cache.get(key)
        if cached is not None and cached[0] is s:
            return cached[1]
        result = self._stmt_paths_uncached(s)
        self._cache[key] = (s, result)
        return result

    def _stmt_paths_uncached(self, s):
        t = type(s)  # (the parser makes no subclasses of node types)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            return [((), False)]
        if t is ast.If:
            prefix = self._ordered_sites(s.test)
            crashing = self.crashing_arm(s) if self.crashing_arm is not None else None
            a = [] if crashing is True else self._paths(s.body)
            b = [] if crashing is False else self._paths(s.orelse)
            if a is None or b is None:
                return None
            return [(prefix + seq, term) for seq, term in a + b]
        if t is ast.Return or t is ast.Raise:
            return [(self._ordered_sites(s), True)]
        if t is ast.Break or t is ast.Continue:
            return [((), True)]
        if t is ast.For or t is ast.AsyncFor or t is ast.While:
            inner = self._ordered_sites(s)
            head = self._ordered_sites(s.iter if t is not ast.While else s.test)
            if len(inner) <= len(head):
                return [(head, False)]
            # A loop whose body issues calls becomes one element of the
            # sequence: the set of site sequences one iteration may issue
            # (a ``break``/``continue`` ends the iteration).  Two arms that
            # loop alike issue the same collectives per iteration; whether
            # they iterate alike is the loop's own question, asked where the
            # loop is a guard (a count received from the other arm is agreed).
            body = self._paths(s.body)
            if body is None:
                return None
            token = LoopToken(frozenset(seq for seq, _ in body))
            return [(head + (token,), False)]
        if t is ast.With or t is ast.AsyncWith:
            prefix = tuple(i for item in s.items for i in self._ordered_sites(item.context_expr))
            body = self._paths(s.body)
            return None if body is None else [(prefix + seq, term) for seq, term in body]
        if t is ast.Try or t.__name__ == "TryStar":
            body = self._paths(list(s.body) + list(s.orelse) + list(s.finalbody))
            if body is None or not any(self._ordered_sites(h) for h in s.handlers):
                return body
            # A handler runs after any part of the body: what the body issued
            # before it raised (a prefix of one of its paths), then the
            # handler and the ``finally`` block.
            tried = self._paths(s.body)
            if tried is None:
                return None
            prefixes = dict.fromkeys(seq[:end] for seq, _ in tried for end in range(len(seq) + 1))
            out = list(body)
            for handler in s.handlers:
                handled = self._paths(list(handler.body) + list(s.finalbody))
                if handled is None:
                    return None
                out += [(prefix + seq, term) for prefix in prefixes for seq, term in handled]
                if len(out) > MAX_PATHS:
                    return None
            return list(dict.fromkeys(out))
        if isinstance(s, ast.Match):
            prefix = self._ordered_sites(s.subject)
            out = []
            for case in s.cases:
                sub = self._paths(case.body)
                if sub is None:
                    return None
                out += [(prefix + seq, term) for seq, term in sub]
            if s.cases and irrefutable_case(s.cases[-1]):
                return out  # (a last ``case _:`` or capture takes every subject the others leave)
            return out + [(prefix, False)]
        return [(self._ordered_sites(s), False)]

    def branch_alternatives(self, stmt: ast.If):
        """Site sequences of both sides of an ``if``; when the taken side
        always leaves the block and there is no ``else``, the rest of the
        block is the other side (``if c: return f(x)`` / ``return f(y)``).
        Computed once per ``if`` and variant (every site under it asks)."""
        key = id(stmt)
        cached = self._cache.get(("alternatives", key))
        if cached is not None:
            owner, result = cached
            if owner is stmt:
                return result
        result = self._branch_alternatives_uncached(stmt)
        self._cache[("alternatives", key)] = (stmt, result)
        return result

    def _branch_alternatives_uncached(self, stmt: ast.If):
        body = self._paths(stmt.body)
        if body is None:
            return None
        if stmt.orelse:
            other = self._paths(stmt.orelse)
        else:
            partner = self.complement_partner(stmt)
            if partner is not None:
                other = self._paths(partner.body)
            elif body and all(term for _, term in body):
                block = self.info.blocks.get(id(stmt)) or []
                position = next((i for i, b in enumerate(block) if b is stmt), None)
                rest = block[position + 1:] if position is not None else []
                other = self._paths(rest)
            else:
                other = [((), False)]
        if other is None:
            return None
        return tuple(seq for seq, _ in body + other)

    def role_arms(self, stmt: ast.If):
        """The arms of the ``if``/``elif`` chain ``stmt`` belongs to, each as
        the site sequences its paths may issue, whether the chain ends
        without an ``else`` (ranks that match no test take no arm), and
        whether the arms are written out as the chain's own arms (rather than
        an ``if`` that leaves and the rest of its block), the groups whose
        members its tests hand out among its arms where it ends without an
        ``else`` (:func:`~cslint.analysis.roles.groups_handed_out`: the ranks
        no test matches are outside them), and ``split``: the
        same decision read as ``stmt``'s own two sides, its arm and everything
        after it in the chain (None where that is the reading above); None
        when ``stmt`` is not part of a chain of at least two tests, or a path
        is unknown.  Computed once per chain.

        An ``else`` that holds only an ``if`` is written like an ``elif`` but
        may be one role's code: ``if rank == src: send`` / ``else: if n > 1:
        recv else: make locally``.  Read as a chain, the last arm issues
        nothing; read as two sides, the receiver's side issues the sender's
        broadcast on the paths its own (inner) test chooses, a test asked
        where it guards the broadcast.  Either reading keeps the ranks in
        step when its arms match."""
        chain = self._role_chain(stmt)
        if chain is None:
            return None
        result, links = chain
        position = next((i for i, link in enumerate(links) if link is stmt), None)
        arms, open_else, explicit, handed_out = result
        if not explicit or position is None or (position == 0 and len(arms) == 2):
            return (arms, open_else, explicit, None, handed_out)
        # the paths of every arm after this one (an open end adds none: it is
        # the chain reading's question, asked by the ``open_else`` rule)
        rest = tuple(sequence for arm in arms[position + 1:] for sequence in arm)
        return (arms, open_else, explicit, (arms[position], rest) if rest else None, handed_out)

    def _role_chain(self, stmt: ast.If):
        """The chain ``stmt`` belongs to: ``((arms, open_else, explicit,
        handed_out), [the chain's ``if`` statements])``, or None (see
        :meth:`role_arms`)."""
        head = stmt
        while True:
            parent = self.info.parents.get(id(head))
            if isinstance(parent, ast.If) and len(parent.orelse) == 1 and parent.orelse[0] is head:
                head = parent
            else:
                break
        key = ("arms", id(head))
        cached = self._cache.get(key)
        if cached is not None and cached[0] is head:
            return cached[1]
        arms = []
        node = head
        links = [head]
        open_else = False
        result = None
        if not head.orelse:
            # ``if role: <arm that always leaves>`` followed by the other
            # role's code: the rest of the block is the other arm
            body = self._paths(head.body)
            if body and all(term for _, term in body):
                block = self.info.blocks.get(id(head)) or []
                position = next((i for i, b in enumerate(block) if b is head), None)
                rest = self._paths(block[position + 1:]) if position is not None else None
                if rest is not None:
                    result = (((tuple(seq for seq, _ in body), tuple(seq for seq, _ in rest)), False, False,
                               frozenset()), links)
                elif position is not None:
                    # too many paths after it to enumerate: the rest is known
                    # only by the sites it may issue (``explicit`` None: only
                    # the question of an arm joining what the rest issues,
                    # ``uniformity._arm_joins``, reads it)
                    union = self._sites_outside_definitions(block[position + 1:])
                    result = (((tuple(seq for seq, _ in body), (union,)), False, None, frozenset()), links)
            self._cache[key] = (head, result)
            return result
        while True:
            paths = self._paths(node.body)
            if paths is None:
                arms = None
                break
            arms.append(tuple(seq for seq, _ in paths))
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
                links.append(node)
                continue
            if node.orelse:
                paths = self._paths(node.orelse)
                if paths is None:
                    arms = None
                    break
                arms.append(tuple(seq for seq, _ in paths))
            else:
                open_else = True
            break
        if arms is not None and len(arms) >= 2:
            handed_out = groups_handed_out(links, self.info.ctx.group_members) if open_else else frozenset()
            result = ((tuple(arms), open_else, True, handed_out), links)
        self._cache[key] = (head, result)
        return result

    def _sites_outside_definitions(self, stmts) -> tuple:
        """The sites of statements in source order, those of nested
        functions, classes and lambdas left out (they run when called)."""
        index = self.index
        found = []
        nested: set = set()
        for stmt in stmts:
            for sub in walked(stmt):
                kind = type(sub)
                if kind is ast.Call:
                    if id(sub) in index:
                        found.append(sub)
                elif kind in DEFINITIONS:
                    nested.update(id(inner) for inner in walked(sub) if type(inner) is ast.Call)
        if nested:
            found = [call for call in found if id(call) not in nested]
        found.sort(key=lambda c: (c.lineno, c.col_offset))
        return tuple(index[id(c)] for c in found)

    def complement_partner(self, stmt: ast.If):
        """A sibling ``if`` (no else) in the same block whose test is the
        negation of this one's: together they issue their collectives on
        every rank, in the same order, like an if/else."""
        partners = self._partners
        found = partners.get(id(stmt), stmt)
        if found is not stmt:
            return found
        block = self.info.blocks.get(id(stmt))
        found = None
        if block is not None:
            _block, by_text, by_negation = self._tests_of(block)
            # the first sibling in the block whose test is this one's negation
            # (or whose negation is this test), found through the block's
            # index: comparing with every sibling was quadratic in the ifs of
            # a block (module-level code has thousands)
            candidates = by_text.get(self._negated_text(stmt), []) + by_negation.get(unparsed(stmt.test), [])
            for position in sorted(set(candidates)):
                if block[position] is not stmt:
                    found = block[position]
                    break
        partners[id(stmt)] = found
        return found

    def _tests_of(self, block: list) -> tuple:
        """The ``if`` statements without ``else`` of a block, by test text and
        by negated test text (positions in the block)."""
        known = self._block_tests.get(id(block))
        if known is not None and known[0] is block:
            return known
        by_text: dict = {}
        by_negation: dict = {}
        for position, other in enumerate(block):
            if isinstance(other, ast.If) and not other.orelse:
                by_text.setdefault(unparsed(other.test), []).append(position)
                by_negation.setdefault(self._negated_text(other), []).append(position)
        known = self._block_tests[id(block)] = (block, by_text, by_negation)
        return known

    def _negated_text(self, stmt: ast.If) -> str:
        """:func:`negation_text` of the test, kept per ``if`` (asked by the
        block's index and by the ``if`` itself)."""
        texts = self._negated_texts
        text = texts.get(id(stmt))
        if text is None:
            text = texts[id(stmt)] = negation_text(stmt.test)
        return text

    def sites_in(self, stmts) -> tuple:
        key = id(stmts)
        cached = self._cache.get(key)
        if cached is not None:
            owner, result = cached
            if owner is stmts:
                return result
        result = self._sites_in_uncached(stmts)
        self._cache[key] = (stmts, result)
        return result

    def _sites_in_uncached(self, stmts) -> tuple:
        index = self.index
        out = []
        for stmt in stmts:
            for sub in walked(stmt):
                if type(sub) is ast.Call and id(sub) in index:
                    out.append(index[id(sub)])
        return tuple(sorted(out))
