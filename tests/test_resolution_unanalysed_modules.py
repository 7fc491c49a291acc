"""A class of a module file the run holds but did not analyse (the prefilter
found no collective in it) is outside the analysed code, even where an
analysed ``__init__.py`` above it re-exports it (issue 14, name resolution).

A checkpoint package's ``__init__.py`` holds a collective of its own, so it is
analysed, and re-exports a tensor record from its ``mapping`` module, which
holds none.  An exchange helper fills an unneeded record's data on the ranks
that do not own a shard (``sh_ten.init_data("cuda")``, the record typed by the
``Dict[int, ShardedTensor]`` annotation), under a test of this rank against
the shard's owner.  Another package has a buffer class with a method of the
same name that sets the data a collective's test reads.  Before, the record's
class (``pkg.ckpt.mapping.ShardedTensor``) counted as a possible re-export of
the analysed ``pkg.ckpt``, its type stayed unknown, and the call went to the
buffer's ``init_data`` by its name alone: the buffer's data differed between
ranks.  The resolver now knows which module files exist: the record's class
is one of an unanalysed module, whose methods reach no collective."""

from cslint.api import check_paths

_INIT = """\
import torch.distributed as dist

from .mapping import ShardedTensor


def wait_for_peers():
    dist.barrier()
"""

_MAPPING = """\
import torch


class ShardedTensor:
    def __init__(self, key, shape):
        self.key = key
        self.shape = shape
        self.data = None

    def init_data(self, device):
        if self.data is not None:
            return
        self.data = torch.empty(self.shape, device=device)
"""

_EXCHANGE = """\
from typing import Dict

import torch.distributed as dist

from {module} import {record}


def _empty_for_exchange(shard_id, unneeded: Dict[int, {record}]):
    sh_ten = unneeded[shard_id]
    if sh_ten.data is None:
        sh_ten.init_data("cuda")
    return sh_ten.data


def exchange(owners, loaded, unneeded, group):
    local_rank = dist.get_rank(group=group)
    for shard_id, owner in owners.items():
        if owner == local_rank:
            tensor = loaded[shard_id].cuda()
        else:
            tensor = _empty_for_exchange(shard_id, unneeded)
        dist.broadcast(tensor, src=owner, group=group)
"""

_BUFFER = """\
import torch
import torch.distributed as dist
from torch.distributed.tensor import Shard


class Buffer:
    def __init__(self, size):
        self.size = size
        self.data = None

    def init_data(self, device):
        self.data = torch.empty(self.size, device=device)

    def get_item(self):
        return self.data


def validate(buf: Buffer, group):
    placement = buf.get_item()
    if isinstance(placement, Shard):
        dist.all_reduce(placement, group=group)
"""


def _findings(tmp_path, module=".mapping", record="ShardedTensor", paths=None):
    package = tmp_path / "pkg"
    (package / "ckpt").mkdir(parents=True)
    (package / "fsdp").mkdir()
    (package / "__init__.py").write_text("")
    (package / "fsdp" / "__init__.py").write_text("")
    (package / "ckpt" / "__init__.py").write_text(_INIT)
    (package / "ckpt" / "mapping.py").write_text(_MAPPING)
    (package / "ckpt" / "exchange.py").write_text(_EXCHANGE.format(module=module, record=record))
    (package / "fsdp" / "buffer.py").write_text(_BUFFER)
    targets = [str(tmp_path / p) for p in paths] if paths else [str(tmp_path)]
    findings = check_paths(targets, cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings)


def test_a_class_of_an_unanalysed_module_runs_no_method_of_the_tree(tmp_path):
    assert _findings(tmp_path) == []


def test_the_same_class_named_through_the_analysed_package_init_too(tmp_path):
    # ``pkg.ckpt.ShardedTensor``: the analysed ``__init__`` imports it from
    # the unanalysed module, a re-export followed to the module's own name
    assert _findings(tmp_path, module="pkg.ckpt") == []


def test_the_buffer_filled_on_some_ranks_still_differs(tmp_path):
    # the exchange helper really filling the buffer: the hazard is kept
    assert _findings(tmp_path, module="pkg.fsdp.buffer", record="Buffer") == [("CSL101", "buffer.py", 21)]
