"""A re-analysis patch on the syntax tree a first extraction of the file
parsed takes the call scans of its functions from that extraction
(extract_file_facts ``scanned``, kept with the tree by engine/workers.py)
instead of walking every function again, and extracts what a patch that
scans anew extracts."""

import ast
import textwrap

import pytest

from cslint.analysis.facts import extract_file_facts
from cslint.analysis.functionscan import FunctionScan
from cslint.analysis.records import merge_partial
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

SOURCE = textwrap.dedent("""
    import torch.distributed as dist

    def flush(t):
        dist.all_reduce(t)

    def step(rank, t):
        if rank == 0:
            sync_everyone(t)
        return helper(t)

    def helper(x):
        return x + 1
""").encode()


def _extract(tree, **options):
    return extract_file_facts("pkg/step.py", SOURCE, Settings(), KNOWLEDGE, tree=tree, **options)


def _patch_of(first, tree, **options):
    already = frozenset(i for i, fn in enumerate(first.functions) if fn.deep)
    return _extract(tree, deep_names={"sync_everyone"}, already_deep=already, **options)


def test_the_first_extraction_keeps_one_scan_per_function():
    scanned: list = []
    first = _extract(ast.parse(SOURCE), scanned=scanned)
    assert len(scanned) == len(first.functions)  # (the module body among them)
    assert [state[0].has_collective for state in scanned[:3]] == [True, False, False]


def test_a_patch_with_the_kept_scans_walks_no_function_again(monkeypatch):
    tree, scanned = ast.parse(SOURCE), []
    first = _extract(tree, scanned=scanned)
    anew = _patch_of(first, tree)

    def walked(self):
        pytest.fail(f"{self.qualname} scanned again")

    monkeypatch.setattr(FunctionScan, "scan_calls", walked)
    kept = _patch_of(first, tree, scanned=scanned)
    assert [fn.qualname for fn in kept.functions] == ["step"]
    assert kept.functions[0].variants[None].sites == anew.functions[0].variants[None].sites
    merged = merge_partial(first, kept)
    assert [(fn.qualname, fn.deep) for fn in merged.functions] == [
        ("flush", True), ("step", True), ("helper", False), ("<module>", False)]
