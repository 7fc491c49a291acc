"""A function of the same file, called on a value made from calls and
flattened inside a later call's arguments past the nesting limit, keeps its
own arguments bound to its parameters (``results.AtomBuilder.flatten``,
``evaluator`` binds every ``FuncRef`` call, issue 14): the whole-tree pass
always resolves it, so its result is what it returns of what it was given.
A width check that names this rank's token count only in its error message
hands back the configured width, and the gather the width decides runs on
every rank alike; spilt, the rank's token count reached the width and the
gather read as skipped on some ranks.  A helper that does return a part of
the token count is still found."""

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch.distributed as dist
    from wirecodec import pack


    def live_width():
        return 4


    def checked_width(width, *, tokens, mode):
        if width != live_width():
            raise RuntimeError(f"width {width} out of sync: tokens={tokens} mode={mode}")
        return width


    def widened_width(width, *, tokens, mode):
        if width != live_width():
            raise RuntimeError(f"width {width} out of sync: mode={mode}")
        return width + tokens


    def gather_skipped(width):
        return width == 1


    def sync_batch(batch, width, tensor):
        tokens = dist.get_rank() + 1
        mode = pack(batch.kind())
        width = checked_width(width, tokens=tokens, mode=mode)
        skip = gather_skipped(width)
        if not skip:
            dist.all_reduce(tensor)                                       # VALID: the configured width decides


    def sync_batch_widened(batch, width, tensor):
        tokens = dist.get_rank() + 1
        mode = pack(batch.kind())
        width = widened_width(width, tokens=tokens, mode=mode)
        skip = gather_skipped(width)
        if not skip:
            dist.all_reduce(tensor)                                       # INVALID: the rank's tokens decide
"""


def _marked(source, word):
    return {i for i, line in enumerate(source.splitlines(), 1) if f"# {word}" in line}


def test_a_file_function_flattened_past_the_nesting_limit_keeps_its_arguments_bound(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "sync.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = {f.line for f in findings if f.code in ("CSL101", "CSL102")}
    assert flagged == _marked(source, "INVALID")
