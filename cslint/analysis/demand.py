"""Which functions the whole-tree fixpoint steps: those whose step may write
a table entry that the questions after it depend on (demand).

The hazards ask about the conditions of call sites, and about the functions
that hold them: their parameters and calling contexts, what their calls
return and reach, the fields they read.  A step of a function writes its own
returns and reach, the fields it assigns, and the parameters and calling
contexts of what its calls run (:func:`table_writes`).  Starting from the
entries the functions with conditions read (:func:`table_reads` with their
conditions), a function is stepped when it may write an entry read so far,
and then what its own step reads is read too, up to a fixpoint.  What a
function left out writes is read by no stepped function and by no question
(on vLLM 0.33.0 about half of the summaries): stepping it changes no table
that any of them reads, so the findings are the same; the fixpoint steps the
others in the same order as before.
"""

from __future__ import annotations

from .callercontext import context_receivers
from .reads import CALLEE_REFS
from .records import called_refs, every_called_ref, is_pending, prefetch_pending, settle_ready_pending, site_refs
from .selfcalls import self_calls_written


def table_writes(program, fn) -> set:
    """The table entries a step of ``fn`` may change (the keys it adds to
    ``Program.changed_keys``).  Of a pending summary, a superset: it writes
    no field, and its call sites' references are among its
    ``passing_refs`` and ``bare_refs``
    (:class:`~cslint.analysis.records.PendingFuncFacts`)."""
    out = {("ret", fn.key), ("reach", fn.key)}
    family_of = program.resolver.family
    resolve = program.resolver.resolve
    callees = program.callees
    pending = is_pending(fn)
    if fn.self_calls and fn.class_key is not None:  # the conditions of its calls on self (selfcalls.note_self_call)
        out.update(("field", family_of(fn.class_key), table) for table in self_calls_written(program, fn))
    for v in () if pending else fn.variants.values():
        for write in v.fields:
            family = family_of(write.class_key)
            for written in program._written_tables(family, write.attr, write.element, fn):
                out.add(("field", family, written))
    # (a pending summary's calls without arguments keep a site where a test of its own decides them:
    # SummaryWalk._calls)
    for ref in every_called_ref(fn) if pending else site_refs(fn):
        targets = resolve(ref)
        if not targets and callees is not None and ref.tag in CALLEE_REFS:
            targets = callees.resolve(ref)  # ProgramReads._pass_to_callee
        for target in targets:
            out.add(("ctx", target.key))
            out.add(("param", target.key))
    for ref in context_receivers(fn):  # its calling conditions, handed on (callercontext.py)
        out.update(("ctx", target.key) for target in resolve(ref))
    return out


def ask_ahead(resolver) -> None:
    """Have the workers start on the pending summaries that the calls of the
    functions analysed in depth may run, while the rest of the program is
    built (they sit idle meanwhile): the collectives those reach are read
    by every such function's step (``table_reads``), so :func:`demanded`
    asks for each of them first whatever else it finds.  Asked only, not
    settled: nothing read changes before the demand settles them, in the
    order it does now; the resolver's answers do not depend on the order of
    the questions."""
    called: dict = {}
    for fn in resolver.funcs.values():
        if fn.deep:
            for ref in called_refs(fn):
                called.update((target.key, target) for target in resolver.resolve(ref) if is_pending(target))
    prefetch_pending(list(called.values()))


def demanded(program, table_reads) -> list:
    """The functions of ``program`` the fixpoint steps, in the program's
    order; fills ``program.step_reads`` (function key -> what its step
    reads) for them."""
    funcs = list(program.funcs.values())
    step_reads = program.step_reads
    wanted: set = set()
    needed: set = set()
    todo: list = []

    def want(position: int, conditions: bool) -> None:
        wanted.add(position)
        fn = funcs[position]
        asked: set = set()
        reads = table_reads(program, fn, asked if conditions else None)
        step_reads[fn.key] = reads
        for entry in (reads | asked) if conditions else reads:
            if entry not in needed:
                needed.add(entry)
                todo.append(entry)

    # The functions analysed in depth are wanted from the start, so only the
    # summaries' writes can widen the demand (a summary's call sites carry
    # no conditions: SummaryWalk._calls).
    for position, fn in enumerate(funcs):
        if fn.deep:  # the functions with conditions
            want(position, True)
    # A function's results and reach are written by its own step alone, so a
    # pending summary whose results are read so far is filled whatever else
    # is: its workers start on it while the summaries' writes are indexed.
    read_results = dict.fromkeys(entry[1] for entry in todo if entry[0] == "ret" or entry[0] == "reach")
    prefetch_pending([program.funcs[key] for key in read_results if key in program.funcs])
    writers: dict = {}  # table entry -> positions of the summaries whose step may write it
    approximate: set = set()  # positions of the summaries indexed by a superset of their writes (pending)
    for position, fn in enumerate(funcs):
        if not fn.deep:
            if is_pending(fn):
                approximate.add(position)
            for entry in table_writes(program, fn):
                writers.setdefault(entry, []).append(position)
    # A pending summary that may write an entry read so far (its writes
    # taken as a superset) is worked out before it is wanted: those met
    # while the entries read so far are followed wait, and are worked out
    # together (all workers at once).  Then its exact writes decide, as
    # they decide for a summary extracted at once (the fact cache's):
    # wanted where one is read so far, else kept by those entries alone
    # (``exact``), for an entry read later; so too for one something else
    # worked out meanwhile.  So the demand is the same whether a summary
    # was pending or not, and the superset of a pending summary never
    # worked out reached no entry read.
    exact: dict = {}  # position of a worked-out summary not wanted -> the entries its step writes

    def settle(position: int) -> None:
        approximate.discard(position)
        writes = table_writes(program, funcs[position])
        if writes & needed:
            want(position, False)
            return
        exact[position] = writes
        for entry in writes:
            if position not in writers.setdefault(entry, []):
                writers[entry].append(position)

    waiting: list = []
    while todo or waiting:
        while todo:
            entry = todo.pop()
            for position in writers.get(entry, ()):
                if position in wanted:
                    continue
                if is_pending(funcs[position]):
                    wanted.add(position)
                    waiting.append(position)
                    # its workers start on it while the entries read so far are followed
                    prefetch_pending([funcs[position]])
                elif position in approximate:
                    settle(position)
                elif position not in exact or entry in exact[position]:
                    exact.pop(position, None)
                    want(position, False)
        if waiting:
            # those come back so far (one at least): what they read is followed while
            # the workers work out the others
            settle_ready_pending([funcs[position] for position in waiting])
            ready = [position for position in waiting if not is_pending(funcs[position])]
            waiting = [position for position in waiting if is_pending(funcs[position])]
            for position in sorted(ready):
                wanted.discard(position)
                settle(position)
    return [funcs[position] for position in sorted(wanted)]
