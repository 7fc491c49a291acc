"""Computing on the text of a path fails alike on every rank (issue 14
§2.2).

``pathlib.Path("out")`` splits its text into parts and never looks at the
file system; ``os.path.join(root, name)`` only joins text.  What decides
whether either fails (a part that is no text) is its operands, the same on
every rank given the same (``vocabulary.TEXT_COMPUTATIONS``, read by
``raises.computes_from_operands``).  A ``try`` whose body only builds such
a path sends no rank into its ``finally`` alone; making the directory does
ask the disk, which may refuse one rank only."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import os
    from pathlib import Path

    import torch.distributed as dist


    def save_dir(t):
        try:
            out = Path("checkpoints")
            dist.barrier()
        finally:
            dist.all_reduce(t)  # VALID: a path built from its text fails nowhere alone


    def save_dir_joined(root, t):
        try:
            out = os.path.join(root, "weights")
            dist.barrier()
        finally:
            dist.all_reduce(t)  # VALID: joining names reads the names alone


    def make_dir(t):
        try:
            out = Path("checkpoints")
            out.mkdir(parents=True, exist_ok=True)
            dist.barrier()
        finally:
            dist.all_reduce(t)  # INVALID: the disk may refuse one rank
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_only_the_disk_write_is_reported():
    source = textwrap.dedent(SOURCE)
    flagged = sorted((f.line, f.code) for f in check_source(source, report="per-site").findings)
    assert flagged == [(line, "CSL104") for line in _marked(source, "INVALID")]
    assert _marked(source, "VALID")
