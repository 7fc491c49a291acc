"""`PyExecutor` of the replica: the generation server's event loops.

The control structure follows the production executor closely enough that the
same collective-safety hazards appear at the same kind of sites (see
``examples/trtllm_replica/NOTES.md``):

- `_executor_loop` (attention-DP): one iteration reads the control requests
  rank 0 broadcasts, fetches transferred requests, schedules, runs the
  gen-only benchmark fill gate, pads an idle rank, agrees on the batch sizes
  (`_can_queue`), runs the forward and flushes the responses buffered by
  rank-divergent paths.  Every TP rank owns its own requests, so
  request-derived state is rank-local.
- `_executor_loop_overlap` (attention-DP, overlap scheduler): the same, with
  the previous iteration's batch kept in ``previous_batch`` and a periodic
  KV-pool rebalance that consumes it first.
- `_executor_loop_pp` (pipeline parallel): the first stage schedules and
  broadcasts the schedule; every stage checks its KV transfers.

The model is `tiny_decoder`; generated tokens depend on the request only.
"""

from __future__ import annotations

import os
import sys

from ..disaggregation.transceiver import KvCacheTransceiver, SpecConfig
from ..distributed.communicator import ReduceOp
from ..models.tiny_decoder import window_of
from .hang_detector import HangDetector
from .llm_request import FAILED_OUTPUT, LlmRequest, LlmRequestState
from .scheduler.scheduler import (
    ScheduledRequests,
    SerializableSchedulerOutput,
    SimpleScheduler,
)

SHUTDOWN = "shutdown"


class ForwardError(RuntimeError):
    """A forward step failed on this rank (a device error, an out-of-memory)."""


class PyExecutor:
    """The generation-server executor of one rank."""

    def __init__(
        self,
        dist,
        model,
        kv_cache_transceiver: KvCacheTransceiver | None,
        spec_config: SpecConfig,
        *,
        enable_attention_dp: bool,
        benchmark_req_queues_size: int = 0,
        max_batch_size: int = 8,
        kv_blocks_total: int = 64,
        hang_detector: HangDetector | None = None,
        is_warmup: bool = False,
        overlap: bool = False,
        rebalance_every: int = 0,
        serve_until_shutdown: bool = False,
        fault_request: int | None = None,
    ) -> None:
        self.dist = dist
        self.model = model
        self.kv_cache_transceiver = kv_cache_transceiver
        self.spec_config = spec_config
        self.enable_attention_dp = enable_attention_dp
        self.benchmark_req_queues_size = benchmark_req_queues_size
        self.is_warmup = is_warmup
        self.scheduler = SimpleScheduler(max_batch_size, kv_blocks_total)
        self.hang_detector = hang_detector or HangDetector(timeout_s=0)
        # configuration of the loop (the same on every rank)
        self.overlap = overlap
        self.rebalance_every = rebalance_every
        self.serve_until_shutdown = serve_until_shutdown
        self.fault_request = fault_request

        self.active_requests: list[LlmRequest] = []
        self.requests_by_id: dict[int, LlmRequest] = {}
        self.outputs: dict[int, list[int]] = {}
        self.iter_counter = 0  # forward steps run
        self.loop_iter = 0  # event-loop iterations, including skipped ones
        self.num_fetch_requests = 0
        # Set by a shutdown control request (every rank at once), or by a fatal
        # error on this rank only.
        self.is_shutdown = False
        self._shutdown_sent = False  # rank 0: the control queue's shutdown went out
        # Responses of rank-divergent paths (errors) wait here for the flush
        # that every rank reaches.
        self._pending_responses: list[tuple[int, str]] = []
        self.previous_batch: ScheduledRequests | None = None  # overlap loop
        # Requests whose KV transfer failed on this rank, failed everywhere at the next synced check.
        self._transfer_error_ids: set[int] = set()
        self.rebalances = 0
        self.drained_in_rebalance = 0
        self.dummy_passes = 0

        # The gen-only benchmark holds decoding until the whole burst has been
        # transferred (the analogue of TLLM_BENCHMARK_REQ_QUEUES_SIZE > 0).
        self.is_benchmark_disagg = self.benchmark_req_queues_size > 0 and self.kv_cache_transceiver is not None
        # Per rank: True until this rank runs its first forward.
        self._benchmark_fill_phase_active = self.is_benchmark_disagg
        # Agreed by all ranks (set from a collective's result).
        self._benchmark_gate_open = not self.is_benchmark_disagg
        self._ran_seed_forward_this_iter = False

    # ------------------------------------------------------------------ loops
    def run(self) -> dict[int, list[int]]:
        """Run the event loop until every request of the burst is answered."""
        self.hang_detector.start()
        try:
            if self.dist.pp_size > 1:
                self._executor_loop_pp()
            elif self.overlap:
                self._executor_loop_overlap()
            else:
                self._executor_loop()
        finally:
            self.hang_detector.stop()
        return self.outputs

    def _executor_loop(self) -> None:
        while True:
            self.hang_detector.checkpoint()
            self.loop_iter += 1
            if not self.serve_until_shutdown and self._all_ranks_done():
                break
            self._apply_control_requests(self._fetch_control_requests())
            self._handle_errors_synced()

            self._fetch_transferred_requests()
            if self._should_stop_processing():
                # This rank is shut down and has nothing left of its own.
                break
            scheduled_batch, fitting_disagg_gen_init_requests = self._schedule()
            self._prepare_disagg_gen_init(fitting_disagg_gen_init_requests)
            self._check_disagg_gen_transfer_status()
            self._pad_attention_dp_dummy_request()

            if self._sync_gen_only_benchmark_has_insufficient_kv(fitting_disagg_gen_init_requests):
                raise RuntimeError("gen-only benchmark: the GEN KV cache cannot hold the burst; lower the concurrency")

            if self.is_benchmark_disagg and not self._check_benchmark_disagg_gate():
                continue

            if self._ran_seed_forward_this_iter:
                # The seed forward used this rank's forward slot of the iteration.
                continue

            can_queue, can_queue_this_rank = self._can_queue(scheduled_batch)
            if not can_queue:
                continue

            self._run_forward(scheduled_batch if can_queue_this_rank else ScheduledRequests())
            self._handle_responses()
            self._flush_pending_responses()

    def _executor_loop_overlap(self) -> None:
        """The overlap scheduler: a batch's responses are handled one iteration later."""
        while True:
            self.hang_detector.checkpoint()
            self.loop_iter += 1
            if not self.serve_until_shutdown and self._all_ranks_done():
                break
            self._apply_control_requests(self._fetch_control_requests())

            self._fetch_transferred_requests()
            scheduled_batch, fitting_disagg_gen_init_requests = self._schedule()
            self._prepare_disagg_gen_init(fitting_disagg_gen_init_requests)
            self._check_disagg_gen_transfer_status()

            if self._rebalance_due():
                self._maybe_rebalance_kv_pools()

            if self.is_benchmark_disagg and not self._check_benchmark_disagg_gate():
                continue

            can_queue, can_queue_this_rank = self._can_queue(scheduled_batch)
            batch = scheduled_batch if can_queue and can_queue_this_rank else ScheduledRequests()
            if can_queue:
                self._run_forward(batch)
            if self.previous_batch is not None:
                self._process_previous_batch()
            # An empty batch leaves nothing for the next iteration to handle.
            self.previous_batch = batch if batch.batch_size else None
            self._flush_pending_responses()

    def _executor_loop_pp(self) -> None:
        while True:
            self.hang_detector.checkpoint()
            self.loop_iter += 1

            self._fetch_transferred_requests()
            scheduled_batch, fitting_disagg_gen_init_requests = self._schedule()
            self._prepare_disagg_gen_init(fitting_disagg_gen_init_requests)
            self._check_disagg_gen_transfer_status()

            scheduled_batch, is_shutdown = self._pp_schedule_and_propagate(scheduled_batch)
            if is_shutdown:
                break
            if scheduled_batch.batch_size == 0:
                continue

            self._forward_step_pp(scheduled_batch)
            self._handle_responses()

    # ------------------------------------------------------------- requests
    def _fetch_control_requests(self) -> list[str]:
        """Rank 0 reads the control queue; every rank gets the same list.

        Two broadcasts: the count, then (only when there is something) the
        items -- every rank returns early on the same broadcast count.
        """
        items = self._read_control_queue() if self.dist.rank == 0 else []
        count = self.dist.broadcast(len(items), root=0)
        if count == 0:
            return []
        return self.dist.broadcast(items, root=0)

    def _read_control_queue(self) -> list[str]:
        """The shutdown request goes out once the whole burst has been delivered."""
        if not self.serve_until_shutdown or self._shutdown_sent:
            return []
        if self.loop_iter <= self.kv_cache_transceiver.last_arrival_iteration():
            return []
        self._shutdown_sent = True
        return [SHUTDOWN]

    def _apply_control_requests(self, items: list[str]) -> None:
        for item in items:
            if item == SHUTDOWN:
                self.is_shutdown = True

    def _should_stop_processing(self) -> bool:
        """Shut down, and nothing of this rank's own left to serve."""
        return self.is_shutdown and not self.active_requests and self._pending_arrivals() == 0

    def _fetch_transferred_requests(self) -> None:
        """Take over the requests the context server finished for this rank."""
        self._ran_seed_forward_this_iter = False
        for req in self.kv_cache_transceiver.poll_arrivals(self.loop_iter):
            if self.is_shutdown and not self.serve_until_shutdown:
                # a failed executor answers what still arrives with the error
                self.requests_by_id[req.request_id] = req
                self._fail_requests([req], "executor shut down after a fatal error")
                continue
            req.kv_blocks_needed = self.kv_cache_transceiver.kv_blocks_for_this_stage()
            self.active_requests.append(req)
            self.requests_by_id[req.request_id] = req
            self.num_fetch_requests += 1
            if self.spec_config.needs_gen_seed_forward:
                self._run_seed_forward(req)

    def _pending_arrivals(self) -> int:
        return self.kv_cache_transceiver.pending_arrivals(self.loop_iter)

    def _schedule(self):
        return self.scheduler.schedule_request(self.active_requests)

    def _prepare_disagg_gen_init(self, fitting_disagg_gen_init_requests: list[LlmRequest]) -> None:
        for req in fitting_disagg_gen_init_requests:
            self.kv_cache_transceiver.start_receive(req, self.loop_iter)

    def _check_disagg_gen_transfer_status(self) -> None:
        need_check = any(req.is_disagg_generation_transmission_in_progress for req in self.active_requests)
        need_check_one = all(req.is_disagg_generation_transmission_in_progress for req in self.active_requests)

        if need_check:
            at_least_num = 1 if need_check_one else 0
            self.kv_cache_transceiver.check_gen_transfer_status(at_least_num, self.loop_iter)

    def _handle_responses(self) -> None:
        still_active = []
        for req in self.active_requests:
            if req.state == LlmRequestState.GENERATION_IN_PROGRESS and req.is_finished:
                req.state = LlmRequestState.GENERATION_COMPLETE
                self.outputs[req.request_id] = list(req.output_tokens[: req.max_new_tokens])
            else:
                still_active.append(req)
        self.active_requests = still_active

    # -------------------------------------------------------------- errors
    def _run_forward(self, scheduled_batch: ScheduledRequests) -> None:
        try:
            self._forward_step(scheduled_batch)
        except ForwardError as exc:
            self._handle_errors(str(exc), scheduled_batch.all_requests(), is_fatal=True)

    def _handle_errors(self, error_msg: str, failed: list[LlmRequest], *, is_fatal: bool) -> None:
        """Fail ``failed`` (every active request too when the error is fatal)."""
        if is_fatal:
            # This executor stops serving: mark it shut down and fail what it holds.
            self.is_shutdown = True
            failed = failed + [r for r in self.active_requests if r not in failed]
        self._fail_requests(failed, error_msg)

    def _handle_errors_synced(self) -> None:
        """Transfer errors some rank saw, failed on every rank together: a vote, then the ids."""
        poisoned = self.dist.allreduce(int(bool(self._transfer_error_ids)), op=ReduceOp.MAX)
        if not poisoned:
            return
        error_ids = self.dist.tp_allgather(sorted(self._transfer_error_ids))
        self._transfer_error_ids.clear()
        failing = {request_id for ids in error_ids for request_id in ids}
        self._fail_requests([r for r in self.active_requests if r.request_id in failing], "KV transfer failed")

    def _fail_requests(self, failed: list[LlmRequest], error_msg: str) -> None:
        ids = {r.request_id for r in failed}
        self.active_requests = [r for r in self.active_requests if r.request_id not in ids]
        responses = [(rid, error_msg) for rid in sorted(ids)]
        if self.enable_attention_dp and self.dist.world_size > 1:
            # Under multi-rank attention-DP the response gather is collective:
            # buffer, and publish at the flush every rank reaches.
            self._pending_responses.extend(responses)
        else:
            self._enqueue_responses(responses)

    def _flush_pending_responses(self) -> None:
        """Publish the buffered responses; under attention-DP every rank joins, with nothing if need be."""
        responses = self._pending_responses
        self._pending_responses = []
        if responses or self.enable_attention_dp:
            self._enqueue_responses(responses)

    def _enqueue_responses(self, responses: list[tuple[int, str]]) -> None:
        """Rank 0 of the TP group records the answers of every rank."""
        if self.enable_attention_dp and self.dist.world_size > 1:
            gathered = self.dist.tp_gather(responses, root=0)
        else:
            gathered = [responses]
        if self.dist.tp_rank == 0:
            for per_rank in gathered:
                for request_id, _error in per_rank:
                    self.outputs[request_id] = list(FAILED_OUTPUT)

    # ------------------------------------------------------ collective helpers
    def _allgather_model_parallel_status(self, local_status):
        """Gather one status value from every model-parallel rank of this replica."""
        if self.dist.cp_size > 1:
            return self.dist.tp_cp_allgather(local_status)
        if self.dist.tp_size > 1:
            return self.dist.tp_allgather(local_status)
        return [local_status]

    def _all_ranks_done(self) -> bool:
        """Whether no rank has requests left (active, still to arrive, or in a batch not yet handled)."""
        in_flight = 0 if self.previous_batch is None else 1
        local_outstanding = len(self.active_requests) + self._pending_arrivals() + in_flight
        return self.dist.allreduce(local_outstanding) == 0

    def _sync_gen_only_benchmark_has_insufficient_kv(self, fitting_disagg_gen_init_requests) -> bool:
        """Whether some rank cannot fit the burst's KV cache during the fill phase."""
        if not self.is_benchmark_disagg or self.is_warmup:
            return False
        if not self._benchmark_fill_phase_active:
            return False

        waiting = [req for req in self.active_requests if req.is_disagg_generation_init_state]
        in_flight = any(req.is_disagg_generation_transmission_in_progress for req in self.active_requests)
        local_insufficient = bool(waiting) and not fitting_disagg_gen_init_requests and not in_flight
        statuses = self._allgather_model_parallel_status(local_insufficient)
        return any(statuses)

    def _is_benchmark_disagg_fill_complete(self) -> bool:
        """Whether the whole burst has been transferred to the GEN server.

        Rank-safe by construction: every rank enters the allgather on every
        call, its local facts travel in one status tuple, and the decision is
        taken from the gathered list, so all ranks return the same value.
        """
        num_ready = sum(1 for req in self.active_requests
                        if req.state == LlmRequestState.GENERATION_IN_PROGRESS)
        statuses = self._allgather_model_parallel_status((self.num_fetch_requests, num_ready))
        total_fetched = sum(status[0] for status in statuses)
        total_ready = sum(status[1] for status in statuses)
        return total_fetched >= self.benchmark_req_queues_size and total_ready >= total_fetched

    def _check_benchmark_disagg_gate(self) -> bool:
        if self._benchmark_gate_open:
            return True
        if self._is_benchmark_disagg_fill_complete():
            self._benchmark_gate_open = True
        return self._benchmark_gate_open

    def _can_queue(self, scheduled_batch: ScheduledRequests):
        # Under attention-DP a rank with an empty batch still joins the forward
        # (as a dummy) as long as some rank has work.
        if self.enable_attention_dp:
            tp_batch_sizes = self.dist.tp_allgather(scheduled_batch.batch_size)
            can_queue = sum(tp_batch_sizes) > 0
            can_queue_this_rank = scheduled_batch.batch_size > 0
        else:
            can_queue = can_queue_this_rank = scheduled_batch.batch_size > 0
        return can_queue, can_queue_this_rank

    def _pad_attention_dp_dummy_request(self) -> None:
        """An idle attention-DP rank joins the forward of a busy one as a dummy."""
        if not self.enable_attention_dp:
            return
        loads = self.dist.tp_allgather(len(self.active_requests))
        expected_num_active_requests = max(loads)
        if self._should_skip_dummy_for_benchmark_disagg():
            return
        # Forward-intent vote: 1 when this rank has something to run.
        intent = 1 if any(r.state == LlmRequestState.GENERATION_IN_PROGRESS for r in self.active_requests) else 0
        global_intent = self.dist.tp_allreduce(int(intent), op=ReduceOp.MAX)
        if global_intent > 0 and expected_num_active_requests > 0 and intent == 0:
            self.dummy_passes += 1

    def _should_skip_dummy_for_benchmark_disagg(self) -> bool:
        """During the benchmark fill phase no forward runs, so no dummy is needed."""
        return self._benchmark_fill_phase_active and not self.is_warmup

    def _pp_schedule_and_propagate(self, scheduled_batch: ScheduledRequests):
        """The first stage's schedule (and shutdown decision) for every stage."""
        if self.dist.is_first_pp_rank:
            is_shutdown = not self.active_requests and self._pending_arrivals() == 0
            schedule = SerializableSchedulerOutput.from_scheduler_result(scheduled_batch, is_shutdown)
        else:
            schedule = None
        schedule = self.dist.pp_broadcast(schedule, root=0)
        return schedule.to_scheduled_requests(self.requests_by_id), schedule.is_shutdown

    # ------------------------------------------------------------- rebalance
    def _rebalance_due(self) -> bool:
        """Configuration and the pass counter, which every rank advances alike."""
        return self.rebalance_every > 0 and self.loop_iter % self.rebalance_every == 0

    def _maybe_rebalance_kv_pools(self) -> None:
        """Re-split the KV pools when the ranks agree that one needs it."""
        if not self._agreed_need_adjustment():
            return
        self._consume_previous_batch_for_rebalance()
        self.rebalances += 1

    def _agreed_need_adjustment(self) -> bool:
        """One decision for every rank: CP, then TP (any rank under attention-DP, else rank 0), then PP."""
        need = self.scheduler.pool_is_unbalanced(self.active_requests)
        need = self.dist.cp_broadcast(need, root=0)
        if self.dist.tp_size > 1:
            if self.enable_attention_dp:
                need = any(self.dist.tp_allgather(need))
            else:
                need = self.dist.tp_broadcast(need, root=0)
        if self.dist.pp_size > 1:
            need = self.dist.pp_broadcast(need, root=0)
        return need

    def _consume_previous_batch_for_rebalance(self) -> None:
        """Make the in-flight batch's KV quiescent before the pools move."""
        if self.previous_batch is None:
            return
        self._process_previous_batch()
        drained = self.dist.tp_allreduce(len(self.previous_batch.generation_requests))
        self.drained_in_rebalance += drained
        self.previous_batch = None

    def _process_previous_batch(self) -> None:
        """The overlap scheduler's late half of an iteration: the batch's responses."""
        self._handle_responses()

    # ---------------------------------------------------------------- forward
    def _run_seed_forward(self, req: LlmRequest) -> None:
        """Re-context the drafter over the transferred tokens (GEN-only drafting)."""
        tokens = req.tokens
        windows = [window_of(tokens[: i + 1]) for i in range(len(tokens))]
        self.model.run_layers(self.model.embed(windows), 0, 1)
        req.draft_seeded = True
        self._benchmark_fill_phase_active = False
        self._ran_seed_forward_this_iter = True

    def _forward_step(self, scheduled_batch: ScheduledRequests) -> None:
        """One speculative decoding step: draft, verify in one batch, accept."""
        self._benchmark_fill_phase_active = False
        self.iter_counter += 1
        requests = scheduled_batch.generation_requests
        if not requests:
            return
        if self.fault_request is not None and any(req.request_id == self.fault_request for req in requests):
            raise ForwardError(f"forward failed on the batch holding request {self.fault_request}")
        draft_len = self.spec_config.draft_len if self.spec_config.on_gen else 0
        proposals = [self.model.draft_tokens(req.tokens, draft_len) if draft_len else [] for req in requests]
        windows, offsets = [], []
        for req, proposal in zip(requests, proposals):
            offsets.append(len(windows))
            for j in range(len(proposal) + 1):
                windows.append(window_of(req.tokens + proposal[:j]))
        targets = self.model.next_tokens(windows)
        for req, proposal, offset in zip(requests, proposals, offsets):
            accepted = []
            for j in range(len(proposal) + 1):
                accepted.append(targets[offset + j])
                if j == len(proposal) or proposal[j] != targets[offset + j]:
                    break
            room = req.max_new_tokens - len(req.output_tokens)
            req.output_tokens.extend(accepted[:room])

    def _stage_layers(self) -> tuple[int, int]:
        n = self.model.n_layers
        pp, stage = self.dist.pp_size, self.dist.pp_rank
        return stage * n // pp, (stage + 1) * n // pp

    def _forward_step_pp(self, scheduled_batch: ScheduledRequests) -> None:
        """One greedy step with the layers split over the pipeline stages."""
        self.iter_counter += 1
        requests = scheduled_batch.generation_requests
        if self.dist.is_first_pp_rank:
            hidden = self.model.embed([window_of(req.tokens) for req in requests])
        else:
            hidden = self.model.from_wire(self.dist.recv_object(self.dist.prev_pp_rank))
        start, stop = self._stage_layers()
        hidden = self.model.run_layers(hidden, start, stop)
        if self.dist.is_last_pp_rank:
            tokens = self.model.head(hidden)
        else:
            self.dist.send_object(self.model.to_wire(hidden), self.dist.next_pp_rank)
            tokens = None
        tokens = self.dist.pp_broadcast(tokens, root=self.dist.pp_size - 1)
        for req, token in zip(requests, tokens):
            if not req.is_finished:
                req.output_tokens.append(token)


def abort_job(dist, code: int = 137) -> None:
    """What the hang detector does: take the whole job down."""
    sys.stderr.flush()
    abort = getattr(dist, "abort", None)
    if callable(abort):
        abort(code)
    os._exit(code)
