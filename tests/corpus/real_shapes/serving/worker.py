"""A data-parallel serving worker whose step calls the communication wrappers."""

import torch
import torch.distributed as dist

from .comm import coordinate_tokens, dp_sync, gather_objects, maybe_sync_leader_only, maybe_sync_when_parallel


EMPTY_OUTPUT = None


class Worker:
    def __init__(self, dp_group, request_shards):
        self.dp_group = dp_group
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.requests = list(request_shards[self.rank])
        self.stats = torch.zeros(4)

    def _sync_stats(self):
        return dp_sync(self.stats, self.dp_group)

    def step_leader_syncs(self):
        """Only the leader calls the method that reduces."""
        if self.rank == 0:
            self._sync_stats()  # expect: CSL101

    def step_all_sync(self):
        self._sync_stats()
        if self.rank == 0:
            print(self.stats)

    def step_flag_to_helper(self):
        maybe_sync_leader_only(self.stats, self.rank == 0)

    def step_uniform_flag_to_helper(self):
        maybe_sync_when_parallel(self.stats, self.world_size > 1)

    def _is_leader(self):
        return self.rank == 0

    def _is_parallel(self):
        return self.world_size > 1

    def step_returned_rank_predicate(self):
        if self._is_leader():
            dp_sync(self.stats, self.dp_group)  # expect: CSL101

    def step_returned_size_predicate(self):
        if self._is_parallel():
            dp_sync(self.stats, self.dp_group)

    def _agreed_counts(self):
        counts = gather_objects(len(self.requests), self.dp_group)
        return counts, sum(counts)

    def _local_counts(self):
        return len(self.requests), 4

    def step_tuple_from_collective(self):
        """Both elements come from the gathered list."""
        counts, total = self._agreed_counts()
        if total > 0:
            dp_sync(self.stats, self.dp_group)
        return counts

    def step_tuple_local_first(self):
        pending, slots = self._local_counts()
        if pending > 0:
            dp_sync(self.stats, self.dp_group)  # expect: CSL101
        return slots

    def execute_model(self):
        """A rank with nothing scheduled returns before the DP coordination."""
        num_tokens = sum(len(r) for r in self.requests)
        if num_tokens == 0:
            return EMPTY_OUTPUT
        padded = coordinate_tokens(num_tokens, self.dp_group)  # expect: CSL102
        return padded

    def execute_model_with_dummy(self):
        """An idle rank still joins the coordination with a dummy batch of one token."""
        num_tokens = sum(len(r) for r in self.requests)
        padded = coordinate_tokens(max(num_tokens, 1), self.dp_group)
        if num_tokens == 0:
            return EMPTY_OUTPUT
        return padded

    def both_paths_sync(self):
        """Both branches reach the same reduction through the same wrapper."""
        if self.requests:
            self.stats += len(self.requests)
            self._sync_stats()
        else:
            self._sync_stats()


class Scheduler:
    """The TP leader reads requests from its socket; the group receives them."""

    def __init__(self, tp_group, socket):
        self.tp_group = tp_group
        self.tp_rank = dist.get_rank(group=tp_group)
        self.socket = socket

    def recv_requests(self):
        from .comm import broadcast_pyobj

        requests = self.socket.recv_all() if self.tp_rank == 0 else None
        return broadcast_pyobj(requests, self.tp_rank, self.tp_group)
