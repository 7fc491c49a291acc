"""An entry of a parameter annotated as a mapping or a list of one class
(``unneeded: Dict[int, Shard]``, then ``sh = unneeded[i]`` or
``unneeded.get(i)``) is an object of that class: a method called on it is that
class's, never another class's method of the same name found by its name
alone.  Two classes of the tree define ``init_data``; the shard's module holds
no collective, so only the buffer's is analysed, and a call on an untyped
receiver went to the buffer, whose field it then set on some ranks only."""

from cslint.api import check_paths

_BUFFERS = """\
import torch.distributed as dist


class Buffer:
    def __init__(self, group):
        self.group = group
        self.data = None

    def init_data(self, data):
        self.data = data

    def check(self, t):
        if self.data is None:
            return
        dist.all_reduce(t, group=self.group)
"""

_SHARDS = """\
import torch


class Shard:
    def __init__(self, shape):
        self.shape = shape
        self.data = None

    def init_data(self, device):
        self.data = torch.empty(self.shape, device=device)
"""

_EXCHANGE = """\
from typing import Dict, List, Optional

import torch.distributed as dist

from pkg.shards import Shard


def fill(i, table{ANNOTATION}):
    {READ}
    if entry.data is None:
        entry.init_data("cuda")


def exchange(ids, table):
    rank = dist.get_rank()
    for i in ids:
        if rank == i:
            fill(i, table)
    dist.barrier()
"""


def _codes(tmp_path, annotation=": Dict[int, Shard]", read="entry = table[i]"):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "buffers.py").write_text(_BUFFERS)
    (pkg / "shards.py").write_text(_SHARDS)
    (pkg / "exchange.py").write_text(_EXCHANGE.replace("{ANNOTATION}", annotation).replace("{READ}", read))
    return [(f.code, f.path.rsplit("/", 1)[-1], f.line) for f in check_paths([str(pkg)]).findings]


def test_an_entry_of_a_mapping_of_a_class_runs_that_class_method(tmp_path):
    assert _codes(tmp_path) == []


def test_an_entry_looked_up_with_get_runs_that_class_method(tmp_path):
    assert _codes(tmp_path, annotation=": Optional[Dict[int, Shard]]", read="entry = table.get(i)") == []


def test_an_element_of_a_list_of_a_class_runs_that_class_method(tmp_path):
    assert _codes(tmp_path, annotation=": List[Shard]") == []


def test_an_entry_of_an_unannotated_table_still_runs_the_one_method_of_its_name(tmp_path):
    assert _codes(tmp_path, annotation="") == [("CSL102", "buffers.py", 15)]

