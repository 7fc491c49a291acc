"""A hierarchical KV cache manager of a serving scheduler (torch.distributed).

Write-through and prefetch bookkeeping is per rank: an entry is recorded only
when this rank's host pool had room, so the dictionaries differ between TP
ranks.  The check methods must still enter their all_reduce on every rank.
"""

import psutil
import torch
import torch.distributed as dist


class HostCache:
    def __init__(self, tp_group, page_bytes):
        self.tp_group = tp_group
        self.page_bytes = page_bytes
        self.ongoing_write_through = {}
        self.ongoing_prefetch = {}
        self.ongoing_load_back = []

    # -- per-rank bookkeeping ------------------------------------------------
    def write_backup(self, node_id, num_pages):
        free, _total = torch.cuda.mem_get_info()
        if free < num_pages * self.page_bytes:
            return 0
        self.ongoing_write_through[node_id] = num_pages
        return num_pages

    def prefetch(self, request_id, num_pages):
        if psutil.virtual_memory().available > num_pages * self.page_bytes:
            self.ongoing_prefetch[request_id] = num_pages

    def load_back(self, node_id):
        free, _total = torch.cuda.mem_get_info()
        if free > self.page_bytes:
            self.ongoing_load_back.append(node_id)

    # -- checks that synchronise the TP group -------------------------------
    def writing_check(self):
        """Returns early on an empty local queue before the group reduction."""
        if not self.ongoing_write_through:
            return
        finished = torch.tensor([len(self.ongoing_write_through)], dtype=torch.int64)
        dist.all_reduce(finished, op=dist.ReduceOp.MIN, group=self.tp_group)  # expect: CSL102
        for _ in range(int(finished.item())):
            self.ongoing_write_through.popitem()

    def writing_check_always_enter(self):
        """An empty queue contributes zero; every rank enters the reduction."""
        finished = torch.tensor([len(self.ongoing_write_through)], dtype=torch.int64)
        dist.all_reduce(finished, op=dist.ReduceOp.MIN, group=self.tp_group)
        for _ in range(int(finished.item())):
            self.ongoing_write_through.popitem()

    def loading_check(self):
        """The loop over this rank's own queue issues one reduction per entry."""
        for node_id in list(self.ongoing_load_back):
            done = torch.tensor([1])
            dist.all_reduce(done, group=self.tp_group)  # expect: CSL103
            self.ongoing_load_back.remove(node_id)

    def _can_terminate_prefetch(self, request_id):
        flags = torch.tensor([int(request_id in self.ongoing_prefetch), 0])
        dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=self.tp_group)
        return bool(flags[0].item())

    def check_prefetch_progress(self, request_id):
        """Returns before the wrapper's reduction when the request is unknown here."""
        if request_id not in self.ongoing_prefetch:
            return True
        return self._can_terminate_prefetch(request_id)  # expect: CSL102

    def _any_rank(self, local_flag):
        flag = torch.tensor([int(local_flag)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.tp_group)
        return bool(flag.item())

    def check_prefetch_progress_agreed(self, request_id):
        """The group agrees first, then every rank takes the same branch."""
        if not self._any_rank(request_id in self.ongoing_prefetch):
            return True
        return self._can_terminate_prefetch(request_id)
