"""Edges of a function's control-flow graph along which the dataflow
refines what the names hold (:class:`Refinements`, which
:class:`~cslint.analysis.dataflow.VouchedEdges` applies): the edge straight
past an ``if`` that only runs where a group has several ranks (the names
its arm assigns are agreed within that group, which has one rank there; a
preset's parallel setting or a communicator tested for being there names
the group its arm's collectives are over, :func:`switched_group`);
the ways out of a ``for`` loop (its target also holds what it held before
the loop); the edge of an ``if`` where a local container is empty or None
(it holds only its own structure); the way past the others' turn of a
name one rank binds first (:func:`leader_first_edges`); the edges into an
arm whose test rules out an earlier arm, where the names that arm binds hold
what they held before it (:func:`~cslint.analysis.exclusive.excluded_edges`);
the edge of an ``if x is None`` on which a call result ``x`` is not None
(:mod:`cslint.analysis.presentreturns`); the edges past an ``if`` that
pads a name up to the group's agreed maximum length, where its length is
that maximum (:mod:`cslint.analysis.padding`); the edge into the root's arm past
an object broadcast, where what the root stored into the payload holds what
the others got back (:mod:`cslint.analysis.mirrors`)."""

from __future__ import annotations

import ast
import re
from fnmatch import fnmatchcase
from typing import Optional

from . import cfg as cfgmod
from .armexits import gated
from .environment import fork
from .localdicts import key_own_entry
from .atoms import EMPTY, OWN_PARAM, SHAPE, WHOLE, project
from .structure import params_own
from .exclusive import excluded_edges
from .mirrors import mirror_edges, mirrored
from .padding import padded, padded_edges
from .relays import relay_edges
from .presence import none_test
from .presentreturns import present, present_edges
from ..presets import group_from_text
from .astwalk import walked
from .bindings import assigned_names, target_names
from .grouptests import is_size_expr, single_rank_side
from .syntax import dotted
from .transfer import agreed_within
from .twostage import agreed_twice, two_stage_edges
from .vocabulary import BUFFER_KEYWORDS

_split_words = re.compile(r"[^a-z0-9]+").split


class Refinements:
    """{(node, successor): (kind, data)} of one function's graph: "single"
    (:func:`single_rank_edges`), "loop"
    (:func:`loop_exit_edges`), "empty" (:func:`empty_edges`; "empty-single"
    where the edge is a single-rank one too: both apply), "leader",
    "relay", "mirror" (:func:`~cslint.analysis.mirrors.mirror_edges`),
    "padded" (:func:`~cslint.analysis.padding.padded_edges`),
    "two-stage" (:func:`~cslint.analysis.twostage.two_stage_edges`),
    "present" (:func:`~cslint.analysis.presentreturns.present_edges`,
    given way by any other on the same edge); and, before
    any of those, the ways out of ``if`` arms that add their test back to
    the names the arm bound (``gates``, :mod:`cslint.analysis.armexits`)."""

    __slots__ = ("edges", "gates", "into")

    def __init__(self, edges: dict, gates: dict):
        self.edges = edges
        self.gates = gates
        self.into = frozenset(succ for _, succ in edges) | frozenset(succ for _, succ in gates)  # the nodes these edges lead to

    @classmethod
    def find(cls, dataflow) -> Optional["Refinements"]:
        edges = {key: ("present", name) for key, name in present_edges(dataflow).items()}
        buffers = _inplace_buffers(dataflow)
        edges.update((key, ("single", past)) for key, past in single_rank_edges(
            dataflow.graph, buffers, _switched_groups(dataflow), dataflow.info.ctx.group_word,
            dataflow.info.ctx.size_reads).items())
        for key, keys in loop_exit_edges(dataflow.graph, dataflow.info).items():
            edges[key] = ("loop", keys)
        for key, name in empty_edges(dataflow).items():
            single = edges.get(key)  # (``if group is not None:``: None there, and what its arm agrees agreed)
            edges[key] = ("empty-single", (name, single[1])) if single is not None and single[0] == "single" \
                else ("empty", name)
        for key, pair in leader_first_edges(dataflow).items():
            edges[key] = ("leader", pair)
        for key, relayed in relay_edges(dataflow.graph, dataflow.info.func, dataflow.info.ctx.knowledge,
                                        dataflow.info.callee_names).items():
            edges[key] = ("relay", relayed)
        for key, excluded in excluded_edges(dataflow).items():
            edges.setdefault(key, ("excluded", excluded))
        for key, mirror in mirror_edges(dataflow).items():
            edges.setdefault(key, ("mirror", mirror))
        for key, pad in padded_edges(dataflow, buffers).items():
            edges.setdefault(key, ("padded", pad))
        for key, twice in two_stage_edges(dataflow).items():
            edges[key] = ("two-stage", twice)  # (agreed over the second stage's group too: what "single" gives)
        gates = dataflow.arm_gates
        return cls(edges, gates) if edges or gates else None

    def from_entry(self) -> list:
        """(node, successor) of the edges that read a node's entry
        environment: a ``for`` header's ways out (:func:`restored`), and the
        earlier test's entry for an edge into an arm that rules it out
        (:func:`excluded`)."""
        found = []
        for key, (kind, data) in self.edges.items():
            if kind == "loop":
                found.append(key)
            elif kind == "excluded":
                found.append((data[0], key[1]))  # the earlier test's entry
        return found

    def gate(self, dataflow, p: int, succ: int, out: dict) -> dict:
        """``out`` of node ``p`` with the tests of the ``if`` arms the edge to
        ``succ`` leaves added back to the names they bound, before any
        refinement of that edge reads them (as the bindings held them)."""
        gates = self.gates.get((p, succ))
        return out if gates is None else gated(dataflow, gates, out, fork)

    def out(self, dataflow, p: int, succ: int, out: dict) -> dict:
        """``out`` of node ``p`` (gated: :meth:`gate`) as it reaches ``succ``."""
        found = self.edges.get((p, succ))
        if found is None:
            return out
        kind, data = found
        if kind == "loop":
            return out if dataflow.single_rank(p) else restored(data, dataflow.envs.get(p), out)
        if kind == "empty":
            return emptied(data, out, dataflow.info)
        if kind == "empty-single":
            return agreed_within(data[1], emptied(data[0], out, dataflow.info), dataflow.info.ctx.atoms.collective)
        if kind == "leader":  # past the others' turn: the leader's call, from its own turn
            refined = fork(out)
            refined[data.name] = dataflow.evaluator.eval(data.second.value, out) | dataflow.binding_implicit(p)
            return refined
        if kind == "present":
            return present(data, out)
        if kind == "relay":
            return relayed(data, dataflow.envs.get(p), out, dataflow.info.ctx.atoms.collective)
        if kind == "excluded":
            return excluded(data, dataflow.envs.get(data[0]), out)
        if kind == "mirror":
            return mirrored(data, out, dataflow)
        if kind == "padded":
            return padded(data, out, dataflow.evaluator, fork)
        if kind == "two-stage":
            return agreed_twice(data, out, dataflow.info.ctx.atoms.collective)
        return agreed_within(data, out, dataflow.info.ctx.atoms.collective)


def single_rank_edges(graph, buffers=None, switched=None, group_of=group_from_text, sizes=()) -> dict:
    """{(test node, successor): (group, names)} for the edge straight past
    an ``if`` with no ``else`` that only runs where a parallel group has
    more than one rank (``if get_tp_size() > 1: x = broadcast(x, tp)``):
    that way the group has one rank, so the names the arm assigns cannot
    differ within it.  Only a size named by a parallel dimension (the
    world's own size or an unnamed group's may be any group's), a call asking
    one such group for its size (``if get_world_size(group=self.tp_group) >
    1:``, :func:`_asked_group`), or a local name every binding of which asks
    one such group for its size or is a constant (``n = 1; n =
    get_world_size(group=self.dp_tp_group)``, :func:`_local_size_groups`);
    or a group named by a parallel dimension that is there (``if
    self.tp_group is not None:``: where it is None it is not set up, so this
    process has no peers in it, as :func:`single_rank_side` reads it).
    ``buffers(stmt)``: the local names a statement's collectives write in
    place (``dist.all_reduce(flags, group=g)``), which the arm changes as
    its assignments do.  ``switched(stmt)``: the group a test of a preset's
    parallel setting says has one rank where the arm is skipped
    (:func:`switched_group`), for a test that reads no group's size.
    ``group_of``: the group a text names, as the module names its groups
    (:meth:`~cslint.analysis.scope.ModuleContext.group_word`); ``sizes``: the module's
    :class:`~cslint.analysis.sizereads.SizeReads` (a size-named local holding no size is no size)."""
    out = {}
    local_sizes = None
    for node in graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.TEST or type(stmt) is not ast.If or stmt.orelse:
            continue
        if single_rank_side(stmt.test, sizes) is not False:
            group = switched(stmt) if switched is not None else None
            if group is not None:
                _past_arm(node, stmt, group, buffers, out)
            continue
        sized = stmt.test.operand if type(stmt.test) is ast.UnaryOp else stmt.test
        if type(sized) is not ast.Compare:
            continue
        size = sized.left if is_size_expr(sized.left, sizes) else sized.comparators[0]
        text = dotted(size)
        group = group_of(text) if text else None
        if type(size) is ast.Constant and size.value is None:  # ``tp_group is not None``
            group = group_of(dotted(sized.left).rsplit(".", 1)[-1])
        if (group is None or group == "world") and type(size) is ast.Call:
            group = _asked_group(size, group_of)  # the world's size asked of one group: that group's
        if (group is None or group == "world") and type(size) is ast.Name:
            if local_sizes is None:
                local_sizes = _local_size_groups(graph, group_of)
            group = local_sizes.get(size.id)
        if group is None or group == "world":
            continue
        _past_arm(node, stmt, group, buffers, out)
    return out


def _past_arm(node, stmt: ast.If, group: str, buffers, out: dict) -> None:
    """Record in ``out`` the edge straight past ``stmt``'s arm, where ``group``
    has one rank, with the names the arm assigns or writes in place."""
    names = frozenset(name for s in stmt.body for name in assigned_names(s))
    if buffers is not None:
        names = names.union(*(buffers(s) for s in stmt.body))
    if not names:
        return
    labels: dict = {}
    for succ, label in node.succs:
        labels.setdefault(succ, set()).add(label)
    for succ, seen in labels.items():
        if seen == {False}:
            out[node.id, succ] = (group, names)


#: ``(operator, number)`` of a comparison of a parallel degree that holds only where its group has several ranks
_SEVERAL_WHEN_TRUE = frozenset({(ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)})


def switch_word(test: ast.expr, switches: tuple) -> Optional[str]:
    """The word of the groups a test says have several ranks where it
    holds, read from a preset's parallel setting (:attr:`Preset.group_switches`):
    the setting itself (``if args.enable_cfg_parallel:``) or its comparison
    with a number that holds only above one (``if args.sp_degree != 1:``,
    ``> 1``, ``>= 2``); None for any other test."""
    setting = test
    if type(test) is ast.Compare:
        if len(test.ops) != 1 or type(test.comparators[0]) is not ast.Constant \
                or (type(test.ops[0]), test.comparators[0].value) not in _SEVERAL_WHEN_TRUE:
            return None
        setting = test.left
    if type(setting) is not ast.Attribute and type(setting) is not ast.Name:
        return None
    text = dotted(setting)
    if not text:
        return None
    return next((word for pattern, word in switches if fnmatchcase(text, pattern)), None)


def switched_group(stmt: ast.If, switches: tuple, arm_calls) -> Optional[str]:
    """The group the ``if`` says has one rank, or no member at all, where
    its arm is skipped, read from the arm's collectives (``arm_calls(s)``:
    ``(group, receiver text)`` of each collective a statement makes): a test
    of a preset's parallel setting (:func:`switch_word`) whose arm's
    collectives are over one group whose name carries the setting's word
    (``if args.enable_cfg_parallel: data = broadcast_pyobj(data, r,
    self.cfg_cpu_group)``: where the setting is false or 1 that group has one
    rank); or a test that a communicator is there whose arm calls its
    collectives on it (``if group is not None: data =
    group.broadcast_object(data, src=0)``: where it is None this process has
    no such communicator, so no collective over it follows -- a group passed
    as an argument is another matter, as None there names the default
    group).  What the arm would have agreed within that group cannot differ
    within it there.  None for any other ``if``."""
    test = stmt.test
    if type(test) is ast.Compare:
        receiver = _tested_present(test)
        if receiver is not None:
            groups = {group for s in stmt.body for group, on in arm_calls(s) if on == receiver}
            return next(iter(groups)) if len(groups) == 1 else None
    if not switches:
        return None
    word = switch_word(test, switches)
    if word is None:
        return None
    groups = {group for s in stmt.body for group, _ in arm_calls(s) if word in _name_words(group)}
    return next(iter(groups)) if len(groups) == 1 else None


def _tested_present(test: ast.Compare) -> Optional[str]:
    """The text of ``x`` in ``x is not None``; None for any other comparison."""
    if len(test.ops) != 1 or type(test.ops[0]) is not ast.IsNot:
        return None
    right = test.comparators[0]
    if type(right) is not ast.Constant or right.value is not None:
        return None
    return dotted(test.left) or None


def _name_words(text: str) -> frozenset:
    """The words of a group's name, split at every character other than a letter or digit."""
    return frozenset(_split_words(text.lower()))


def _switched_groups(dataflow):
    """``switched(stmt)`` for :func:`single_rank_edges` (:func:`switched_group`)."""
    switches = dataflow.info.ctx.knowledge.group_switches
    graph, info = dataflow.graph, dataflow.info
    nodes = None

    def arm_calls(stmt) -> list:
        nonlocal nodes
        if nodes is None:
            nodes = {id(node.stmt): node for node in graph.nodes
                     if node.stmt is not None and node.kind == cfgmod.STMT}
        node = nodes.get(id(stmt))
        if node is None:
            return []
        return [(call_info.match.group,
                 dotted(call_info.call.func.value) if type(call_info.call.func) is ast.Attribute else None)
                for call_info in info.node_info(node).calls if call_info.match is not None]
    return lambda stmt: switched_group(stmt, switches, arm_calls)


#: calls that answer a group's size when asked with the group
_GROUP_SIZE_CALLS = frozenset({"get_world_size", "get_group_size"})


def _local_size_groups(graph, group_of=group_from_text) -> dict:
    """{local name: group} for the names of a function whose every binding
    is a constant or a call asking a group named by a parallel dimension for
    its size (``group_world_size = dist.get_world_size(group=self.dp_tp_cpu_group)``,
    a fallback ``group_world_size = 1``), all of the same group."""
    found: dict = {}
    spoilt = set()
    for node in graph.nodes:
        stmt = node.stmt
        if stmt is None:
            continue
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            name, value = stmt.targets[0].id, stmt.value
            if type(value) is ast.Constant and type(value.value) is int:
                found.setdefault(name, None)
                continue
            group = _asked_group(value, group_of)
            if group is not None and found.get(name) in (None, group):
                found[name] = group
                continue
            spoilt.add(name)
            continue
        kind = type(stmt)
        if kind is ast.ExceptHandler:
            spoilt.add(stmt.name)
            continue
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            spoilt.add(stmt.name)
            continue
        parts = [stmt.target] if kind in (ast.For, ast.AsyncFor) else \
            [item.optional_vars for item in stmt.items if item.optional_vars is not None] \
            if kind in (ast.With, ast.AsyncWith) else [stmt.test] if kind in (ast.If, ast.While) else \
            [] if kind in (ast.Try, ast.Match) else [stmt]
        for part in parts:
            for sub in walked(part):
                if type(sub) is ast.Name and type(sub.ctx) is not ast.Load:
                    spoilt.add(sub.id)
    return {name: group for name, group in found.items() if group is not None and name not in spoilt}


def _asked_group(value, group_of=group_from_text) -> Optional[str]:
    """The group ``get_world_size(group=g)`` (or ``(g)``) asks, by ``g``'s text; None otherwise."""
    if type(value) is not ast.Call or (dotted(value.func) or "").rsplit(".", 1)[-1] not in _GROUP_SIZE_CALLS:
        return None
    args = [kw.value for kw in value.keywords if kw.arg == "group"] or value.args[:1]
    text = dotted(args[0]) if args else None
    group = group_of(text) if text else None
    return None if group == "world" else group


def _inplace_buffers(dataflow):
    """``buffers(stmt)`` for :func:`single_rank_edges`:
    the local names the collectives a statement of the graph makes write in
    place, by their specs (``dist.all_reduce(flags)``, ``object_list=box``),
    as :meth:`~cslint.analysis.transfer.Transfer.inplace_collectives` writes
    them."""
    graph, info = dataflow.graph, dataflow.info
    nodes = {id(node.stmt): node for node in graph.nodes if node.stmt is not None and node.kind == cfgmod.STMT}

    def buffers(stmt) -> frozenset:
        node = nodes.get(id(stmt))
        if node is None:
            return frozenset()
        found = set()
        for call_info in info.node_info(node).calls:
            match = call_info.match
            if match is None or match.spec is None:
                continue
            call = call_info.call
            found.update(call.args[index].id for index in match.spec.inplace
                         if index < len(call.args) and type(call.args[index]) is ast.Name)
            found.update(kw.value.id for kw in call.keywords
                         if kw.arg in BUFFER_KEYWORDS and type(kw.value) is ast.Name)
        return frozenset(found)
    return buffers


def _empty_test(test: ast.expr, sizes, containers) -> Optional[tuple]:
    """(name, label): the local name ``test`` finds empty or None on the
    edge of that label (``not xs``, ``xs is None`` -> True; ``xs``, ``xs is
    not None`` -> False); a truth test only of a name the function holds a
    container in (``containers``: built or annotated as one; another
    object's truth may be its own ``__bool__``); a disjunction of one such
    test with tests that only hold where a group has one rank (``not flags
    or get_world_size(group) == 1``) finds it so too, as that group has
    nothing to disagree on.  None for any other test."""
    t = type(test)
    if t is ast.Name:
        return (test.id, False) if test.id in containers else None
    if t is ast.UnaryOp and type(test.op) is ast.Not:
        inner = _empty_test(test.operand, sizes, containers)
        return None if inner is None or type(test.operand) is ast.BoolOp else (inner[0], not inner[1])
    if t is ast.Compare:
        return none_test(test)
    if t is ast.BoolOp and type(test.op) is ast.Or:
        found = None
        for value in test.values:
            if single_rank_side(value, sizes) is True:
                continue
            if found is not None:
                return None
            found = _empty_test(value, sizes, containers)
            if found is None or found[1] is not True:
                return None
        return found
    return None


def empty_edges(dataflow) -> dict:
    """{(if test, successor): name} for the edge of an ``if`` on which a
    local name is empty or None (:func:`_empty_test`): there it holds
    nothing but its own structure (``if not flags or size == 1: return
    flags`` hands back no element of ``flags``), :func:`emptied`."""
    out = {}
    sizes = containers = None
    for node in dataflow.graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.TEST or type(stmt) is not ast.If:
            continue
        kind = type(stmt.test)
        if kind is not ast.Name and kind is not ast.UnaryOp and kind is not ast.Compare and kind is not ast.BoolOp:
            continue
        if sizes is None:
            sizes = dataflow.info.ctx.size_reads
            containers = dataflow.evaluator._own_containers()
        found = _empty_test(stmt.test, sizes, containers)
        if found is None:
            continue
        name, label = found
        labels: dict = {}
        for succ, seen in node.succs:
            labels.setdefault(succ, set()).add(seen)
        for succ, seen in labels.items():
            if seen == {label}:
                out[node.id, succ] = name
    return out


def emptied(name: str, out: dict, info=None) -> dict:
    """``out`` where ``name`` is empty or None: of its value only its
    structure is left (an element stored into it no longer counts; what
    decided its own structure, kept apart, decides all of it; of a
    parameter, its own part: ``if not flags: return flags`` hands back what
    the caller kept apart of its argument, never an element of it)."""
    atoms = out.get(name)
    if atoms is None:
        return out
    own = out.get(("own", name))
    if own is None and info is not None and params_own(info, atoms) is not None:
        parts = [atom for atom in atoms if atom.tag == "P" and atom.index < OWN_PARAM]
        emptied = project(WHOLE, params_own(info, frozenset(parts))) | project(SHAPE, atoms.difference(parts))
    else:
        emptied = project(SHAPE, atoms) if own is None else project(WHOLE, own)
    if emptied == atoms:
        return out
    refined = fork(out)
    refined[name] = emptied
    return refined


def loop_exit_edges(graph, info) -> dict:
    """{(for header, successor): keys} for each edge out of a ``for``
    header other than into its body (the loop is done, or its iterable
    raised): the header binds its target anew for the body
    (``Transfer.loop_target``, strong in the dataflow), so an iteration
    reads only its own element and never what an earlier binding of the
    name held (``for i in synced:
    reqs.append(queue[i])`` after another loop over ``i``); past the loop
    the target holds its last element or, after no trip, what it held
    before, so those edges add back what reached the header.  ``keys``: the
    environment keys the target's names write (its own structure, a
    dict's keys)."""
    out = {}
    for node in graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.LOOP or (type(stmt) is not ast.For and type(stmt) is not ast.AsyncFor):
            continue
        keys = []
        for name in target_names(stmt.target):
            keys.append(name)
            if name in info.element_stores:
                keys.append(("own", name))
            for key in info.dict_keys.get(name, ()):
                keys.extend((("key", name, key), key_own_entry(name, key)))
        if not keys:
            continue
        keys = tuple(keys)
        for succ, label in node.succs:
            if label is not True:
                out[node.id, succ] = keys
    return out


def excluded(data: tuple, before: Optional[dict], out: dict) -> dict:
    """``out`` along an edge into an arm whose test rules out an earlier
    arm (:func:`~cslint.analysis.exclusive.excluded_edges`): the names that
    arm binds hold what they held on entry to its test."""
    if before is None:
        return out
    refined = fork(out)
    for name in data[1]:
        refined[name] = before.get(name, EMPTY)
    return refined


def relayed(data: tuple, before: Optional[dict], out: dict, collective) -> dict:
    """``out`` along an edge of a pipeline relay (:func:`~cslint.analysis.relays.relay_edges`):
    the relayed names hold a value agreed within each of ``groups`` (and,
    ``with_entry``, what they held on entry to the node as well: the first
    stage's value, which the receive hands on)."""
    groups, names, with_entry = data
    refined = None
    for key, atoms in out.items():
        if (key if type(key) is str else key[1]) not in names:
            continue
        if with_entry and before:
            atoms = atoms | before.get(key, frozenset())
        for group in groups:
            atoms = collective(group, atoms) if atoms else atoms
        if refined is None:
            refined = fork(out)
        refined[key] = atoms
    return out if refined is None else refined


def restored(keys: tuple, before: Optional[dict], out: dict) -> dict:
    """``out`` of a ``for`` header on a way out of the loop: its target's
    ``keys`` also hold what they held on entry to the header (``before``)."""
    if not before:
        return out
    refined = None
    for key in keys:
        old = before.get(key)
        new = out.get(key)
        if old is None or old is new:
            continue
        if refined is None:
            refined = fork(out)
        refined[key] = old if new is None else old | new
    return out if refined is None else refined


def leader_first_edges(dataflow) -> dict:
    """{(if test, successor): pair} for the way past the second ``if`` of a
    :func:`~cslint.analysis.complements.leader_first` pair (its test false):
    every rank taking it made the call in the first ``if``'s arm, so the
    name holds that call's value there, whatever the first test decided;
    only for a name the dataflow keeps nothing apart for (no element store,
    no key read)."""
    out = {}
    info = dataflow.info
    for node in dataflow.graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.TEST or type(stmt) is not ast.If or stmt.orelse:
            continue
        pair = dataflow.arms.leader_first(stmt)
        if pair is None or pair.name in info.element_stores or pair.name in info.dict_keys:
            continue
        for succ, label in node.succs:
            if label is False and not any(s == succ and seen is not False for s, seen in node.succs):
                out[node.id, succ] = pair
    return out
