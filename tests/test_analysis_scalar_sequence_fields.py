"""An element a rank-local index picks from a field its class declares a
sequence of one scalar type (``counts: Optional[List[int]] = None``) is a
number on every rank: which one differs, not what it is (issue 14: SGLang's
per-DP token counts, ``self.global_num_tokens_cpu[slot]``, made the local
bound tensor's identity differ, so ``bound is forward_batch.num_token_non_padded``
read as rank-dependent).

The declaration is read as ``structure.rows_alike`` reads a parameter
annotated as an array (every row has one shape): ``List[int]``,
``Optional[list[int]]``, ``"Sequence[float]"``, ``Tuple[int, ...]``,
``list[int] | None`` (``containers.declares_scalar_elements``).  The pick's
contents still differ, and everything the field's own structure says still
counts.  Not a fixed tuple of several types, elements that may be None,
strings, tensors or lists, a mapping, a slice, a field the class does not declare
(another class's declaration, a bare ``list``), nor a parameter or local.
Each VALID shape sits beside an INVALID one that must still be reported."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    from typing import Dict, List, Optional, Sequence, Tuple

    import torch
    import torch.distributed as dist


    def _slot():
        return dist.get_rank()


    class Counts:
        counts: Optional[List[int]] = None
        widths: "list[int] | None" = None
        scales: "Sequence[float]" = ()
        steps: Tuple[int, ...] = ()
        maybe: List[Optional[int]] = []
        pair: Tuple[int, str] = (0, "")
        shards: List[torch.Tensor] = []
        rows: List[List[int]] = []
        table: Dict[int, int] = {}
        bare: list = []
        names: List[str] = []
        grown: List[int] = []

        def __init__(self, counts, total):
            self.counts = counts
            self.total = total
            self.plain = [1, None]
            self.grown = [0] * (dist.get_rank() + 1)
            self.local = None

        def declared_list(self, t):
            if self.counts[_slot()] is None:
                return
            dist.all_reduce(t)  # VALID: every element is an int

        def declared_union(self, t):
            if self.widths[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # VALID: a string annotation, ``X | None``

        def declared_sequence(self, t):
            if self.scales[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # VALID: a sequence of floats

        def declared_tuple(self, t):
            if self.steps[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # VALID: ``Tuple[int, ...]``

        def bound_identity(self, t):
            width = self.counts[_slot()]
            self.local = torch.clamp(self.total - width, 0, width)
            if self.local is self.total:
                return
            dist.all_reduce(t)  # VALID: the count picked is a number either way

        def contents_read(self, t):
            if self.counts[_slot()] > 0:
                return
            dist.all_reduce(t)  # INVALID: the value picked differs

        def optional_elements(self, t):
            if self.maybe[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: an element may be None

        def fixed_tuple(self, t):
            if self.pair[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: the positions hold different types

        def tensor_elements(self, t):
            if len(self.shards[dist.get_rank()]) > 2:
                return
            dist.all_reduce(t)  # INVALID: the tensors' lengths may differ

        def list_elements(self, t):
            if len(self.rows[dist.get_rank()]) > 2:
                return
            dist.all_reduce(t)  # INVALID: the inner lists' lengths may differ

        def mapping(self, t):
            if self.table[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: a mapping, not a sequence

        def strings(self, t):
            if len(self.names[dist.get_rank()]) > 3:
                return
            dist.all_reduce(t)  # INVALID: each string has its own length

        def bare_list(self, t):
            if self.bare[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: nothing said of the elements

        def undeclared(self, t):
            if self.plain[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: an undeclared field

        def sliced(self, t):
            if len(self.counts[dist.get_rank():]) > 1:
                return
            dist.all_reduce(t)  # INVALID: a slice's length follows the rank

        def grown_list(self, t):
            if self.grown[0] is None:
                return
            dist.all_reduce(t)  # INVALID: the list's own length follows the rank

        def parameter(self, t, counts: List[int]):
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: a parameter's declaration is not the field's

        def alias(self, t):
            counts = self.maybe
            if counts[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: a local bound to the field

        def tuple_element(self, t):
            held = (self.maybe, self.counts)
            if held[0][dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: an element of a tuple holding the field


    class Derived(Counts):
        def inherited(self, t):
            if self.maybe[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: elements that may be None, declared in the base


    class Other:
        def __init__(self, counts):
            self.counts = counts

        def same_name(self, t):
            if self.counts[dist.get_rank()] is None:
                return
            dist.all_reduce(t)  # INVALID: another class's field of the same name
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_pick_from_a_field_declared_a_sequence_of_scalars_is_a_number(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "counts.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code == "CSL102"})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
