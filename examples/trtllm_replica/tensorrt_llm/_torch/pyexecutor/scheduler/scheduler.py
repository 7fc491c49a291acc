"""Scheduling: pick the requests of this iteration's forward.

`SerializableSchedulerOutput` is what the first pipeline stage broadcasts to
the other stages (`PyExecutor._pp_schedule_and_propagate`), so every stage runs
the same batch.  It carries request ids only (requests themselves live on
every stage).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..llm_request import LlmRequest, LlmRequestState


@dataclass
class ScheduledRequests:
    """The batch of one iteration on one rank."""

    context_requests: list[LlmRequest] = field(default_factory=list)
    generation_requests: list[LlmRequest] = field(default_factory=list)

    @property
    def batch_size(self) -> int:
        return len(self.context_requests) + len(self.generation_requests)

    def all_requests(self) -> list[LlmRequest]:
        return self.context_requests + self.generation_requests


@dataclass
class SerializableSchedulerOutput:
    """The first stage's schedule, in a form that pickles cheaply."""

    context_request_ids: list[int] = field(default_factory=list)
    generation_request_ids: list[int] = field(default_factory=list)
    is_shutdown: bool = False

    @classmethod
    def from_scheduler_result(cls, scheduled: ScheduledRequests, is_shutdown: bool) -> SerializableSchedulerOutput:
        return cls(
            context_request_ids=[r.request_id for r in scheduled.context_requests],
            generation_request_ids=[r.request_id for r in scheduled.generation_requests],
            is_shutdown=is_shutdown,
        )

    def to_scheduled_requests(self, requests_by_id: dict[int, LlmRequest]) -> ScheduledRequests:
        return ScheduledRequests(
            context_requests=[requests_by_id[i] for i in self.context_request_ids],
            generation_requests=[requests_by_id[i] for i in self.generation_request_ids],
        )


class SimpleScheduler:
    """First-come first-served up to `max_batch_size` ready requests.

    Requests still waiting for their KV cache are reported separately as
    `fitting_disagg_gen_init_requests` when this rank's KV pool can hold them.
    """

    def __init__(self, max_batch_size: int, kv_blocks_total: int) -> None:
        self.max_batch_size = max_batch_size
        self.kv_blocks_total = kv_blocks_total

    def pool_is_unbalanced(self, active_requests: list[LlmRequest]) -> bool:
        """Whether this rank's KV pool holds requests whose blocks a re-split would move."""
        return any(r.state != LlmRequestState.DISAGG_GENERATION_INIT for r in active_requests)

    def schedule_request(self, active_requests: list[LlmRequest]):
        generation = [r for r in active_requests if r.state == LlmRequestState.GENERATION_IN_PROGRESS]
        generation = generation[: self.max_batch_size]
        used = sum(r.kv_blocks_needed for r in active_requests if r.state != LlmRequestState.DISAGG_GENERATION_INIT)
        fitting = []
        for req in active_requests:
            if req.state == LlmRequestState.DISAGG_GENERATION_INIT and used + req.kv_blocks_needed <= self.kv_blocks_total:
                fitting.append(req)
                used += req.kv_blocks_needed
        return ScheduledRequests(generation_requests=generation), fitting
