"""A helper that agrees the buffer it is handed where a collective is skipped
only by a group of one rank, or on the first stage before relaying it down
the pipeline in place: what the caller reads back, and the counts it hands
back in a tuple, are agreed (issue 14)."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


HELPERS = """
    from typing import Optional
    import torch
    import torch.distributed as dist

    class Pool:
        def _reduce_groups(self, counts, op):
            reduced = False
            for group in (self.attn_cp_group, self.attn_tp_group):
                if group is not None and dist.get_world_size(group=group) > 1:
                    dist.all_reduce(counts, op=op, group=group)
                    reduced = True
            if not reduced and self.tp_world_size > 1:
                dist.all_reduce(counts, op=op, group=self.tp_group)

        def _reduce(self, counts, op):
            if self.pp_rank == 0:
                self._reduce_groups(counts, op)
            self._stage_relay(counts)

        def _stage_relay(self, counts):
            if self.pp_size <= 1 or self.pp_group is None:
                return
            if self.pp_rank > 0:
                dist.recv(counts, group_src=self.pp_rank - 1, group=self.pp_group)
            if self.pp_rank + 1 < self.pp_size:
                outgoing = counts.clone()
                dist.isend(outgoing, group_dst=self.pp_rank + 1, group=self.pp_group)

        def _ready(self):
            local = len(self.done_queue)
            counts = torch.tensor([local, dist.get_rank()], dtype=torch.int64)
            if self.buffer_only:
                self._reduce_groups(counts, dist.ReduceOp.MIN)
            else:
                self._reduce(counts, dist.ReduceOp.MIN)
            values = list(map(int, counts.tolist()))
            return values[0], tuple(values[1:])

        def drain(self, finish_count: Optional[int] = None):
            if finish_count is None:
                t = torch.tensor([len(self.done_queue)])
                self._reduce(t, dist.ReduceOp.MIN)
                finish_count = int(t.item())
            while finish_count > 0:
                self.done_queue.pop(0)
                finish_count -= 1
"""


def test_a_helper_skipping_its_collective_only_where_the_group_has_one_rank_agrees_the_buffer():
    lines = _lines(HELPERS + """
        def step(self):
            first, rest = self._ready()
            self.drain(finish_count=first)
            if rest:
                dist.barrier(group=self.tp_group)          # agreed: counted over the groups, relayed
            if first > 0:
                dist.barrier(group=self.tp_group)          # agreed
            t = torch.tensor([dist.get_rank()])
            self._reduce_groups(t, dist.ReduceOp.MIN)
            if t.item() > 0:
                dist.barrier(group=self.tp_group)          # agreed by the loop over groups
    """)
    assert lines == []


def test_a_helper_whose_skip_or_relay_is_not_a_single_rank_group_agrees_nothing():
    lines = _lines(HELPERS + """
        def _reduce_if(self, counts):
            for group in (self.attn_cp_group, self.attn_tp_group):
                if group is not None and self.enabled:
                    dist.all_reduce(counts, group=group)

        def _reduce_until(self, counts):
            for group in (self.attn_cp_group, self.attn_tp_group):
                if self.done:
                    break
                if group is not None and dist.get_world_size(group=group) > 1:
                    dist.all_reduce(counts, group=group)

        def _reduce_other(self, counts):
            if self.tp_world_size > 1:
                dist.all_reduce(counts, group=self.dp_group)

        def _first_only(self, counts):
            if self.pp_rank == 0:
                self._reduce_groups(counts, dist.ReduceOp.MIN)

        def _relay_late(self, counts):
            if self.busy:
                return
            if self.pp_rank > 0:
                dist.recv(counts, group_src=self.pp_rank - 1, group=self.pp_group)
            if self.pp_rank + 1 < self.pp_size:
                dist.isend(counts.clone(), group_dst=self.pp_rank + 1, group=self.pp_group)

        def _staged_late(self, counts):
            if self.pp_rank == 0:
                self._reduce_groups(counts, dist.ReduceOp.MIN)
            self._relay_late(counts)

        def step(self):
            a = torch.tensor([dist.get_rank()])
            self._reduce_if(a)
            if a.item() > 0:
                dist.barrier(group=self.tp_group)          # reported: a setting may skip it
            e = torch.tensor([dist.get_rank()])
            self._reduce_until(e)
            if e.item() > 0:
                dist.barrier(group=self.tp_group)          # reported: a flag may leave the loop first
            b = torch.tensor([dist.get_rank()])
            self._reduce_other(b)
            if b.item() > 0:
                dist.barrier(group=self.tp_group)          # reported: the test names another group
            c = torch.tensor([dist.get_rank()])
            self._first_only(c)
            if c.item() > 0:
                dist.barrier(group=self.tp_group)          # reported: later stages keep their own
            d = torch.tensor([dist.get_rank()])
            self._staged_late(d)
            if d.item() > 0:
                dist.barrier(group=self.tp_group)          # reported: the relay may return first
    """)
    assert lines == [86, 90, 94, 98, 102]


def test_a_staticmethod_called_through_self_agrees_the_argument_its_own_parameter_takes():
    # ``self._agree(local, counts)`` binds ``local`` to a staticmethod's first parameter, not to ``counts``
    lines = _lines("""
        import torch
        import torch.distributed as dist


        class Pool:
            @staticmethod
            def _agree(local, counts):
                dist.all_reduce(counts)

            def _agree_method(self, local, counts):
                dist.all_reduce(counts)

            def step(self):
                local = torch.tensor([dist.get_rank()])
                counts = torch.tensor([dist.get_rank()])
                self._agree(local, counts)
                if local.item() > 0:
                    dist.barrier()                  # reported: the helper agrees counts, not local
                if counts.item() > 0:
                    dist.barrier()                  # agreed

            def step_method(self):
                local = torch.tensor([dist.get_rank()])
                counts = torch.tensor([dist.get_rank()])
                self._agree_method(local, counts)
                if local.item() > 0:
                    dist.barrier()                  # reported
                if counts.item() > 0:
                    dist.barrier()                  # agreed
    """)
    assert lines == [19, 28]
