"""A length padded up to the group's agreed maximum is that maximum
(``analysis.padding``, issue 14): a rank counts its rows, the count is
all-reduced with MAX, and a rank short of it pads the difference; past the
``if`` every rank holds as many rows as the agreed count, padded or not, so a
loop over them runs as often everywhere.  Reduced with MIN, or padded by a
difference that is not what the count lacks, the rows still differ."""

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch
    import torch.distributed as dist


    def local_rows(shards):
        return shards[dist.get_rank()]


    def padded_rows(shards, fill):
        rows = local_rows(shards)
        count = torch.tensor([rows.shape[0]], dtype=torch.long)
        dist.all_reduce(count, op=dist.ReduceOp.MAX)
        missing = int(count.item()) - rows.shape[0]
        if missing > 0:
            rows = torch.cat([rows, torch.full((missing, rows.shape[1]), fill)])
        for row in rows:
            dist.all_reduce(row)                                          # VALID: as many rows everywhere


    def padded_list(shards, fill):
        items = list(local_rows(shards))
        count = torch.tensor([len(items)])
        dist.all_reduce(count, op=dist.ReduceOp.MAX)
        missing = int(count.item()) - len(items)
        if missing > 0:
            items = items + [fill] * missing
        for item in items:
            dist.all_reduce(item)                                         # VALID: as many items everywhere


    def padded_to_min(shards, fill):
        rows = local_rows(shards)
        count = torch.tensor([rows.shape[0]], dtype=torch.long)
        dist.all_reduce(count, op=dist.ReduceOp.MIN)
        missing = int(count.item()) - rows.shape[0]
        if missing > 0:
            rows = torch.cat([rows, torch.full((missing, rows.shape[1]), fill)])
        for row in rows:
            dist.all_reduce(row)                                          # INVALID: a longer rank keeps its rows


    def padded_from_other_count(shards, other, fill):
        rows = local_rows(shards)
        count = torch.tensor([other.shape[0]], dtype=torch.long)
        dist.all_reduce(count, op=dist.ReduceOp.MAX)
        missing = int(count.item()) - rows.shape[0]
        if missing > 0:
            rows = torch.cat([rows, torch.full((missing, rows.shape[1]), fill)])
        for row in rows:
            dist.all_reduce(row)                                          # INVALID: the max of another length
"""


def _marked(source, word):
    return {i for i, line in enumerate(source.splitlines(), 1) if f"# {word}" in line}


def test_rows_padded_to_the_agreed_maximum_are_as_many_on_every_rank(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "pad.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = {f.line for f in findings if f.code in ("CSL101", "CSL102", "CSL103")}
    assert flagged == _marked(source, "INVALID")
