"""Disaggregated context server: the transfer-status poll is gated on this rank's fitting count.

Upstream: NVIDIA/TensorRT-LLM PR #14020 ("[None][fix] PyExecutor Hang in Disagg TP Prefill").
Group: tp (checking the context-transfer status allgathers over the TP group).
Why ranks diverge: the capacity scheduler counts the requests that fit in
this rank's free KV blocks.  Under load the free-block counts drift by a
block between ranks, so `num_fitting_reqs` is 0 on some ranks and 1 on
others: the "0 fits" ranks enter the transfer-status allgather, the others
go on to the forward's own TP collective.
Variant: buggy -- a per-rank scheduling result gates the allgather.
"""


class ContextTransceiver:
    def __init__(self, dist):
        self.dist = dist
        self.completed = []

    def check_context_transfer_status(self, at_least):
        done_everywhere = self.dist.tp_allgather(len(self.completed))
        return min(done_everywhere) >= at_least


class ContextExecutor:
    def __init__(self, dist, scheduler, kv_cache_transceiver):
        self.dist = dist
        self.scheduler = scheduler
        self.kv_cache_transceiver = kv_cache_transceiver
        self.active_requests = []

    def _schedule(self):
        fitting, fitting_gen_init = self.scheduler.schedule_request(self.active_requests)
        return fitting, fitting_gen_init, len(fitting)

    def iteration(self):
        scheduled, fitting_gen_init, num_fitting_reqs = self._schedule()
        if num_fitting_reqs == 0 and not fitting_gen_init and self.kv_cache_transceiver is not None:
            self.kv_cache_transceiver.check_context_transfer_status(1)  # expect: CSL101
        return scheduled
