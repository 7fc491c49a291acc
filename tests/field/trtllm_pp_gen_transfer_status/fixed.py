"""Disaggregated generation with pipeline parallelism: each stage decides on its own to poll transfers.

Upstream: NVIDIA/TensorRT-LLM PR #15595 ("[None][fix] Fix disagg gen-consensus deadlock
          under pipeline parallelism"; the incident is this project's seed 004).
Group: the transfer-status allgather's group (spanning the PP ranks of the
generation server).
Why ranks diverge: see buggy.py.
Variant: fixed -- the scheduling rank computes the flag and sends it inside
the schedule it already broadcasts to the other stages; every stage gates
the allgather on that propagated flag.
"""


class GenTransceiver:
    def __init__(self, dist):
        self.dist = dist

    def check_gen_transfer_status(self, at_least):
        return self.dist.pp_allgather(at_least)


class ScheduleMessage:
    def __init__(self, batch, transfer_in_progress):
        self.batch = batch
        self.transfer_in_progress = transfer_in_progress


class GenExecutor:
    def __init__(self, dist, kv_cache_transceiver):
        self.dist = dist
        self.kv_cache_transceiver = kv_cache_transceiver
        self.active_requests = []

    def _schedule_and_propagate(self, schedule):
        message = None
        if self.dist.is_first_pp_rank:
            in_progress = any(req.is_disagg_generation_transmission_in_progress for req in self.active_requests)
            message = ScheduleMessage(schedule(), in_progress)
        return self.dist.pp_broadcast(message, root=0)

    def step(self, schedule):
        message = self._schedule_and_propagate(schedule)
        if message.transfer_in_progress:
            self.kv_cache_transceiver.check_gen_transfer_status(0)
        return message.batch
