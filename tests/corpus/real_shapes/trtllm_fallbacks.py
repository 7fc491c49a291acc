"""Executor helpers with one-rank fallbacks, mode-gated collectives, both-branch
broadcasts, guarded config reads, chunked MPI broadcasts and rank invariants."""

import pickle

import numpy as np

CHUNK_BYTES = 1 << 20


class StatusExchange:
    def __init__(self, dist, mapping, enable_attention_dp):
        self.dist = dist
        self.mapping = mapping
        self.enable_attention_dp = enable_attention_dp
        self.active_requests = []
        self.global_rank = dist.rank
        self.name = "executor"

    # -- a group of one rank cannot diverge -------------------------------------
    def _gather_status(self, status):
        if self.dist.tp_size > 1:
            return self.dist.tp_allgather(status)
        return [status]

    def all_ready(self):
        """Decides from the gathered list (or the one-element list on a single rank)."""
        statuses = self._gather_status(len(self.active_requests) > 0)
        if all(statuses):
            return self.dist.tp_broadcast(len(statuses), root=0)
        return 0

    def _all_ranks_done(self):
        return self.dist.tp_allreduce(int(not self.active_requests)) == self.dist.tp_size

    def drain(self):
        """The loop exits on an agreed value."""
        while True:
            if self._all_ranks_done():
                break
            self.active_requests.pop()

    def drain_on_local_state(self):
        while self.active_requests:
            self.active_requests.pop()
            self.dist.tp_allreduce(1)  # expect: CSL103

    # -- a collective only in a mode the caller excludes ---------------------------
    def _report_errors(self, message):
        if self.enable_attention_dp and self.dist.tp_size > 1:
            messages = self.dist.tp_allgather(message)
            return [m for m in messages if m]
        return [message]

    def step(self, batch):
        """Errors are reported from a local except path only when no TP exchange can happen."""
        multi_rank_adp = self.enable_attention_dp and self.dist.tp_size > 1
        try:
            return self._forward(batch)
        except RuntimeError as error:
            if not multi_rank_adp:
                return self._report_errors(str(error))
            raise

    def step_reporting_everywhere(self, batch):
        try:
            return self._forward(batch)
        except RuntimeError as error:
            return self._report_errors(str(error))  # expect: CSL104

    def _forward(self, batch):
        if self.dist.rank % 2 == 1 and not batch:
            raise RuntimeError("empty batch on this rank")
        return len(batch)

    # -- both branches broadcast -------------------------------------------------------------
    def broadcast_name(self):
        if self.global_rank == 0:
            return self.dist.broadcast(self.name, root=0)
        return self.dist.broadcast(None, root=0)

    # -- guarded config reads -------------------------------------------------------------------
    def _tp_size(self):
        try:
            return int(getattr(self.mapping, "tp_size", 1))
        except (TypeError, ValueError):
            return 1

    def exchange_if_parallel(self, payload):
        if self._tp_size() > 1:
            return self.dist.tp_allgather(payload)
        return [payload]

    # -- rank invariants ----------------------------------------------------------------------------
    def checked_exchange(self, payload):
        assert self.global_rank >= 0, "ranks are non-negative"
        return self.dist.allgather(payload)


def chunked_broadcast(comm, obj, root=0):
    """The size travels first in an in-place buffer; every loop bound derives from it."""
    size = np.zeros(1, dtype=np.int64)
    data = b""
    if comm.Get_rank() == root:
        data = pickle.dumps(obj)
        size[0] = len(data)
    comm.Bcast(size, root=root)
    buffer = bytearray(data) if comm.Get_rank() == root else bytearray(int(size[0]))
    for offset in range(0, int(size[0]), CHUNK_BYTES):
        view = memoryview(buffer)[offset:offset + CHUNK_BYTES]
        comm.Bcast(view, root=root)
    return pickle.loads(bytes(buffer))


def chunked_broadcast_local_size(comm, obj, root=0):
    """Each rank loops over its own payload length."""
    data = pickle.dumps(obj)
    buffer = bytearray(data)
    for offset in range(0, len(data) if comm.Get_rank() == root else 0, CHUNK_BYTES):
        comm.Bcast(memoryview(buffer)[offset:offset + CHUNK_BYTES], root=root)  # expect: CSL103
    return obj
