"""A function of another module of the file's own package (a ``QualRef``
callee), called and then flattened inside the arguments of a later call past
the nesting limit, keeps its own arguments bound to its parameters
(``evaluator.may_resolve_in_tree``, ``results.AtomBuilder.flatten``: the
outer level, the call the later one is given; issue 14): where the whole-tree pass
resolves it, its result is what its summary returns of what it was given;
where it does not, the call reads its fallback, as any unresolved call does.

Spilt, the call's result was its arguments as passed, each read as itself.
That misses a hazard: a helper that picks this rank's rows by the rank id
hands back rows of a length that differs per rank, but the spilt rank id is
an int, whose structure is alike on every rank, so the length test before
the collective read as agreed.  And it flags a safe call: a width check
that names the rank's token count only in its error message hands back the
width it was given."""

import textwrap

import pytest

from cslint.api import check_paths

SHARDS = """
    import torch.distributed as dist


    def rows_for_rank(batches, rank, codec):
        return batches[rank]


    def checked_width(width, *, tokens, codec):
        if width <= 0:
            raise ValueError(f"width {width} for {tokens} tokens with {codec}")
        return width


    def reduce_rows(rows):
        dist.all_reduce(rows)
"""

TRAIN = """
    import torch.distributed as dist
    from wirecodec import pack, stack, wrap

    from relay.shards import checked_width, rows_for_rank


    def step(batches, kind, tensor):
        rank = dist.get_rank()
        rows = stack(rows_for_rank(batches, rank, codec=wrap(pack(kind))))
        if len(rows) > 0:
            dist.all_reduce(tensor)                                       # INVALID: this rank's rows decide


    def step_width(width, kind, tensor):
        tokens = dist.get_rank() + 1
        width = stack(checked_width(width, tokens=tokens, codec=wrap(pack(kind))))
        if width > 1:
            dist.all_reduce(tensor)                                       # VALID: the width given decides
"""


def _marked(source, word):
    return {i for i, line in enumerate(source.splitlines(), 1) if f"# {word}" in line}


@pytest.mark.parametrize("package", ["relay", ""])  # in a package, or top-level modules side by side
def test_an_imported_function_flattened_past_the_nesting_limit_keeps_its_arguments_bound(tmp_path, package):
    folder = tmp_path / package if package else tmp_path
    if package:
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (folder / "shards.py").write_text(textwrap.dedent(SHARDS))
    train = textwrap.dedent(TRAIN)
    if not package:
        train = train.replace("from relay.shards import", "from shards import")
    (folder / "train.py").write_text(train)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = {f.line for f in findings if f.code in ("CSL101", "CSL102") and f.path.endswith("train.py")}
    assert flagged == _marked(train, "INVALID")
