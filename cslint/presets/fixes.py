"""Fix knowledge, shared by the analysis (fix facts), the rules and the
codemods: every pack's agreement templates and neutral values, whichever
packs are enabled, and the names that mark a call as communicating."""

from __future__ import annotations

import functools
import re
from typing import Optional

from .registry import PACKS, pack
from .specs import AgreementTemplate, NeutralTable

#: Builtins whose call neither communicates nor changes anything a rank can see.
PURE_BUILTINS = frozenset({
    "any", "all", "sum", "min", "max", "len", "bool", "int", "float", "str", "tuple", "list",
    "abs", "round", "isinstance", "sorted", "zip", "range", "enumerate", "set", "frozenset", "dict",
})

#: Words that mark a call as talking to other ranks (``send_object``,
#: ``tp_allgather``, ``broadcast_pyobj``...): a payload that calls one would
#: be observed by the other ranks, so no fix may move or duplicate it.
#: Matched by substring in any callee's last name (``analysis.callfacts.effects``:
#: a payload's effects in the fix facts the rules and codemods read), not per
#: API: the calls it must catch are mostly a project's own wrappers, which no
#: pack names, and a false match only withholds a fix.  It does not cover
#: every pack's collectives (MPI's ``Split``/``Scan``, Accelerate's
#: ``wait_for_everyone``, Lightning's ``fit`` hold none of the words).
COMMUNICATION_WORDS = ("send", "recv", "broadcast", "bcast", "gather", "allreduce", "all_reduce", "reduce",
                       "scatter", "barrier", "alltoall", "all_to_all", "publish")


#: The first words of a predicate saying that this rank is able, or allowed,
#: to do something (``_can_pause_for_rebalance()``, ``may_evict``): what it
#: guards is optional for a rank, since a rank that cannot skips it, so a gate
#: the ranks agree on lets it run only where every rank may (MIN, ``all``),
#: and its false side is a path any rank may take.  Any other predicate asks
#: whether the rank has something to do, which any rank may trigger (MAX, ``any``).
PERMISSION_WORDS = ("can", "may")

_PERMISSION_TEST = re.compile(r"^((?:not\s+)*)\(?\s*([A-Za-z_][\w.]*)(\(\s*\))?\s*\)?$")


def permission_test(text: str) -> Optional[bool]:
    """True where a test's text says this rank may do something (a name, an
    attribute or a call without arguments whose last name starts with one of
    :data:`PERMISSION_WORDS`: ``self._can_pause_for_rebalance()``), False
    where it says the opposite (``not self.can_evict``), None for any other
    test."""
    found = _PERMISSION_TEST.match(text.strip())
    if found is None:
        return None
    words = found.group(2).rsplit(".", 1)[-1].lower().lstrip("_").split("_")
    if len(words) < 2 or words[0] not in PERMISSION_WORDS:
        return None
    return found.group(1).count("not") % 2 == 0


def is_communicating_name(name: str) -> bool:
    """Whether a callee's last name looks like communication."""
    lowered = name.lower()
    return any(word in lowered for word in COMMUNICATION_WORDS)


@functools.lru_cache(maxsize=None)
def _fix_tables() -> tuple:
    agreements: dict = {}
    neutrals: dict = {}
    for name in PACKS:
        preset = pack(name)
        agreements.update(preset.agreements)
        neutrals.update(preset.neutrals)
    return agreements, neutrals


def agreement_template(name: str) -> Optional[AgreementTemplate]:
    """The agreement template a collective spec names (every pack's, whichever are enabled)."""
    return _fix_tables()[0].get(name) if name else None


def neutral_table(name: str) -> Optional[NeutralTable]:
    return _fix_tables()[1].get(name) if name else None


def render_agreement(name: str, receiver: str, group: str, group_expr: str = ""):
    """The agreement (:class:`~cslint.model.Agreement`) of template ``name``
    over ``group`` through ``receiver``, or None when this API cannot say it
    (no receiver, no allgather for the group, a group it cannot name)."""
    from ..model import Agreement

    template = agreement_template(name)
    if template is None or not receiver:
        return None
    method = ""
    if template.methods:
        method = template.method_for(group) or ""
        if not method:
            return None
    if template.needs_group_expr and group != "world" and not group_expr:
        return None
    fields = {"receiver": receiver, "method": method, "group_kw": f", group={group_expr}" if group_expr else ""}
    return Agreement(
        all_test=template.all_test.format(**fields),
        test=template.test.format(**fields),
        setup=tuple(line.format(**fields) for line in template.setup),
        setup_on_device=tuple(line.format(**fields) for line in template.setup_on_device),
        imports=template.imports,
        template=name,
    )


def render_single_rank_test(name: str, receiver: str, group: str) -> str:
    """A test that holds when ``group`` has one rank, in template ``name``'s
    API through ``receiver`` (``self.dist.pp_size == 1``); "" when unknown."""
    template = agreement_template(name)
    attribute = dict(template.sizes).get(group) if template is not None else None
    return f"{receiver}.{attribute} == 1" if attribute and receiver else ""


def agreement_groups(name: str) -> tuple:
    """The groups template ``name`` can agree over by method (empty: any, by argument)."""
    template = agreement_template(name)
    return tuple(group for group, _ in template.methods) if template is not None else ()
