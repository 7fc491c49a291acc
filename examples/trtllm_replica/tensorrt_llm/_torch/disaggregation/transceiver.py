"""The context server and the KV-cache transceiver of the 1 ctx + 1 gen setup.

The context server is modelled, not run: its prefill is serial (one request
per ctx iteration, ``ctx max_batch = 1``), so request ``i`` of the burst is
ready for the generation server at GEN iteration ``i + 1``.  Under attention-DP
it goes to GEN rank ``i % tp_size`` (each DP rank owns its requests); under
pipeline parallelism every stage receives its slice of that request's KV cache.

The context server computes the first token (prefill); in the symmetric spec
config it also runs the drafter, so requests arrive decode-ready.  In the
asymmetric config (drafter on the GEN worker only) a drafter whose window is
longer than the transferred draft state (``draft_len >= SEED_MIN_DRAFT_LEN``)
has to be re-seeded on the receiving GEN rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models.tiny_decoder import window_of
from ..pyexecutor.llm_request import LlmRequest, LlmRequestState

# The context server transfers draft state for this many positions; a longer
# drafter window needs a re-context ("seed") forward on the GEN side.
TRANSFERRED_DRAFT_POSITIONS = 2
SEED_MIN_DRAFT_LEN = TRANSFERRED_DRAFT_POSITIONS + 1


@dataclass(frozen=True)
class SpecConfig:
    """Speculative decoding as configured on the two servers."""

    draft_len: int = 0
    on_ctx: bool = False  # symmetric config: the ctx server drafts too
    on_gen: bool = True

    @property
    def gen_only(self) -> bool:
        return self.on_gen and not self.on_ctx

    @property
    def needs_gen_seed_forward(self) -> bool:
        return self.gen_only and self.draft_len >= SEED_MIN_DRAFT_LEN


def burst_prompts(num_requests: int) -> list[list[int]]:
    """The gen-only burst benchmark: every request known up front."""
    prompts = []
    for i in range(num_requests):
        length = 5 + (i * 7) % 6
        prompts.append([(i * 31 + j * 17 + 3) % 251 + 1 for j in range(length)])
    return prompts


class ContextServer:
    """The serial prefill: request i finishes prefill at ctx iteration i."""

    def __init__(self, model, prompts: list[list[int]], max_new_tokens: int) -> None:
        self.model = model
        self.prompts = prompts
        self.max_new_tokens = max_new_tokens

    def arrival_iteration(self, request_id: int) -> int:
        return request_id + 1

    def prefill(self, request_id: int) -> LlmRequest:
        prompt = self.prompts[request_id]
        first = self.model.next_tokens([window_of(prompt)])[0]
        return LlmRequest(request_id=request_id, prompt=list(prompt), max_new_tokens=self.max_new_tokens,
                          output_tokens=[first])


class KvCacheTransceiver:
    """GEN side of the KV transfer for one rank.

    `poll_arrivals` hands over the requests the context server finished for
    this rank; `start_receive` begins the receive of this rank's KV slice;
    `check_gen_transfer_status` agrees with the other pipeline stages on which
    transfers have landed everywhere (a ``pp_allgather``) and only then marks
    them ready.
    """

    def __init__(self, dist, ctx_server: ContextServer, spec: SpecConfig, attention_dp: bool) -> None:
        self._dist = dist
        self.ctx_server = ctx_server
        self.spec = spec
        self.attention_dp = attention_dp
        self._in_flight: dict[int, LlmRequest] = {}

    def owner_tp_rank(self, request_id: int) -> int:
        return request_id % self._dist.tp_size if self.attention_dp else self._dist.tp_rank

    def my_request_ids(self) -> list[int]:
        return [i for i in range(len(self.ctx_server.prompts)) if self.owner_tp_rank(i) == self._dist.tp_rank]

    def poll_arrivals(self, gen_iter: int) -> list[LlmRequest]:
        return [self.ctx_server.prefill(i) for i in self.my_request_ids()
                if self.ctx_server.arrival_iteration(i) == gen_iter]

    def last_arrival_iteration(self) -> int:
        """The GEN iteration at which the last request of the whole burst arrives (on some rank)."""
        return max((self.ctx_server.arrival_iteration(i) for i in range(len(self.ctx_server.prompts))), default=0)

    def pending_arrivals(self, gen_iter: int) -> int:
        return sum(1 for i in self.my_request_ids() if self.ctx_server.arrival_iteration(i) > gen_iter)

    def kv_blocks_for_this_stage(self) -> int:
        """The last stage holds the draft head: a long drafter window needs an extra block there."""
        if self._dist.pp_size > 1 and self._dist.is_last_pp_rank and self.spec.needs_gen_seed_forward:
            return 2
        return 1

    def start_receive(self, req: LlmRequest, gen_iter: int) -> None:
        req.state = LlmRequestState.DISAGG_GENERATION_TRANS_IN_PROGRESS
        req.transfer_done_iter = gen_iter + 1
        self._in_flight[req.request_id] = req

    def check_gen_transfer_status(self, at_least_num: int, gen_iter: int) -> list[LlmRequest]:
        """Mark the transfers that landed on every pipeline stage; returns them."""
        # Transfers here land on a fixed schedule, so there is nothing to block
        # on: `at_least_num` is accepted for the production signature only.
        landed_here = sorted(i for i, r in self._in_flight.items() if r.transfer_done_iter <= gen_iter)
        landed_per_stage = self._dist.pp_allgather(landed_here)
        landed_everywhere = set(landed_per_stage[0]).intersection(*map(set, landed_per_stage[1:]))
        done = []
        for request_id in sorted(landed_everywhere):
            req = self._in_flight.pop(request_id, None)
            if req is not None:
                req.state = LlmRequestState.GENERATION_IN_PROGRESS
                done.append(req)
        return done
