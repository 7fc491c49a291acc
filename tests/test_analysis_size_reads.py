"""A size-named name is a group's size only where what it holds is one
(issues 12 and 14, ``cslint.analysis.sizereads``).  ``dp_size =
len(own_requests)`` holds this rank's own count whatever it is called: a
test of it against 1 is an ordinary test of a rank-local value, not a test
of whether a group has one rank, and ``world_size > 1`` of such a local does
not hold in every world of several ranks.  Names and fields that hold a
size read from a size source keep their reading."""

import ast
import random
import re
import textwrap

from cslint.analysis.sizereads import size_reads_of, walrus_may_bind_size, walrus_targets
from cslint.api import check_paths

_OWN_COUNT = "len([r for r in reqs if r.owner == dist.get_rank()])"


def _lines(tmp_path, source: str) -> list:
    path = tmp_path / "sizes.py"
    path.write_text(textwrap.dedent(source))
    return sorted(f.line for f in check_paths([str(path)], report="per-site").findings)


_FOLD = """
    import torch
    import torch.distributed as dist


    def step(reqs, x):
        world_size = SOURCE
        if world_size > 1:
            dist.all_reduce(x)
        return x
"""


def test_a_world_size_local_holding_this_ranks_own_count_does_not_fold(tmp_path):
    assert _lines(tmp_path, _FOLD.replace("SOURCE", _OWN_COUNT)) == [9]


def test_a_world_size_local_unpacked_from_a_call_does_not_fold(tmp_path):
    source = _FOLD.replace("world_size = SOURCE", "world_size, _ = divmod(" + _OWN_COUNT + ", 2)")
    assert _lines(tmp_path, source) == [9]


def test_a_world_size_local_read_from_the_world_still_folds(tmp_path):
    # in a world of several ranks ``world_size > 1`` holds: the collective runs on every rank
    assert _lines(tmp_path, _FOLD.replace("SOURCE", "dist.get_world_size()")) == []
    assert _lines(tmp_path, _FOLD.replace("SOURCE", 'int(os.environ.get("WORLD_SIZE", 1))')
                  .replace("import torch\n", "import os\n    import torch\n", 1)) == []


_BOUND = """
    import torch
    import torch.distributed as dist
    from sglang.srt.distributed import get_dp_group


    class Scheduler:
        def __init__(self, reqs):
            dp_size = SOURCE
            if dp_size == 1:
                self.loop = self._loop_one
            else:
                self.loop = self._loop_many

        def _loop_one(self):
            if dist.get_rank() % 2:
                dist.all_reduce(torch.zeros(1), group=get_dp_group().device_group)

        def _loop_many(self):
            dist.barrier()

        def run(self):
            self.loop()
"""


def test_a_method_bound_where_a_size_named_count_is_one_may_run_on_several_ranks(tmp_path):
    # the ranks with one request of their own each run ``_loop_one``: many of them, and they part ways
    assert _lines(tmp_path, _BOUND.replace("SOURCE", _OWN_COUNT)) == [17]


def test_a_method_bound_where_the_groups_size_is_one_runs_where_it_has_one_rank(tmp_path):
    assert _lines(tmp_path, _BOUND.replace("SOURCE", "get_dp_group().world_size")) == []


_FIELD = """
    import torch
    import torch.distributed as dist


    class Worker:
        def __init__(self, reqs, group):
            self.num_tp_ranks = SOURCE

        def step(self, group):
            if self.num_tp_ranks > 1:
                dist.all_reduce(torch.zeros(1), group=group)
"""


def test_a_size_named_field_set_to_this_ranks_own_count_is_read_by_what_it_holds(tmp_path):
    assert _lines(tmp_path, _FIELD.replace("SOURCE", _OWN_COUNT)) == [12]


def test_a_size_named_field_set_to_a_groups_size_stays_uniform(tmp_path):
    assert _lines(tmp_path, _FIELD.replace("SOURCE", "dist.get_world_size(group)")) == []


_TP_FIELD = """
    import torch.distributed as dist


    class Worker:
        def __init__(self, reqs):
            self.tp_size = dist.get_world_size()
            STORE

        def step(self, x):
            if self.tp_size > 1:
                dist.all_reduce(x)
            return x
"""


def test_a_size_field_a_tuple_or_a_second_store_sets_to_this_ranks_own_count_does_not_fold(tmp_path):
    # every store counts, an element of an unpacking too
    for store in ("self.tp_size = " + _OWN_COUNT, '(self.tag, self.tp_size) = ("w", ' + _OWN_COUNT + ")",
                  "self.tag, self.tp_size = divmod(" + _OWN_COUNT + ", 2)"):
        assert _lines(tmp_path, _TP_FIELD.replace("STORE", store)) == [12], store


def test_a_size_field_every_store_of_which_holds_a_size_still_folds(tmp_path):
    for store in ('(self.tag, self.tp_size) = ("w", dist.get_world_size())', "pass"):
        assert _lines(tmp_path, _TP_FIELD.replace("STORE", store)) == [], store


def test_a_size_name_in_another_case_holding_this_ranks_own_count_does_not_fold(tmp_path):
    source = _FIELD.replace("num_tp_ranks", "Num_TP_Ranks").replace("SOURCE", _OWN_COUNT)
    assert _lines(tmp_path, source) == [12]
    assert _lines(tmp_path, _FIELD.replace("num_tp_ranks", "Num_TP_Ranks").replace(
        "SOURCE", "dist.get_world_size(group)")) == []


def test_a_walrus_binding_this_ranks_own_count_does_not_fold(tmp_path):
    walrus = ("world_size = dist.get_world_size()\n"
              "        if (world_size := SOURCE) > 8:\n"
              "            print(world_size)")
    assert _lines(tmp_path, _FOLD.replace("world_size = SOURCE", walrus).replace("SOURCE", _OWN_COUNT)) == [11]
    assert _lines(tmp_path, _FOLD.replace("world_size = SOURCE", walrus).replace(
        "SOURCE", "dist.get_world_size()")) == []



def test_the_walrus_search_finds_each_name_once_and_reads_long_names_once():
    """walrus_may_bind_size reads a long name that no ``:=`` follows once
    (the search began again at each letter of it: a name of 10,000 letters
    took seconds), and still finds the names a ``:=`` binds: the first
    letter of a run of name characters (digits before it left out), text
    and bytes alike."""
    long_name = "x" * 10_000 + " = 1\n"
    assert walrus_may_bind_size(long_name + "if (n := 2): pass\n") is False
    assert walrus_may_bind_size(long_name.encode() + b"if (world_size := 2): pass\n")
    assert walrus_may_bind_size("if (world_size := n): pass")
    assert walrus_may_bind_size(b"if (world_size\t:=n): pass")
    assert walrus_may_bind_size("# 2world_size := n")  # (a comment may hold one: a superset)
    assert walrus_may_bind_size("if (rank := n): world_size = 2") is False
    assert walrus_may_bind_size(b"a.world_size := n")  # (no valid binding, still a candidate)


#: the pattern walrus_targets reads back from each ``:=`` instead of matching it at every name
_WALRUS_PATTERN = r"(?<![A-Za-z_])([A-Za-z_][A-Za-z0-9_]*)\s*:="


def test_the_walrus_targets_are_those_of_the_pattern():
    """walrus_targets finds what the pattern finds, in order, text and bytes: digits before a name, a name
    after a non-ASCII letter, spaces of every kind (a text's Unicode ones, which bytes do not count), colons
    and ``=`` around, ``:=`` twice in a row, at the start and at the end."""
    pieces = ["a", "b_", "_", "1", "9", " ", "\t", "\n", "\x0b", "\x0c", "\r", ":", "=", ":=", "é", "\u2003",
              "\x1c", "\x85", "(", ".", "x:=", "#"]
    rng = random.Random(57)
    samples = ["", ":=", "x:=", "  :=", "1:=", "12ab :=", "1a2b\t:=", "éab:=", "a::=", "a:=:=", "a := := b :=", "ab:"]
    samples += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(20_000)]
    for text in samples:
        for source in (text, text.encode("utf-8")):
            expected = re.findall(_WALRUS_PATTERN if type(source) is str else _WALRUS_PATTERN.encode(), source)
            assert walrus_targets(source) == expected, repr(source)


def _unheld(source: str) -> tuple:
    """The names of the size-named reads and the fields that hold no size (sizereads.size_reads_of)."""
    tree = ast.parse(textwrap.dedent(source))
    reads, fields = size_reads_of(tree, frozenset(), frozenset())
    names = sorted((node.id, node.lineno) for node in ast.walk(tree) if id(node) in reads)
    return names, sorted(fields)


def test_a_store_through_a_method_s_receiver_in_a_nested_function_counts():
    source = """
        class Worker:
            def __init__(self, reqs):
                self.world_size = 8

                def recount():
                    self.world_size = len(reqs)
                recount()
    """
    assert _unheld(source) == ([], ["world_size"])
    assert _unheld(source.replace("len(reqs)", "4")) == ([], [])
    # a nested function's own parameter of that name is another object
    assert _unheld(source.replace("def recount():", "def recount(self):")) == ([], ["world_size"])
    assert _unheld(source.replace("def recount():", "def recount(other, self=None):")
                   .replace("len(reqs)", "4")) == ([], [])


def test_a_name_declared_global_or_nonlocal_is_bound_where_it_is_declared_to_be():
    module = """
        world_size = 8


        def setup(reqs):
            global world_size
            world_size = len(reqs)


        def step():
            return world_size > 1


        def check():
            global world_size
            return world_size > 1
    """
    assert _unheld(module) == ([("world_size", 11), ("world_size", 16)], [])
    assert _unheld(module.replace("len(reqs)", "4")) == ([], [])
    nested = """
        def step(reqs):
            world_size = 8

            def recount():
                nonlocal world_size
                world_size = len(reqs)
            recount()
            return world_size > 1
    """
    assert _unheld(nested) == ([("world_size", 9)], [])
    assert _unheld(nested.replace("len(reqs)", "4")) == ([], [])


# A name declared ``global`` or ``nonlocal`` is bound in the scope it names
# AND read where it is declared: its other bindings there (``world_size =
# tp_size``) read what it holds.  Moving its bindings out left that scope
# judging ``world_size`` against nothing, so a size alias of the rank folded.
_DECLARED = {
    "global_alias": """
        import torch.distributed as dist

        tp_size = 1
        world_size = 1


        def g(x):
            global tp_size, world_size
            tp_size = dist.get_rank() + 1
            world_size = tp_size
            if world_size > 1:
                dist.all_reduce(x)
    """,
    "global_then_local": """
        import torch.distributed as dist

        tp_size = 1


        def g(x):
            global tp_size
            tp_size = dist.get_rank() + 1
            world_size = tp_size
            if world_size > 1:
                dist.all_reduce(x)
    """,
    "nonlocal_then_local": """
        import torch.distributed as dist


        def outer(x):
            tp_size = dist.get_world_size()

            def inner():
                nonlocal tp_size
                tp_size = dist.get_rank() + 1
                world_size = tp_size
                if world_size > 1:
                    dist.all_reduce(x)

            inner()
    """,
}


def test_a_size_alias_of_a_declared_name_holding_the_rank_does_not_fold(tmp_path):
    for name, source in _DECLARED.items():
        assert _lines(tmp_path, source), name


def test_a_size_alias_of_a_declared_name_holding_a_size_still_folds(tmp_path):
    source = _DECLARED["global_then_local"].replace("dist.get_rank() + 1", "dist.get_world_size()")
    assert _lines(tmp_path, source) == []
