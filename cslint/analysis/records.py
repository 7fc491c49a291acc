"""The per-file facts: plain picklable records, computed in worker processes,
cached by content digest and read by the whole-tree pass.

Values inside them are sets of typed atoms (:mod:`cslint.analysis.atoms`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from ..model import Span
from .atoms import EMPTY


@dataclass
class Cond:
    """One controlling condition of a call site."""

    kind: str  # branch | early-exit | loop | exception
    atoms: frozenset
    text: str
    line: int
    guard: Span  # the controlling statement (early exits: the return/continue/break/raise, where there is one)
    exit_text: str = ""  # early exits: the exit's first line
    body_sites: tuple = ()  # for balanced-branch detection: site indices per side
    else_sites: tuple = ()
    two_sided: bool = False  # an if/else or ternary whose sides can be compared
    #: every sequence of call sites a rank may issue through this decision
    #: (both sides); None when unknown (loops with calls, too many paths)
    alternatives: Optional[tuple] = None
    #: the controlling construct, which decides the rewrites that fit: ``if``,
    #: ``while``, ``for``, ``match``, ``assert``, ``try``, or an expression
    #: (``ifexp``, ``boolop``, ``comprehension``)
    statement: str = ""
    #: early exits: the exit leaves a loop (``break``; ``return``/``raise``
    #: inside one), whose next iterations the other ranks still run
    leaves_loop: bool = False
    #: early exits: the exit leaves a loop with no test of its own (``while
    #: True``), an event loop a rank only leaves for good
    leaves_unbounded_loop: bool = False
    #: early exits of an ``if`` outside loops whose arm returns or raises:
    #: the line ranges ``(first, last)`` of the statements a rank taking the
    #: exit skips (what follows the ``if`` to the end of the function), which
    #: only the ranks that stay run; () for any other exit (inside a loop,
    #: a rank meets the others again at the next iteration)
    skipped_lines: tuple = ()
    #: an operand of the ``and`` (``or``) that is the whole test of an ``if``:
    #: the line range ``(first, last)`` of its body (its ``else``), which only
    #: the ranks on one side of this operand run; () for anything else
    arm_lines: tuple = ()
    #: early exits: a ``raise`` or a failing ``assert`` nothing in the function
    #: catches, an exit only where the launcher leaves the other ranks running
    #: (``unhandled-exceptions = "hang"``; the rules say which case applies)
    unhandled: bool = False
    #: a test that only asks whether a value is there (``x is None``, ``not
    #: q``, ``len(q) == 0``): ``(its text, whether the test holds when it is
    #: there, whether the code the test decides reads it)``; None otherwise
    presence: Optional[tuple] = None
    #: an ``and``/``or`` test: its operator and, per top-level operand, ``(span,
    #: atoms, presence)``, so that uniform operands can be told from rank-local
    #: ones (``presence`` as above, for the operand alone)
    operator: str = ""
    operands: tuple = ()
    #: an ``or`` test: per top-level operand, what it says on world rank 0
    #: (:func:`cslint.analysis.feasibility.first_rank_facts`); () otherwise
    first_rank: tuple = ()
    #: the ``if``/``elif`` chain the decision belongs to: ``(arms, open_else,
    #: explicit, split, handed_out)``, each arm the site sequences its paths may issue,
    #: ``open_else`` when no ``else`` ends the chain, ``explicit`` when the
    #: arms are the chain's own (not an ``if`` that leaves and the rest of
    #: its block; None when that rest has too many paths to enumerate and its
    #: one "path" is every site it may issue), ``split`` the decision's own two sides (its arm, the later
    #: arms together) where they differ from ``arms``, ``handed_out`` the groups whose members a chain
    #: without ``else`` hands out among its arms by role (``roles.groups_handed_out``); None for
    #: anything else
    role_arms: Optional[tuple] = None
    #: a branch in a decision of equality tests between this rank's values
    #: and agreed ones (``roles.equality_tree``: ``if me == target: ...
    #: elif src == me: ...``): ``(tree, constants, atoms)``; None otherwise
    equality_tree: Optional[tuple] = None
    #: an exception an unbounded loop retries (:mod:`cslint.analysis.retries`):
    #: ``(quiet, own)``, the site indices that must issue no collective for the
    #: failing rank to meet its peers in step, and the failing statement's own
    #: sites, whose callees must communicate only after they can fail; None
    #: for anything else
    retry: Optional[tuple] = None
    #: a test whose arm leaves its loop on every path out of it (``if done: flush(); break`` in
    #: ``while True``), for a site of that arm: the loop's other sites, where the ranks that stay go
    #: on; the test decides only if one of them reaches a collective.  None for any other decision
    going_on_sites: Optional[tuple] = None
    #: a test written as an expression (an ``if``/``while``/``assert`` test, a ``for`` loop's iterable, an
    #: inline test) that reads nothing but names and constants, through operators and ``hasattr``/
    #: ``isinstance`` (:func:`cslint.analysis.memosyntax.names_only_test`): the names it reads, as a module
    #: memo's path test may (:mod:`cslint.analysis.memofills`); None for any other condition
    names_only: Optional[frozenset] = None
    #: a group the function chooses (``statement`` "group"): the groups its alternatives name, sorted
    #: (``tp_a if pp.is_first_rank else pp_b``: tp, pp); the choice is asked over all of them
    #: (:meth:`span_over`), not the one the argument's whole text reads as
    chosen_groups: tuple = ()

    def span_over(self, world, group: str) -> frozenset:
        """The dimensions along which the ranks this condition decides for
        differ where it decides a collective over ``group``: the group's span,
        and for a group the function chooses every group it may name (ranks
        apart in any of them may hold different ones)."""
        span = world.span(group)
        return span.union(*(world.span(g) for g in self.chosen_groups)) if self.chosen_groups else span


class Collective(NamedTuple):
    """What a collective call site issues."""

    name: str  # the collective (``all_reduce``)
    group: str  # ``world``, ``tp``, ... or ``group:<expression>``
    api: str  # trtllm | torch | mpi | unknown


class IssuingRoute(NamedTuple):
    """The communicator a collective call asks to run it, as the calling
    function names it: the object whose method it is (``api`` "",
    ``self.pynccl_comm.all_reduce(x)``: ``handle`` ``self.pynccl_comm``), or
    the module of a library function and the process group handed to it
    (``dist.all_reduce(x, group=self.device_group)``: ``torch.distributed``,
    ``self.device_group``; "" for its default group).  Two routes over the
    same ranks are still two communicators (two NCCL communicators, or a
    gloo and an NCCL group): a rank in one never meets a peer in the other."""

    api: str
    handle: str


class CollectiveMatch(NamedTuple):
    """A call recognised as a collective, with the preset entry that matched
    (None for a collective named in ``[tool.cslint] collectives``)."""

    name: str
    group: str
    api: str
    spec: Optional[object]

    @property
    def collective(self) -> Collective:
        return Collective(self.name, self.group, self.api)


class FieldWrite(NamedTuple):
    """``self.attr = <atoms>`` at ``line`` in a method of ``class_key``."""

    class_key: Optional[str]
    attr: str
    atoms: frozenset
    line: int
    #: an element stored into the field (``self.xs[k] = v``, ``self.xs.append(v)``):
    #: the field's own structure is written apart (atoms.own_field)
    element: bool = False
    #: the value written is None itself (``self.x = None``): presentfields.py
    absent: bool = False
    #: the field rebuilt with an object built from its own settings: the object (rebuilds.RebuiltObject), else None
    rebuilt: Optional[tuple] = None


class FieldType(NamedTuple):
    """``self.attr = ref(...)``: the field holds what ``ref`` constructs."""

    class_key: Optional[str]
    attr: str
    ref: tuple


class NeighbourExchange(NamedTuple):
    """A call of an exchange between two pipeline stages (the presets'
    ``pair_exchanges``) whose peer is this stage's neighbour, under an ``if``
    that lets it run exactly where that neighbour is there
    (:func:`cslint.analysis.neighbours.neighbour_exchange`)."""

    direction: str  # send | recv
    side: str  # next | previous: the peer stage
    guard: Span  # the ``if`` (a branch condition's ``guard``)


@dataclass
class Site:
    """A call that is a collective or may lead to one."""

    span: Span
    callee: str
    collective: Optional[Collective]
    ref: Optional[tuple]
    args: tuple
    kwargs: tuple
    conds: tuple
    # Implicit flow at the call: the atoms of every condition deciding whether
    # this call runs.  A callee reached only on some ranks assigns its fields
    # only on those ranks (interprocedural implicit flow).
    ctx_atoms: frozenset = frozenset()
    #: what a fix of this call needs (:class:`~cslint.analysis.callfacts.CallFacts`)
    fix: Optional[tuple] = None
    #: the assignments of the function's case parameters (value tuples in the
    #: order of ``FuncFacts.case_params``) under which the call can run; None:
    #: under every one (:mod:`cslint.analysis.feasibility`)
    when: Optional[frozenset] = None
    #: the constant arguments: ((position or keyword, value), ...); ``star``:
    #: the call unpacks ``*args``/``**kwargs`` (positions unknown)
    consts: tuple = ()
    star: bool = False
    #: the arguments that may be a process group, as the call writes them:
    #: ((position or keyword, dotted text), ...), ``""`` for ``None``, the
    #: receiver of a method call under ``self``; a callee's collective over
    #: one of its parameters is over the group the call passes there
    #: (:func:`~cslint.analysis.program.bound_group`)
    group_args: tuple = ()
    #: a call of a method of ``self``: the fields of ``self`` the statements
    #: right before it set, nothing called in between, ``((attr, line), ...)``
    #: (:func:`~cslint.analysis.deep.fields_set_before`)
    set_before: tuple = ()
    #: a call of a method of ``self`` that reads fields its callers set
    #: (:func:`~cslint.analysis.setfields.handed_fields`): what each held at the
    #: call, ``((attr, atoms), ...)``, for the callee's entry
    #: (:func:`~cslint.analysis.selfcalls.note_handed`)
    handed: tuple = ()
    #: a call of an exchange with the stage before or after this one, under
    #: the test that this stage has that neighbour (:class:`NeighbourExchange`)
    neighbour: Optional[NeighbourExchange] = None
    #: such an exchange: the ``guard`` spans of the tests of the exchanged
    #: value's structure that the pair agrees on (``pairpayload.py``)
    agreed_structure: frozenset = frozenset()
    #: a collective whose result the function stores into the module global
    #: it names, in the body of ``if <that global> is None:`` (a memo fill,
    #: :mod:`~cslint.analysis.memofills`); "" for any other call
    memo_global: str = ""
    #: the arguments that hand one of the calling function's case parameters
    #: on as it is: ((position or keyword, index in its ``case_params``), ...)
    #: (:func:`~cslint.analysis.feasibility.forwarded_case_parameters`)
    forwarded: tuple = ()
    #: a collective: the communicator it is asked of
    #: (:func:`~cslint.analysis.collectivegroups.issuing_route`); None where
    #: the call does not say (a library helper over a fixed group chooses its own)
    route: Optional[IssuingRoute] = None


@dataclass
class Variant:
    sites: list = field(default_factory=list)
    returns: frozenset = EMPTY
    fields: list = field(default_factory=list)  # [FieldWrite]
    field_types: list = field(default_factory=list)  # [FieldType]
    #: what decides whether the function raises (the tests above its
    #: ``raise``/``assert`` statements, what a re-raised exception came
    #: from); None where it was not worked out (the CFG walk)
    raised: Optional[frozenset] = None
    #: what decides whether it raises an exception of a class the tree
    #: defines (raises.py): None where not worked out (read as ``raised``)
    raised_tree: Optional[frozenset] = None
    #: the returns by position where every ``return`` of a value writes out
    #: a tuple of one length (``return count, agreed``): a caller that
    #: unpacks it reads each element alone; ``()`` where some return is
    #: anything else, None where no return gives a value
    return_parts: Optional[tuple] = None
    #: where every ``return`` of a value writes out a dict display with the
    #: same constant string keys (``return {"sizes": n, "offsets": o}``):
    #: those keys, sorted, the positions of ``return_parts`` stand for (a
    #: caller's ``result["sizes"]`` reads that value alone); None where the
    #: positions are a tuple's
    return_keys: Optional[tuple] = None
    #: what the own structure of the result (its None-ness, length, kind)
    #: depends on where some ``return`` hands back a container whose own
    #: structure is kept apart from its elements' (a list filled by
    #: ``append``, a tuple written out): a caller reading only that reads
    #: this (``callrefs.OWN_PART``); None where it is the whole result
    return_own: Optional[frozenset] = None
    #: ``unhandled-exceptions = "hang"``: what decides whether the function
    #: fails on this rank with an error it does not catch (the tests above
    #: its local work -- I/O, ``next()``, a preset's ``local_failures`` --
    #: outside any ``try``, and the calls of the same kind it makes); None
    #: where it was not worked out
    escapes: Optional[frozenset] = None
    #: ``(whole, parts)``: what the result holds, whole (None: not kept) and
    #: by position (None: no tuple), where a caller finds it not None, for a
    #: function whose returns but one hand back None
    #: (:mod:`cslint.analysis.presentreturns`); None where that is not so
    return_present: Optional[tuple] = None
    #: what decides whether the result is None, where some ``return`` hands
    #: back a value whose None-ness is read apart from its own structure
    #: (:mod:`cslint.analysis.noneness`): a caller's ``x is None`` reads
    #: this (``noneness.NONE_PART``); None where it is the own structure
    return_none: Optional[frozenset] = None
    #: where the function's last statement returns (or is) one call:
    #: ``(its site indices, what decides that the statement raises)``, which
    #: a caller retrying the function's failures reads (``retries.py``);
    #: None otherwise
    tail: Optional[tuple] = None

    def add_return_none(self, none: Optional[frozenset], atoms: frozenset, own: Optional[frozenset]) -> None:
        """Join what decides whether one ``return`` hands back None (``none``;
        None: its own structure, ``own``, else its whole value, ``atoms``),
        before :meth:`add_return` joins that return's value."""
        if none is None and self.return_none is None:
            return
        known = self.return_none if self.return_none is not None else \
            (self.returns if self.return_own is None else self.return_own)
        self.return_none = known | (none if none is not None else atoms if own is None else own)

    def add_present(self, whole: Optional[frozenset], parts: Optional[tuple]) -> None:
        """Join one visit of the one ``return`` of a value as read where
        the result is not None (``return_present``)."""
        known = self.return_present
        if known is not None:
            whole = None if whole is None or known[0] is None else known[0] | whole
            parts = None if parts is None or known[1] is None or len(parts) != len(known[1]) \
                else tuple(a | b for a, b in zip(known[1], parts))
        self.return_present = (whole, parts)

    def add_return(self, atoms: frozenset, parts: Optional[tuple] = None, own: Optional[frozenset] = None,
                   keys: Optional[tuple] = None) -> None:
        """Join one ``return``'s value (``atoms``), its elements (``parts``,
        by the dict ``keys`` they are the values of where not None:
        :meth:`add_return_parts`) and its own structure (``own``; None:
        the whole value)."""
        if own is not None or self.return_own is not None:
            known = self.returns if self.return_own is None else self.return_own
            self.return_own = known | (atoms if own is None else own)
        self.returns = self.returns | atoms
        self.add_return_parts(parts, keys)

    def add_return_parts(self, parts: Optional[tuple], keys: Optional[tuple] = None) -> None:
        """Join one ``return``'s elements (None: it gives no value), by
        position or by the dict ``keys`` they are the values of."""
        known = self.return_parts
        if parts is None:
            return
        if known is None:
            self.return_parts, self.return_keys = parts, keys
        elif not known or not parts or len(known) != len(parts) or keys != self.return_keys:
            self.return_parts, self.return_keys = (), None
        else:
            self.return_parts = tuple(a | b for a, b in zip(known, parts))


@dataclass
class FuncFacts:
    key: str
    qualname: str
    module: str
    path: str
    line: int
    class_key: Optional[str]
    params: tuple
    self_offset: int  # 1 for methods called through an instance
    variants: dict  # frozenset(modes) or None -> Variant
    deep: bool = True  # analysed with CFG + control dependence (False: summary only)
    raises: bool = False  # contains a raise or assert statement, or local I/O
    called_names: frozenset = frozenset()  # last components of every callee
    # refs of functions this one installs as signal handlers (``signal.signal(sig, self.on_term)``):
    # a signal arrives at one rank, so whatever the handler sets is rank-local
    signal_handlers: tuple = ()
    #: type terms of the return annotation (:mod:`cslint.analysis.receivers`)
    returns_terms: tuple = ()
    #: parameters with a constant default that its tests read
    #: (:class:`~cslint.analysis.feasibility.CaseParam`): what a caller passes
    #: for them decides which of its collectives it can reach
    case_params: tuple = ()
    #: the rank-id sources its parameters named like a rank carry
    #: (:func:`~cslint.analysis.function.rank_param_sources`): the rank only where no
    #: call in the tree passes a value
    rank_params: tuple = ()
    #: calls local I/O (its disk, its network peers): it can fail on one rank
    local_io: bool = False
    #: ``((method, group), ...)``: methods of its class it binds only where a
    #: parallel group has one rank (:func:`~cslint.analysis.sidebindings.side_bindings`)
    single_rank_bindings: tuple = ()
    #: the same, of the methods it binds only where the group has several ranks
    #: (:func:`~cslint.analysis.sidebindings.side_bindings`)
    several_rank_bindings: tuple = ()
    #: fields a context manager puts back after its ``yield`` (:func:`~cslint.analysis.facts._restored_fields`):
    #: the calling conditions do not reach what it sets there
    restored_fields: frozenset = frozenset()
    #: the parameters whose own part (``atoms.OWN_PARAM``) it reads, and the
    #: parameter parts at a position it reads (their atoms' indices,
    #: ``positions.POSITION_PARAM`` and over): the whole-tree pass fills a
    #: table of what callers pass for each
    own_params: tuple = ()
    #: ``((field, parameter), ...)``: the fields an ``__init__`` sets from a
    #: parameter it never rebinds and from nothing else (``self.group =
    #: group``; :func:`~cslint.analysis.fieldparams.field_parameters`): what the class
    #: does over the field while it is built runs over what the call passes
    field_params: tuple = ()
    #: a summarised function: the references of every call with arguments it
    #: makes (:func:`~cslint.analysis.facts._passing_refs`), its sites or not
    passing_refs: tuple = ()
    #: ``((ref, calls), ...)``: every call of a callee some call of which
    #: passes a class by name (:func:`~cslint.analysis.classargs.class_arguments`)
    class_args: tuple = ()
    #: a method: the names of the methods it calls on ``self``, and whether it
    #: may change ``self``'s fields otherwise than by its own stores and those
    #: calls (``self`` read bare, a nested function, an ``await``;
    #: ``FunctionInfo.scan_calls``)
    self_calls: tuple = ()
    hands_self: bool = False
    #: a method: the fields it assigns first, before anything can fail or
    #: leave (:func:`~cslint.analysis.setfields.fields_set_first`)
    sets_first: tuple = ()
    #: a summarised function: the references of every call without
    #: arguments it makes (:func:`~cslint.analysis.facts._bare_refs`); with
    #: ``passing_refs``, every function it can run
    bare_refs: tuple = ()
    #: a method binding others on one side of a size test: the names of the
    #: ``self`` attributes its module reads as a value, not as a call
    #: (:func:`~cslint.analysis.sidebindings.handed_methods`): a method so handed
    #: may run wherever the value goes (:mod:`~cslint.analysis.processes`)
    handed_methods: frozenset = frozenset()
    #: how its parameters bind (``FunctionInfo.arity``): ``(positional,
    #: position-only, required positional, required keyword-only names)``,
    #: the counts including ``self``; () where not known
    arity: tuple = ()
    #: ``((parameter, group), ...)``: parameters defaulting to None that it
    #: binds to a named group where they are None
    #: (:func:`~cslint.analysis.fallbacks.default_groups`): a call passing
    #: nothing or None there runs its collectives over that group
    default_groups: tuple = ()
    #: the parameters defaulting to None that it never rebinds
    #: (:func:`~cslint.analysis.program.handed_default` reads what it hands them on to)
    unbound_none_params: frozenset = frozenset()
    #: the names of classes it reads as a value, not to call or to read an
    #: attribute of them (``return Impl``, ``pick(Impl)``;
    #: ``FunctionInfo.handed_classes``): an object of such a class may be
    #: built where no call names it (:mod:`~cslint.analysis.constructiongroups`)
    handed_classes: frozenset = frozenset()
    #: a classmethod: ``Site.group_args`` of each call of its own first
    #: parameter, ``cls(t, group=group)``, which builds an object of its
    #: class (:mod:`~cslint.analysis.constructiongroups`; the call itself
    #: stays unresolved)
    built_own_class: tuple = ()
    #: ``((method, group), ...)``: methods it calls, as a statement of their
    #: own, only on the side of a size test that a group of one rank takes
    #: and nowhere else in its body (:func:`~cslint.analysis.sidebindings.side_bindings`;
    #: :func:`~cslint.analysis.processes.called_methods`)
    single_rank_calls: tuple = ()
    #: ``((attr, ref), ...)``: functions it attaches to an object it holds, ``obj.attr = helper`` of a
    #: nested definition or of a method bound to ``self`` (:func:`~cslint.analysis.attached.attached_functions`):
    #: a call of ``attr`` on a receiver nothing types may run them
    attached: tuple = ()
    #: a nested function: the names it reads that an enclosing function binds (its free variables, the
    #: enclosing method's ``self`` included; :func:`~cslint.analysis.function.free_names`): a call from outside
    #: the scope that defines it cannot name what they hold (:func:`~cslint.analysis.program.closure_group`)
    free_names: frozenset = frozenset()
    #: every ``return`` hands back the pieces one library call cut a value
    #: into (:func:`~cslint.analysis.spans.returns_pieces`): the element an
    #: index picks from its result is of that value's kind whatever the index
    returns_pieces: bool = False
    #: ``((module, name, line), ...)``: the module globals it rebinds
    #: (:func:`~cslint.analysis.memosyntax.global_stores`)
    global_stores: tuple = ()
    #: analysed in depth: ``(line, column)`` of the calls that are a statement
    #: of its body before anything can return (:func:`~cslint.analysis.memosyntax.leading_calls`)
    leading_calls: frozenset = frozenset()
    #: a summarised constructor: its first call, where nothing runs before it
    #: (:func:`~cslint.analysis.memosyntax.first_call_ref`)
    first_call: tuple = ()
    #: the named groups its opening ``assert`` statements say have one rank
    #: (:func:`~cslint.analysis.sidebindings.asserted_single_groups`): past them
    #: it runs only where those groups have one rank (:attr:`Program.single_rank_dims`)
    asserted_single_groups: tuple = ()
    #: a method: ``((attr, line, tests), ...)``, the non-None values it stores into fields of ``self`` only where
    #: tests ``text == K`` hold, and their ``(text, K)`` (:func:`~cslint.analysis.rootside.rooted_writes`)
    rooted_writes: tuple = ()
    #: a method: ``((method, attr), ...)``, the methods it calls only where ``self.attr`` is there
    #: (:func:`~cslint.analysis.rootside.present_calls`; :attr:`Program.root_only`)
    present_calls: tuple = ()
    #: a method: the fields of ``self`` it stores a value into that is more than a name or a call of one
    #: (``self.rank = rank // tp``), sorted (:func:`~cslint.analysis.rootside.derived_stores`): such a field
    #: holds no rank's id alone, whatever its table's sources are (:attr:`Program.root_only`)
    derived_stores: tuple = ()
    #: a classmethod: a call through its class (``Cls.build(x)``) binds its first parameter to the class, not to
    #: the first argument (:func:`~cslint.analysis.callrefs.call_offset`)
    bound_by_class: bool = False


@dataclass
class ClassFacts:
    key: str
    name: str
    module: str
    bases: tuple  # refs
    methods: dict  # name -> function key
    #: ((attr, type terms), ...) of the annotations in the class body
    field_terms: tuple = ()
    #: names of its methods read as attributes (``@property``,
    #: ``@functools.cached_property``): a read of one runs the method
    properties: tuple = ()
    #: every name an instance may hold by the class's own doing: its class body's and methods' names, what
    #: its methods store or register on ``self`` by name; None where one binds a name it computes
    #: (:mod:`~cslint.analysis.lackednames`)
    bound_names: Optional[frozenset] = None


@dataclass
class FileFacts:
    path: str
    module: str
    functions: list = field(default_factory=list)
    classes: list = field(default_factory=list)
    globals: dict = field(default_factory=dict)  # name -> atoms
    defined_names: set = field(default_factory=set)  # function / method names
    collective_functions: set = field(default_factory=set)  # names of functions with a direct collective
    imports: dict = field(default_factory=dict)
    skipped: bool = False  # no function could reach a collective: summaries skipped
    called_names: frozenset = frozenset()  # every callee name in the file (for skipped files)
    #: every attribute name the file reads as a value, not to call it, and every name ``getattr`` reads
    #: (``FunctionInfo.value_names``): a method so read may run wherever the value goes
    #: (:mod:`~cslint.analysis.processes`); those read on a method's own receiver (``Thread(target=self._poll)``)
    #: apart, in ``self_value_reads``
    value_names: frozenset = frozenset()
    #: ``(class key, attribute name)`` of each attribute a method of that class reads as a value on its own
    #: receiver (``FunctionInfo.self_value_names``): a method of the class's lineage alone
    self_value_reads: frozenset = frozenset()
    error: Optional[str] = None
    error_line: int = 1
    error_column: int = 1
    # A re-extraction that deepened only some functions: their positions in
    # the earlier facts' ``functions`` (see :func:`merge_partial`), else None.
    partial: Optional[tuple] = None
    #: attribute names the file stores or registers by name on another object than a method's ``self``
    #: (``layer.weight = w``, ``layer.register_parameter("bias", None)``), as ``"F.name"`` on what a field ``F``
    #: holds (``x.F.name = v``; :func:`~cslint.analysis.functionscan.held_store`, :mod:`~cslint.analysis.lackednames`)
    foreign_stores: frozenset = frozenset()


def merge_partial(earlier: FileFacts, patch: FileFacts) -> FileFacts:
    """Apply a partial re-extraction to the facts it was computed against."""
    if patch.partial is None or patch.error is not None:
        return patch
    functions = list(earlier.functions)
    for position, func_facts in zip(patch.partial, patch.functions):
        functions[position] = func_facts
    merged = FileFacts(path=earlier.path, module=earlier.module, functions=functions,
                       classes=earlier.classes, globals=earlier.globals, defined_names=earlier.defined_names,
                       collective_functions=earlier.collective_functions | patch.collective_functions,
                       imports=earlier.imports, foreign_stores=earlier.foreign_stores,
                       value_names=earlier.value_names, self_value_reads=earlier.self_value_reads)
    if patch.globals:
        merged.globals = patch.globals
    return merged


class _WalkPart:
    """A part of a pending summary that only its summary walk gives (or
    gives as the function's other facts read it after the walk): reading
    it works the summary out first."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, fn, owner=None):
        if fn is None:
            return self
        fill_pending([fn])
        return fn.__dict__[self.name]

    def __set__(self, fn, value) -> None:
        fn.__dict__[self.name] = value


class _ReturnsPart(_WalkPart):
    """The type terms of what a pending function returns: the walk's only
    where they come from its ``return`` values, typed as the walk types
    receivers; from a return annotation, or with no value returned, they
    are what the function's extraction found already (``returns_known``),
    read without working the summary out (the typing of a call's result
    asks them of many functions whose summary nothing else reads)."""

    def __get__(self, fn, owner=None):
        if fn is not None and fn.__dict__.get("returns_known"):
            return fn.__dict__[self.name]
        return super().__get__(fn, owner)


class PendingFuncFacts(FuncFacts):
    """A summarised function whose summary walk has not run yet: every part
    of :class:`FuncFacts` but its variants, which are worked out where its
    syntax tree is kept when something first reads them (demand before
    extraction: on vLLM about half the summaries are never read).  Only a
    function no statement of which can write a field is left pending
    (:func:`~cslint.analysis.facts.writes_no_field`), so the whole-tree
    indexes of field writes and field types read no pending function
    (:func:`written_variants`); its call sites' references are among its
    ``passing_refs``, which every summary has.

    ``position`` is the function's place in its file's facts; ``filler``,
    set by the run's process as the facts arrive, is the object that
    summarises it (``fill(stubs)``: see
    :meth:`cslint.engine.workers.Workers.fill`).  Once filled, the object
    is a plain :class:`FuncFacts` with those variants."""

    variants = _WalkPart("variants")
    #: read by a caller's step (what it passes for each), and by the typing
    #: of a call's result: the walk notes both as it goes
    own_params = _WalkPart("own_params")
    returns_terms = _ReturnsPart("returns_terms")

    def __eq__(self, other) -> bool:
        # two functions of different keys differ whatever their summaries
        if isinstance(other, FuncFacts) and other.key != self.key:
            return False
        fill_pending([self])
        return self == other

    __hash__ = None  # as a FuncFacts

    def settled(self, variants: dict) -> FuncFacts:
        """These facts with ``variants``, as a plain FuncFacts."""
        facts = FuncFacts.__new__(FuncFacts)
        facts.__dict__.update(self.__dict__)
        for name in ("filler", "position", "returns_known"):
            facts.__dict__.pop(name, None)
        facts.variants = variants
        return facts

    def settle(self, facts: FuncFacts) -> None:
        """Take the facts of the summary walk (the variants, and the parts
        as the walk leaves them): a plain FuncFacts from now on."""
        state = self.__dict__
        state.clear()
        state.update(facts.__dict__)
        self.__class__ = FuncFacts


def is_pending(fn) -> bool:
    """Whether ``fn``'s summary has not been worked out yet."""
    return type(fn) is PendingFuncFacts


def written_variants(fn):
    """The variants whose field writes and field types a whole-tree index of
    fields reads: none of a pending function (which writes no field)."""
    return () if type(fn) is PendingFuncFacts else fn.variants.values()


def fill_pending(functions) -> None:
    """Work out the summaries of the pending ones among ``functions``, in
    as few round trips as their fillers allow."""
    for fill, stubs in _pending_by_filler(functions, lambda filler: filler.fill, required=True):
        fill(stubs)


def prefetch_pending(functions) -> None:
    """Have the pending ones among ``functions`` worked out meanwhile where
    their filler can do so while this process goes on (workers: see
    :meth:`cslint.engine.workers.Workers.prefetch`), for a
    :func:`fill_pending` of them later.  Nothing is settled here: every
    part read of them stays as it is until that fill."""
    for prefetch, stubs in _pending_by_filler(functions, lambda filler: getattr(filler, "prefetch", None),
                                              required=False):
        prefetch(stubs)


def settle_ready_pending(functions) -> None:
    """Work out the summaries of the pending ones among ``functions`` that
    their filler has ready (those :func:`prefetch_pending` asked for and
    whose answers came back), waiting for one at least where none is: the
    rest stay pending, for a later call.  A filler that cannot tell which
    are ready works every one out (:func:`fill_pending`)."""
    for settle, stubs in _pending_by_filler(
            functions, lambda filler: getattr(filler, "settle_ready", filler.fill), required=True):
        settle(stubs)


def _pending_by_filler(functions, method_of, required: bool):
    """The pending ones among ``functions``, grouped by the filler that can
    work them out (one round trip per filler), each group with
    ``method_of(filler)`` to call on it, in the order the fillers first
    appear; a group whose method is None is left out.  ``required``: a
    pending one with no filler is an error (it could never be worked out)."""
    by_filler: dict = {}
    for fn in functions:
        if type(fn) is PendingFuncFacts:
            filler = fn.__dict__.get("filler")
            if filler is None and required:
                raise RuntimeError(f"the summary of {fn.key} is pending and nothing can work it out here")
            method = method_of(filler)
            if method is not None:
                by_filler.setdefault(id(filler), (method, []))[1].append(fn)
    return by_filler.values()


def called_refs(fn) -> list:
    """The references of the calls of a function that the whole-tree
    indexes of callers read: a function analysed in depth, its call sites';
    a summarised one, every call with arguments it makes
    (``FuncFacts.passing_refs``), which does not depend on what the
    arguments carry (its sites do: ``SummaryWalk._calls``)."""
    if not fn.deep:
        return fn.passing_refs
    return site_refs(fn)


def site_refs(fn) -> list:
    """The references of the call sites of ``fn``'s variants (of a
    summarised function, those its summary walk kept), in order."""
    return [site.ref for variant in fn.variants.values() for site in variant.sites if site.ref is not None]


def every_called_ref(fn) -> list:
    """Every call reference of a function: :func:`called_refs`, and for a
    summarised one its calls without arguments too (``FuncFacts.bare_refs``):
    what a question about every callee it may run reads."""
    if fn.deep:
        return called_refs(fn)
    return [*fn.passing_refs, *fn.bare_refs]
