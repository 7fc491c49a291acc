"""Which call is a collective and over which group, mixed into the module context (:class:`CollectiveGroups`): a
call's match against the configured and preset collectives (``match_collective``), the group its arguments or its
receiver name (``named_group``), the arguments of any call that may be a process group (``group_arguments``), and
the group an expression's text names, a field of ``self`` through what every assignment of it in the file names
(``group_of_text``)."""

from __future__ import annotations

import ast
from typing import Optional

from ..config import text_matches
from ..presets import group_from_text
from .communicators import built_over_fields, same_rank_field
from .records import CollectiveMatch, IssuingRoute
from .astwalk import imported_names, param_names, walked
from .bindings import local_values
from .syntax import dotted, unparse
from .vocabulary import TORCH_DISTRIBUTED_MODULES, TORCH_DISTRIBUTED_RECEIVERS, looks_like_communicator


#: the nodes that bind the name they carry (``except ... as name``, a definition, a ``match`` capture)
_NAMED_BINDINGS = frozenset({ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.MatchAs, ast.MatchStar})

#: how many assignments deep a text's group is followed to the world's words (``self.cpu = self.tp_group.cpu_group``)
_WORLD_BINDING_DEPTH = 2


class CollectiveGroups:
    """Mixed into :class:`~cslint.analysis.scope.ModuleContext`: reads the run's ``knowledge``, the configured
    ``user_collectives``, the module's ``comm_names`` and ``field_writes``, and keeps its answers per text."""
    def match_collective(self, call: ast.Call, raw: Optional[str], canon: Optional[str]):
        """A :class:`CollectiveMatch` when the call is a collective, else None."""
        if not raw:
            return None
        key = (raw, canon)
        cached = self._collective_cache.get(key)
        if cached is None:
            cached = self._collective_spec(raw, canon)
            self._collective_cache[key] = cached
        if cached is False:
            return None
        spec, user_group = cached
        name = raw.rsplit(".", 1)[-1]
        receiver = raw.rsplit(".", 1)[0] if "." in raw else ""
        if spec is None:
            return CollectiveMatch(name, user_group or self._infer_group(call, receiver, None) or "world", "unknown",
                                   None)
        # a library helper over a fixed group (``tensor_model_parallel_all_reduce``: TP) runs over
        # the group the module's world names it by, where it names one (SGLang's helpers: its full TP group)
        # (a helper over the whole world is over every rank in any world)
        group = ((spec.group != "world" and self.world.own_group(raw)) or spec.group) if spec.group else \
            self._infer_group(call, receiver, spec) or "world"
        api = spec.api
        if api == "torch" and receiver.startswith("self") and receiver.rsplit(".", 1)[-1] in ("dist", "_dist") \
                and "tensorrt_llm" in self.knowledge.names:
            api = "trtllm"
        return CollectiveMatch(name, group, api, spec)

    def _collective_spec(self, raw: str, canon: Optional[str]):
        texts = (raw, canon) if canon and canon != raw else (raw,)
        receiver = raw.rsplit(".", 1)[0] if "." in raw else ""
        for pattern in self.user_collectives:
            pat, _, group = pattern.partition(":")
            if text_matches(texts, pat):
                return (None, group or None)
        tail = raw.rsplit(".", 1)[-1]
        if self.knowledge.is_not_collective(raw):
            return False
        matching = []
        for spec in self.knowledge.candidates("collectives", tail):
            if not text_matches(texts, spec.pattern):
                continue
            if spec.receiver == "comm" and not looks_like_communicator(receiver) and receiver not in self.comm_names:
                continue
            if receiver in ("np", "numpy", "torch", "jnp", "tf", "F", "functools", "operator", "math", "itertools"):
                if not (canon or "").startswith("torch.distributed"):
                    continue
            matching.append(spec)
        if not matching:
            return False
        # The most specific pattern names the API (`*.dist.allreduce`, TensorRT-LLM's Distributed, over
        # `*.allreduce`, any mpi4py communicator); declaration order breaks ties.
        return (max(matching, key=lambda spec: len(spec.pattern.replace("*", ""))), None)

    def group_arguments(self, call: ast.Call) -> tuple:
        """((position or keyword, text), ...) for the arguments of a call
        that may be a process group: names, attribute and call chains as
        their dotted text, ``None`` (the world) as ``""``; the receiver of a
        method call under the keyword ``self``.  Nothing after ``*args``.
        Only texts: what group one names is worked out where a callee's
        collective is over that parameter (:func:`program.bound_group`);
        a field of this class (``self.gloo_group``) whose text names no
        group but every assignment of which in this file names one
        (:meth:`_field_groups`) is passed as that group's name, as the
        field's collectives read it (:meth:`group_of_text`)."""
        out = []
        for position, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                break
            text = _group_argument(arg)
            if text is not None:
                out.append((position, _field_group_name(self, text)))
        for keyword in call.keywords:
            if keyword.arg is not None:
                text = _group_argument(keyword.value)
                if text is not None:
                    out.append((keyword.arg, _field_group_name(self, text)))
        func = call.func
        if type(func) is ast.Attribute and type(func.value) in (ast.Name, ast.Attribute, ast.Call):
            receiver = dotted(func.value)
            if receiver and receiver != "self":  # the instance a method runs on
                out.append(("self", receiver))
        return tuple(out)

    def group_of_text(self, text: str) -> str:
        """The group an expression's text names: a dimension its words
        say (``get_tp_group().cpu_group``: ``tp``), or for a field
        (``self.sync_group``) the one group every assignment of that field
        in this file names (``self.sync_group = scheduler.tp_cpu_group``;
        ``None`` aside); else ``group:<text>``, a field of the same ranks as
        another named by the first (:func:`~.communicators.same_rank_field`)."""
        group = self.group_word(text)
        if group is not None:
            return group
        if text.startswith("self.") and text.count(".") == 1:
            group = self._field_groups().get(text[len("self."):])
            if group:
                return group
            over = built_over_fields(self).get(text[len("self."):])
            if over:  # a communicator built over another group field of the object (``group=self.cpu_group``)
                return self.group_word(over) or self._field_groups().get(over[len("self."):]) \
                    or f"group:{same_rank_field(self, over)}"
        return f"group:{same_rank_field(self, text)}"

    def _field_groups(self) -> dict:
        """attr -> the group every ``self.attr = ...`` of this file names
        ("" where some assignment names none or they differ); worked out on
        first use."""
        table = self.__dict__.get("_field_group_table")
        if table is not None:
            return table
        table = {}
        for attr, value in self.field_writes:
            if isinstance(value, ast.Constant) and value.value is None:
                continue  # not set up (yet): no group at all
            text = dotted(value) if isinstance(value, (ast.Name, ast.Attribute, ast.Call)) else None
            group = (self.group_word(text) or "") if text else ""
            known = table.get(attr)
            table[attr] = group if known is None or known == group else ""
        self.__dict__["_field_group_table"] = table
        return table

    def _infer_group(self, call: ast.Call, receiver: str, spec) -> Optional[str]:
        argument = named_group(self, call, spec)
        if argument is not None:
            return argument
        if receiver and receiver not in TORCH_DISTRIBUTED_RECEIVERS:
            return self.group_word(receiver)
        return None

    def group_word(self, text: str) -> Optional[str]:
        """The group an expression's text names in this module: the one the
        module's world names it by (:meth:`world_group`), else the generic
        reading (:func:`~cslint.presets.group_from_text`)."""
        # (asked of every group text of every module: the generic reading without a call more where no words apply)
        return (self.world.words and self.world_group(text)) or group_from_text(text)

    def _unfollowed_names(self) -> frozenset:
        """The names of this file whose group :meth:`world_group` does not follow (worked out on first use):
        every function's parameters, and every name bound anywhere otherwise than by a ``name = value``
        :attr:`name_writes` records (a loop, ``with`` or tuple target, a walrus, ``except ... as``, an
        import, a definition, ``group = groups[i]``, an augmented assignment): what such a name holds is
        not the value its recorded writes hold."""
        found = self.__dict__.get("_unfollowed_name_set")
        if found is not None:
            return found
        recorded: dict = {}
        for name, _value in self.name_writes:
            recorded[name] = recorded.get(name, 0) + 1
        stores: dict = {}
        unfollowed = set()
        for node in walked(self.tree):
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:
                    stores[node.id] = stores.get(node.id, 0) + 1
            elif kind is ast.arg:
                unfollowed.add(node.arg)
            elif kind in _NAMED_BINDINGS:
                if node.name:  # (``except E:``, a ``case _`` bind none)
                    unfollowed.add(node.name)
            elif kind is ast.Import or kind is ast.ImportFrom:
                unfollowed.update(imported_names(node))
            elif kind is ast.Global or kind is ast.Nonlocal:
                unfollowed.update(node.names)
        unfollowed.update(name for name, count in stores.items() if recorded.get(name) != count)
        found = self.__dict__["_unfollowed_name_set"] = frozenset(unfollowed)
        return found

    def world_group(self, text: str, depth: int = 0) -> Optional[str]:
        """The group the module's world names ``text`` by (:attr:`~cslint.presets.World.words`),
        or that it names what every assignment in this file of the name or the
        field of ``self`` the text starts from holds (``tp_group =
        get_parallel().tp_group``, then ``tp_group.cpu_group``); None where
        it names none (a parameter's text, which callers bind)."""
        world = self.world
        if not world.words:
            return None
        found = world.own_group(text)
        if found is not None or depth >= _WORLD_BINDING_DEPTH:
            return found
        memo = self.__dict__.setdefault("_world_groups", {})
        key = (text, depth)
        if key in memo:
            return memo[key]
        head, _, rest = text.partition(".")
        if head == "self":
            head = rest.partition(".")[0]
            # a field not set up yet (``self.x = None``) holds no group at all, as in :meth:`_field_groups`
            values = [value for attr, value in self.field_writes
                      if attr == head and not (type(value) is ast.Constant and value.value is None)]
        elif head in self._unfollowed_names():
            return None  # a parameter, a loop target...: what it holds is not what its plain writes hold
        else:
            values = [value for name, value in self.name_writes if name == head]
        groups = {self.world_group(dotted(value) or "", depth + 1) if type(value) in (ast.Name, ast.Attribute, ast.Call)
                  else None for value in values}
        found = memo[key] = next(iter(groups)) if len(groups) == 1 else None
        return found


def _group_argument(node: ast.AST) -> Optional[str]:
    """The text of an argument that may be a process group (a name, an
    attribute or call chain), ``""`` for ``None``; None for anything else."""
    t = type(node)
    if t is ast.Name or t is ast.Attribute or t is ast.Call:
        return dotted(node)
    if t is ast.Constant and node.value is None:
        return ""
    return None


def _field_group_name(ctx, text: str) -> str:
    """``text``, or for ``self.attr`` that names no group itself the name of
    the one group every assignment of the field in the file names
    (``ModuleContext._field_groups``), or the group the module's world names
    by a word of its own where it reads the text otherwise than the generic
    words do (SGLang's ``tp_group``: :attr:`~cslint.presets.World.words`):
    the callee binds what is passed by its text alone."""
    if text.startswith("self.") and text.count(".") == 1:
        group = ctx._field_groups().get(text[len("self."):])
        if group and group_from_text(text) is None:
            return group
    own = ctx.world_group(text) if ctx.world.words else None
    return own if own is not None else text


def named_group(ctx, call: ast.Call, spec) -> Optional[str]:
    """The group a collective call names by an argument (its keyword, or
    the position the library's signature gives it); None where it names
    none."""
    argument = group_argument_node(call, spec)
    if argument is None:
        return None
    if isinstance(argument, ast.Constant) and argument.value is None:
        return "world"
    return ctx.group_of_text(spec.group_object(unparse(argument)) if spec else unparse(argument))


def group_argument_node(call: ast.Call, spec) -> Optional[ast.AST]:
    """The argument by which a collective call names its group (its keyword,
    or the position the library's signature gives it); None where none does."""
    kw = spec.group_kw if spec else "group"
    for keyword in call.keywords:
        if keyword.arg in (kw, "group", "process_group", "comm", "pg"):
            return keyword.value
    if spec is not None and spec.group_arg is not None and len(call.args) > spec.group_arg:
        return call.args[spec.group_arg]
    return None


def method_receiver(call: ast.Call, spec) -> Optional[ast.expr]:
    """The receiver of a method collective over no fixed group (a spec
    ``*.name``: ``comm`` of ``comm.all_reduce(x)``), whose communicator is
    the group it runs over; None for any other call."""
    if spec is None or spec.group is not None or not spec.pattern.startswith("*.") \
            or type(call.func) is not ast.Attribute:
        return None
    return call.func.value


def issuing_route(func, call: ast.Call, spec, imported_text) -> Optional[IssuingRoute]:
    """The communicator the collective ``call`` (in the function ``func``)
    is asked of (:class:`~cslint.analysis.records.IssuingRoute`): the object
    a method pattern's receiver is (``comm = self.pynccl_comm;
    comm.all_reduce(x)``: ``self.pynccl_comm``, a local followed to the one
    text every binding of it gives), or for a library function the group it
    is handed (``dist.all_reduce(x, group=g)``).  None where the call does
    not say: a configured collective, a library helper over a fixed group
    (``tensor_model_parallel_all_reduce`` picks its coordinator's
    communicator itself), an object or group the text cannot follow.
    ``imported_text``: a text spelt from the module its first name is
    imported from, None where the function does not read that name from
    an import (function.imported_text)."""
    if spec is None or spec.group is not None:
        return None
    if spec.pattern.startswith("*."):
        receiver = method_receiver(call, spec)
        if receiver is None:
            return None
        handle = _followed_text(func, receiver)
        return IssuingRoute("", got_object(handle)) if handle else None
    module = spec.pattern.rpartition(".")[0]
    module = "torch.distributed" if module in TORCH_DISTRIBUTED_RECEIVERS else module
    argument = group_argument_node(call, spec)
    if argument is None or type(argument) is ast.Constant and argument.value is None:
        return IssuingRoute(module, "")  # the default group
    handle = _followed_text(func, argument)
    if not handle:
        return None
    if module == "torch.distributed" and _names_default_group(handle, imported_text):
        return IssuingRoute(module, "")  # the default group by its name: the same communicator
    # torch.distributed runs a collective on the group's own backend: the
    # group object is the communicator, as when its method is called
    return IssuingRoute("" if module == "torch.distributed" else module, got_object(spec.group_object(handle)))


#: torch.distributed's default group by its name, spelt from the module each name is imported from
_DEFAULT_GROUP_TEXTS = frozenset(f"{module}.{name}" for module in TORCH_DISTRIBUTED_MODULES
                                 for name in ("group.WORLD", "GroupMember.WORLD", "_get_default_group()"))


def _names_default_group(text: str, imported_text) -> bool:
    """Whether ``text`` names torch.distributed's default group, the one a
    collective handed no group runs over: ``dist.group.WORLD``,
    ``GroupMember.WORLD``, ``_get_default_group()`` (bare or on the
    module), each name as the file imports it from torch.distributed (a
    parameter ``group`` is what its caller hands: ``group.WORLD`` is a field
    of it, any group)."""
    last = text.rpartition(".")[2]
    if last != "WORLD" and last != "_get_default_group()":  # (most texts: no import read)
        return False
    return imported_text(text) in _DEFAULT_GROUP_TEXTS


def got_object(text: str) -> str:
    """An object's text, where a getter hands it back (``self.mpu.
    get_pipe_parallel_group()``), the getter's call alone: a framework keeps
    one group per getter and reaches its holder by several fields (``self.mpu``,
    ``self.grid``), so the getter names the group and the path to it does not."""
    _, dot, last = text.rpartition(".")
    return last if dot and last.endswith("()") else text


def _followed_text(func, node: ast.AST) -> Optional[str]:
    """The dotted text of ``node`` with its first name, a local of ``func``,
    replaced by the one dotted text every binding of it assigns (twice at
    most: ``comm = self.pynccl_comm``); a parameter, ``self`` or a global
    stays as written.  None for anything else (a subscript, a local bound
    to several values or otherwise than by a plain assignment)."""
    text = dotted(node)
    for _ in range(2):
        if not text:
            return None
        head, dot, rest = text.partition(".")
        if "(" in head or func is None:
            return text
        values = local_values(func, head)
        if values is None:
            return text if head in param_names(func) else None
        if not values:
            return text  # a global, or a name the function never binds
        texts = {dotted(value) if type(value) in (ast.Name, ast.Attribute, ast.Call) else None for value in values}
        if len(texts) != 1 or None in texts:
            return None
        text = f"{next(iter(texts))}{dot}{rest}"
    return text


def runs_over_receiver(ctx, call: ast.Call, match) -> bool:
    """Whether a group-coordinator method collective (``group.all_gather(t)``:
    a torch-API method of no fixed group, called on a name) runs over the
    object it is called on: no argument names its group, and the receiver's
    text names none either (read as the world until then)."""
    spec = match.spec
    return spec is not None and spec.group is None and spec.api == "torch" and match.group == "world" \
        and type(call.func) is ast.Attribute and type(call.func.value) is ast.Name \
        and named_group(ctx, call, spec) is None
