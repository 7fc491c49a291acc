"""The byte prefilter: which files are worth a parse.

Round one (``SiteFilter``) keeps files that may hold a collective call site;
later rounds (``WrapperPrefilter``) keep files that use a wrapper found so far.
Each case is one file's bytes; the end-to-end test checks that a hazard in a
file the filter must keep is still found, and that dropping the decoys does
not change the findings.
"""

from __future__ import annotations

import pytest

from cslint.engine import workers
from cslint.engine.gather import wrapper_names
from cslint.engine.prefilter import SiteFilter, WrapperDefinitions, WrapperPrefilter, import_statements
from cslint.api import check_paths
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed", "mpi4py", "tensorrt_llm"])
SITES = SiteFilter(KNOWLEDGE, ["*.my_exchange"])

KEPT = {
    "functional call": b"import torch.distributed as dist\ndist.all_reduce(t)\n",
    "method on a coordinator": b"get_tp_group().all_reduce(x)\n",
    "imported distinctive name": b"from vllm.distributed import tensor_model_parallel_all_reduce as ar\n",
    "bare call of an imported name": b"from vllm.distributed import *\ny = tensor_model_parallel_all_reduce(x)\n",
    "bare call of a defined name": b"def broadcast_tensor_dict(d):\n    pass\n\nbroadcast_tensor_dict(d)\n",
    "ambiguous name on a group receiver": b"self.cpu_group.gather(x)\n",
    "ambiguous name on a call receiver": b"get_world_group(name).broadcast(t, src=0)\n",
    "ambiguous name on an alias": b"import torch.distributed as td\ntd.gather(t)\n",
    "ambiguous name imported from c10d": b"from torch.distributed import gather\ngather(t, dst=0)\n",
    "parenthesised import": b"from torch.distributed import (\n    scatter,\n)\nscatter(t)\n",
    "split communicator": b"sub = comm.Split(color, key)\nsub.bcast(obj, root=0)\n",
    "mpi capitalised": b"from mpi4py import MPI\nMPI.COMM_WORLD.Allreduce(a, b)\n",
    "mpi barrier on a communicator": b"self.world.Barrier()\n",
    "configured pattern": b"h.my_exchange(buf)\n",
    "function reference": b"hooks = [dist.all_gather_object]\n",
    "suffix pattern": b"out = mappings._gather_from_tensor_model_parallel_region(x)\n",
    "suffix pattern imported": b"from m import (\n    my_gather_from_sequence_parallel_region as g,\n)\n",
}

DROPPED = {
    "longer identifier": b"y = torch.broadcast_tensors(a, b)\n",
    "docstring prose": b'"""The value is broadcast to every row."""\n',
    "comment": b"x = 1\n    # dist.all_reduce(t) would be needed here\n",
    "doctest": b'"""\n    >>> dist.all_reduce(t)\n"""\n',
    "tensor gather": b"import torch\ny = torch.gather(x, 1, idx)\n",
    "functools reduce": b"from functools import reduce\ntotal = reduce(add, xs)\n",
    "threading barrier": b"import threading\nb = threading.Barrier(2)\n",
    "inductor scan": b"r = ir.Scan.create(x)\n",
    "onnx gather": b"q = op.Gather(shape, idx)\n",
    "local gather method": b"def gather(self, xs):\n    return xs\n",
    "bare ambiguous call": b"out = gather(x)\n",
    "bare call of a name never imported": b"y = tensor_model_parallel_all_reduce(x)\n",
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_site_filter_keeps_files_that_may_hold_a_collective(name):
    assert SITES(KEPT[name]), name


@pytest.mark.parametrize("name", sorted(DROPPED))
def test_site_filter_drops_files_that_only_mention_a_name(name):
    assert not SITES(DROPPED[name]), name


def test_import_statements_cover_parenthesised_lists_and_skip_strings():
    data = (b"import os\nfrom a.b import (c,\n    d as e)\nx = 'import this'\n"
            b"    from .rel import f  # indented\nimport_count = 3\n")
    found = [data[start:end] for start, end in import_statements(data)]
    assert found == [b"import os", b"from a.b import (c,\n    d as e)", b"from .rel import f  # indented"]


def _definitions(tmp_path, source: str):
    from cslint.analysis.records import FileFacts

    path = tmp_path / "helpers.py"
    path.write_text(source)
    job = workers.ParseJob(str(path), source.encode(), Settings(), "pkg.helpers", frozenset())
    facts = workers.extract(job, workers.RunContext.of(("torch_distributed",)))
    assert isinstance(facts, FileFacts)
    names = wrapper_names(facts)
    return names, WrapperDefinitions([facts], names)


def test_a_method_wrapper_selects_through_attributes_imports_and_star_imports(tmp_path):
    names, definitions = _definitions(tmp_path, (
        "import torch.distributed as dist\n"
        "class Syncer:\n    def sync_weights(self, t):\n        dist.all_reduce(t)\n"))
    assert names == {"sync_weights"} and definitions.function_modules == {}
    wrappers = WrapperPrefilter({b"sync_weights"}, definitions)
    assert wrappers.search(b"def step(s):\n    s.sync_weights(m)\n")
    assert wrappers.search(b"from helpers import sync_weights\nsync_weights(m)\n")
    assert wrappers.search(b"from helpers import *\nsync_weights(m)\n")
    # through self: only in the hierarchy of a class that defines the wrapper
    assert wrappers.search(b"class Fast(Syncer):\n    def go(self):\n        self.sync_weights(m)\n")
    assert wrappers.search(b"class Fast(Syncer):\n    def go(self):\n        super().sync_weights(m)\n")
    assert not wrappers.search(b"class Other(Mixin):\n    def go(self):\n        self.sync_weights(m)\n")
    # a file's own function of the same name is not the wrapper
    assert not wrappers.search(b"def sync_weights(m):\n    pass\n\nsync_weights(m)\n")
    assert not wrappers.search(b"x = resync_weights(m)\n")


def test_a_function_wrapper_selects_through_its_module_only(tmp_path):
    names, definitions = _definitions(tmp_path, (
        "import torch.distributed as dist\n"
        "def sync_weights(t):\n    dist.all_reduce(t)\n"))
    assert definitions.function_modules == {b"sync_weights": {b"helpers"}}
    wrappers = WrapperPrefilter({b"sync_weights"}, definitions)
    assert wrappers.search(b"from pkg import helpers\nhelpers.sync_weights(m)\n")
    assert wrappers.search(b"import pkg.helpers as h\nh.sync_weights(m)\n")
    assert wrappers.search(b"import pkg\npkg.helpers.sync_weights(m)\n")
    assert wrappers.search(b"from pkg.helpers import sync_weights\nsync_weights(m)\n")
    # the same name on another module or object is another function
    assert not wrappers.search(b"import torch\ntorch.ops.aten.sync_weights(m)\n")


def _write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_prefilter_keeps_every_file_a_finding_needs(tmp_path):
    """A hazard two modules away from the collective (the wrapper is imported,
    the caller's guard reads the rank) is found; decoy modules that only
    mention collective names are not parsed and change nothing."""
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/comms.py",
           "import torch.distributed as dist\n\n"
           "def sync_weights(t):\n    dist.all_reduce(t)\n")
    _write(tmp_path, "pkg/loop.py",
           "import torch.distributed as dist\nfrom pkg.comms import sync_weights\n\n"
           "def step(t):\n    if dist.get_rank() == 0:\n        sync_weights(t)\n")
    _write(tmp_path, "pkg/decoy.py",
           '"""Tensors are broadcast to every rank, like an all_reduce."""\nimport torch\n\n'
           "def sync_weights(t):\n    return torch.gather(t, 0, t)\n\n"
           "def use(t):\n    return sync_weights(t)\n")
    settings = Settings(root=str(tmp_path))
    with_decoy = check_paths([str(tmp_path)], settings=settings, jobs=1)
    assert [(f.path.rsplit("/", 1)[-1], f.code) for f in with_decoy.findings] == [("loop.py", "CSL101")]

    parsed: list = []
    original = workers.extract
    try:
        workers.extract = lambda job, context, *trees: (parsed.append(job.path.rsplit("/", 1)[-1])
                                                        or original(job, context, *trees))
        check_paths([str(tmp_path)], settings=settings, jobs=1)
    finally:
        workers.extract = original
    assert "decoy.py" not in parsed
    assert {"comms.py", "loop.py"} <= set(parsed)
