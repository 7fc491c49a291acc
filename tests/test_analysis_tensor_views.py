"""A view of a tensor or a read of its shape (``ids.view(-1)``,
``t.unsqueeze(1)``, ``t.dim()``: ``vocabulary.VIEW_METHODS``) rewrites or
reads the tensor's metadata on the host, wherever its memory lies; it
touches no device memory, disk or peer and allocates nothing, so it fails
as the tensor's shape and the arguments say, alike on every rank given the
same (``raises.views_a_tensor`` where the receiver is not typed,
``ProgramReads._raised_by`` where it is and no method of the tree answers).

The shape: a draft worker fills its block with a fused kernel, handing it
views of the batch's tensors; if the kernel fails it falls back to the
eager path and stops using the kernel, and later steps gather over the TP
group only while the kernel is in use.  Each valid shape is paired with one
where the call can fail on one rank only (a copy that allocates on this
rank's device), which must still be reported."""

import textwrap

from cslint.api import check_source

_WORKER = """
    import torch
    import torch.distributed as dist


    def fill_block(ids, lens, out):
        if out.dim() != 2:
            raise ValueError("out must be two-dimensional")
        out[:, 0].copy_(ids)


    class Batch:
        def __init__(self, ids, lens):
            self.ids = ids
            self.lens = lens


    class DraftWorker:
        def __init__(self, tp_group):
            self.tp_group = tp_group
            self.use_kernel = True
            self.block = torch.zeros(8, 4, dtype=torch.long)

        def prepare(self, batch: Batch, ids):
            if self.use_kernel:
                try:
                    fill_block(IDS, batch.lens.{read}, self.block)
                except Exception:
                    self.use_kernel = False
                    self.block[:, 0].copy_(batch.ids)

        def step(self, batch: Batch, ids, logits):
            self.prepare(batch, ids)
            if self.use_kernel:
                dist.all_reduce(logits, group=self.tp_group)
"""


def _codes(ids="batch.ids.view(-1)", read="view(-1)"):
    source = textwrap.dedent(_WORKER.replace("IDS", ids).replace("{read}", read))
    return [(f.code, f.line) for f in check_source(source).findings]


def test_views_of_a_typed_batchs_tensors_fail_alike():
    assert _codes() == []


def test_a_shape_read_and_a_dimension_added_fail_alike():
    assert _codes(read="unsqueeze(0)", ids="batch.ids.view(batch.ids.numel())") == []


def test_a_view_of_an_untyped_parameter_fails_alike():
    assert _codes(ids="ids.view(-1)") == []


def test_a_copy_on_this_ranks_device_may_fail_there_alone():
    assert _codes(read="to(torch.cuda.current_device())") == [("CSL101", 35)]


def test_a_reshape_may_copy_and_fail_there_alone():
    assert _codes(ids="ids.reshape(-1)") == [("CSL101", 35)]


_SHARDED = """
    import torch.distributed as dist


    def shard(x, tp_size):
        rank = dist.get_rank()
        chunk = x.shape[0] // tp_size
        return x[ROWS]


    def fused_path_applies(h):
        if not h.is_cuda or h.dim() != 2 or not h.is_contiguous() or h.stride(0) != h.shape[1]:
            return False
        return True


    def reduce_norm(x, tp_size):
        part = shard(x, tp_size)
        if fused_path_applies(part):
            return part
        dist.all_reduce(part)
        return part
"""


def test_the_layout_of_a_ranks_slice_of_rows_is_every_ranks():
    # strides and contiguity are structure (shape and how it was made), not
    # contents: a slice of one width at this rank's offset is laid out alike
    source = textwrap.dedent(_SHARDED.replace("ROWS", "rank * chunk : (rank + 1) * chunk"))
    assert [(f.code, f.line) for f in check_source(source).findings] == []


def test_the_layout_of_a_slice_as_wide_as_the_rank_still_differs():
    source = textwrap.dedent(_SHARDED.replace("ROWS", ": rank + 1"))
    assert [(f.code, f.line) for f in check_source(source).findings] == [("CSL102", 21)]
