"""A name rebound on some ranks to its own value cut, reshaped or padded
(``analysis/copies.py`` ``resizes_itself``): ``x = F.pad(x, [0, pad])``,
``x = x[:n]``, ``x = x.view(-1)``.  What comes back is of the name's own
kind (a tensor of the same element type, on the same device), whatever size
the ranks' test asked for, so a later test of its kind (``x.is_cuda``,
``x.dtype``) reads what every rank holds alike; its size and contents still
differ.  Each VALID shape sits beside the INVALID one that must be reported.
The shape is a context-parallel gather that trims this rank's rows to its
share and pads them to the longest share before an all-gather whose staging
depends on whether the rows live on the GPU.
"""

import textwrap

from cslint.api import check_paths

GATHER = """
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F


    class RowGather:
        def __init__(self, cp_rank, group):
            self.cp_rank = cp_rank
            self.group = group

        def gather(self, rows, shares):
            longest = max(shares)
            mine = shares[self.cp_rank]
            {trim}
            if {test}:
                dist.all_gather_into_tensor(rows, rows, group=self.group)
            return rows
"""

PADDED = """rows = rows[:mine]
            missing = longest - rows.shape[0]
            if missing > 0:
                rows = F.pad(rows, [0, 0, 0, missing], value=0)"""


def _findings(tmp_path, trim: str, test: str):
    path = tmp_path / "gather.py"
    source = textwrap.dedent(GATHER.replace("{trim}", trim).replace("{test}", test))
    path.write_text(source)
    return sorted((f.code, f.condition) for f in check_paths([str(path)], cache=False).findings)


def test_VALID_rows_padded_on_some_ranks_stay_on_the_same_kind_of_device(tmp_path):
    assert _findings(tmp_path, PADDED, "rows.is_cuda") == []


def test_VALID_the_element_type_of_padded_rows_is_alike(tmp_path):
    assert _findings(tmp_path, PADDED, "rows.dtype == torch.bfloat16") == []


def test_VALID_a_slice_or_a_reshape_on_some_ranks_keeps_the_kind(tmp_path):
    for trim in ("if mine < longest:\n                rows = rows[:mine]",
                 "if mine < longest:\n                rows = rows.view(-1)"):
        assert _findings(tmp_path, trim, "rows.is_cuda") == [], trim


def test_INVALID_the_size_of_padded_rows_still_differs(tmp_path):
    # the test chose how many rows there are (only the padding is agreed here, by `longest`, which
    # the model does not follow): their count is what the ranks' share made it
    found = _findings(tmp_path, "if mine < longest:\n                rows = F.pad(rows, [0, 0, 0, 1])",
                      "rows.shape[0] > 4")
    assert found == [("CSL101", "rows.shape[0] > 4")]


def test_INVALID_an_element_picked_on_some_ranks_is_another_object(tmp_path):
    # ``rows[0]`` is a row, not the rows: its kind is not the rows' own
    found = _findings(tmp_path, "if mine < longest:\n                rows = rows[0]", "rows.is_cuda")
    assert found == [("CSL101", "rows.is_cuda")]


def test_INVALID_a_pad_of_another_value_on_some_ranks_is_not_the_rows(tmp_path):
    found = _findings(tmp_path, "if mine < longest:\n                rows = F.pad(shares, [0, 1])", "rows.is_cuda")
    assert found == [("CSL101", "rows.is_cuda")]
