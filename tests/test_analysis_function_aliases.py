"""A module-level name that only ever holds a function is called as each of
those functions (issue 14, object-taint-spread).

A gradient bucket picks its reduce-scatter once, by name: the library's
collective, or, once a setting asks for it, an own helper that runs an
all-to-all and hands back a handle object it built (or waits itself when the
call is synchronous).  The bucket hands the collective this rank's slice of its
buffer and keeps the handle only when the call was asynchronous; a later start
returns early when a handle is already pending.  Before, the call through the
name ran nothing the analysis knew: its result was every argument, so whether
the handle was there read which slice this rank took.  Called as each
function the name may hold, the result is the collective's handle or the
helper's, there or not by the caller's ``async_op`` alone.  The same reading
finds a rank getter or a rank-picking helper called through such a name."""

import ast

from cslint.analysis.funcaliases import function_aliases
from cslint.api import check_source

_BUCKET = """\
import torch
import torch.distributed as dist


class _Handle:
    def __init__(self, inner, out, world_size):
        self.inner = inner
        self.out = out
        self.world_size = world_size

    def wait(self):
        if self.inner is not None:
            self.inner.wait()


def scatter_fp32(output, input_, group, async_op):
    handle = dist.all_to_all_single(output=output, input=input_, group=group, async_op=async_op)
    work = _Handle(handle, output, group.size())
    if async_op:
        return work
    else:
        work.wait()


try:
    scatter_func = dist.reduce_scatter_tensor
except AttributeError:
    scatter_func = dist._reduce_scatter_base


def use_fp32_accumulation(flag):
    global scatter_func
    if flag:
        scatter_func = scatter_fp32


class Bucket:
    def __init__(self, data, group):
        self.data = data
        self.group = group
        self.handle = None
        self.first = True
        self.rank = group.rank()
        self.shards = list(data.chunk(group.size()))

    def start(self, async_op):
        if self.first and self.handle is not None:
            return
        view = self.shards[self.rank]
        handle = {callee}(view, self.data, self.group, async_op)
        dist.all_reduce(self.data, group=self.group)
        if async_op:
            self.handle = handle
        else:
            self.handle = None
"""


def _findings(source):
    return [(f.code, f.line) for f in check_source(source, path="bucket.py", report="per-site").findings]


def test_a_handle_from_a_function_picked_by_name_is_there_by_async_op_alone():
    assert _findings(_BUCKET.format(callee="scatter_func")) == []


def test_the_same_helper_called_by_its_own_name_reads_alike():
    assert _findings(_BUCKET.format(callee="scatter_fp32")) == []


def test_a_handle_holding_the_slice_still_differs():
    # the helper handing its handle back on the group's first rank only:
    # whether the handle is there is that rank's test, through the name too
    source = _BUCKET.format(callee="scatter_func").replace(
        "        return work\n", "        return work if group.rank() == 0 else None\n")
    assert _findings(source) == [("CSL102", 51)]


def test_a_rank_getter_called_through_a_name_is_a_rank_id():
    source = """\
import torch.distributed as dist

rank_of = dist.get_rank


def step(t):
    if rank_of() == 0:
        dist.all_reduce(t)
"""
    assert _findings(source) == [("CSL101", 8)]


def test_a_rank_picking_helper_chosen_at_import_decides_its_result():
    source = """\
import torch.distributed as dist


def first_shard(parts, rank):
    if rank == 0:
        return parts[rank]
    return None


def last_shard(parts, rank):
    return parts[-1]


pick = last_shard
if dist.is_initialized():
    pick = first_shard


def step(parts, t):
    chosen = pick(parts, dist.get_rank())
    if chosen is None:
        return
    dist.all_reduce(t)
"""
    assert _findings(source) == [("CSL102", 23)]


def _aliases(source):
    tree = ast.parse(source)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    imports = {"dist": "torch.distributed", "helper": "pkg.helper"}
    return {name: sorted(ast.unparse(e) for e in exprs)
            for name, exprs in function_aliases(tree, functions, imports).items()}


def test_every_binding_must_name_a_function():
    source = """\
def local():
    pass


a = dist.broadcast
b = local
if flag:
    b = helper
c = local
c = make()
d = local
for d in table:
    pass
e = local


def rebind():
    global e
    e, other = pair()


def shadow():
    f = make()


f = local
"""
    assert _aliases(source) == {"a": ["dist.broadcast"], "b": ["helper", "local"], "f": ["local"]}
