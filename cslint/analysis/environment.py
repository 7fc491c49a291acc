"""Dataflow environments that share what they do not change.

The CFG dataflow keeps one environment (variable -> atoms) on entry to every
node and one on exit from every node that assigns.  A copy per node costs
nodes x variables: harmless in a function, but the module-level code of a
large file defines thousands of names in thousands of statements (imports,
``def``, ``class``), and a 4 MB module took 1 GB of environments alone.

:func:`fork` therefore gives a plain ``dict`` copy of a small environment,
and for a large one a :class:`LayeredEnv`: a stack of shared, read-only
layers (the largest at the bottom, each at most a quarter of the one below,
as in a log-structured merge tree) under the environment's own few writes,
kept in the dict itself.  When its writes fill a small layer, a fork stacks
them as a new layer and merges layers that grew too large for their place.
A chain of n writes over v variables then keeps about n * log(v) entries
instead of n * v, and a lookup probes a handful of dicts.  Environments are
written only while they are built (a merge, a transfer) and are read-only
once published, which is what makes the sharing safe.

A :class:`LayeredEnv` is a mapping with the same contents, iteration order
and equality as the plain dict it replaces, so the evaluator reads both
alike (``in``, ``[]``, ``get``, ``items``, ``dict(env)``).
"""

from __future__ import annotations

#: Environments with fewer variables are copied outright (every function but
#: the largest module-level code).
LAYER_FROM = 256
#: Own writes an environment holds before a fork stacks them as a layer.
TOP = 16
#: Each layer holds at most 1/GROWTH of the entries of the layer below.
GROWTH = 4

_MISSING = object()


class LayeredEnv(dict):
    """The read-only ``layers`` (largest first) overlaid with this dict's own items."""

    __slots__ = ("layers",)

    def __init__(self, layers: tuple):
        super().__init__()
        self.layers = layers

    # -- lookups: own items first, then the layers from the top --------------------------
    def __missing__(self, key):
        layers = self.layers
        for index in range(len(layers) - 1, -1, -1):
            found = layers[index].get(key, _MISSING)
            if found is not _MISSING:
                return found
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        if dict.__contains__(self, key):
            return True
        for layer in self.layers:
            if key in layer:
                return True
        return False

    def get(self, key, default=None):
        found = dict.get(self, key, _MISSING)
        if found is not _MISSING:
            return found
        layers = self.layers
        for index in range(len(layers) - 1, -1, -1):
            found = layers[index].get(key, _MISSING)
            if found is not _MISSING:
                return found
        return default

    # -- the whole mapping, in the order of a plain copy ---------------------------
    def items(self):
        """Keys in the order a plain dict would hold them (first written
        first), each with its newest value."""
        stack = self.layers + (dict(dict.items(self)),)
        for depth, layer in enumerate(stack):
            below = stack[:depth]
            for key in layer:
                if any(key in lower for lower in below):
                    continue  # listed already, where it was first written
                yield key, self[key]

    def keys(self):
        return [key for key, _value in self.items()]

    def values(self):
        return [value for _key, value in self.items()]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self) -> int:
        return sum(1 for _item in self.items())

    def __bool__(self) -> bool:
        return dict.__len__(self) > 0 or any(self.layers)

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, dict):
            return NotImplemented
        if type(other) is LayeredEnv and other.layers is self.layers:
            # the same layers: only the keys either one wrote can differ
            for key in set(dict.keys(self)) | set(dict.keys(other)):
                mine, theirs = self.get(key, _MISSING), other.get(key, _MISSING)
                if mine is not theirs and mine != theirs:
                    return False
            return True
        mine = dict(self.items())
        theirs = dict(other.items()) if type(other) is LayeredEnv else other
        if len(mine) != len(theirs):
            return False
        for key, value in mine.items():
            found = theirs.get(key, _MISSING)
            if found is not value and found != value:
                return False
        return True

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return (dict, (dict(self.items()),))

    def own_keys(self):
        return dict.keys(self)


def fork(env: dict) -> dict:
    """A new environment with ``env``'s contents, to write to; ``env`` is
    not changed, and must not change after this call."""
    if type(env) is LayeredEnv:
        if dict.__len__(env) < TOP:
            new = LayeredEnv(env.layers)
            dict.update(new, dict.items(env))
            return new
        layers = list(env.layers)
        layers.append(dict(dict.items(env)))
        while len(layers) >= 2 and len(layers[-1]) * GROWTH > len(layers[-2]):
            upper = layers.pop()
            merged = dict(layers.pop())
            merged.update(upper)
            layers.append(merged)
        return LayeredEnv(tuple(layers))
    if len(env) < LAYER_FROM:
        return dict(env)
    return LayeredEnv((env,))


def merge_into(merged: dict, other: dict) -> None:
    """``merged[k] |= other[k]`` for every variable of ``other`` (may-union;
    a variable only one side has keeps that side's atoms)."""
    if type(merged) is LayeredEnv and type(other) is LayeredEnv and merged.layers is other.layers:
        # The same layers: only the variables either side wrote can differ.
        # Writes of ``other`` first, in their order (a new variable is
        # appended, as a plain merge appends it), then those only ``merged``
        # wrote.
        written = list(other.own_keys())
        seen = set(written)
        written += [key for key in merged.own_keys() if key not in seen]
        pairs = [(key, other.get(key, _MISSING)) for key in written]
    else:
        pairs = other.items()
    for key, value in pairs:
        if value is _MISSING:
            continue
        old = merged.get(key)
        if old is None:
            merged[key] = value
        elif old is not value and not value <= old:
            # (most sets met are equal, or one holds the other: a subset test
            # reads one of them and builds nothing, where a union copies both)
            merged[key] = value if old <= value else old | value


def snapshot(order: list, envs_in: dict, outs: dict, numbers: "EnvNumbers") -> tuple:
    """The solver's values, comparable and hashable: every node's
    environments on entry and exit, each as the number of its contents."""
    number = numbers.of
    return tuple((number(envs_in[n]) if n in envs_in else None,
                  number(outs[n]) if n in outs else None) for n in order)


class EnvNumbers:
    """A number per distinct environment contents (variables in their
    order), so that a snapshot of the solver costs one lookup per node.
    An environment is read-only once published, and the solver keeps the
    one it has where a new one would be equal: between two snapshots most
    nodes hold the same objects, whose contents are listed once."""

    __slots__ = ("_by_contents", "_by_object")

    def __init__(self):
        self._by_contents: dict = {}  # tuple(env.items()) -> number
        self._by_object: dict = {}  # id(env) -> (env, number); the env kept alive so its id stays its own

    def of(self, env) -> int:
        known = self._by_object.get(id(env))
        if known is not None and known[0] is env:
            return known[1]
        contents = tuple(env.items())
        number = self._by_contents.setdefault(contents, len(self._by_contents))
        self._by_object[id(env)] = (env, number)
        return number
