"""Requests as the generation server sees them."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


#: what a request answered with an error gets instead of tokens
FAILED_OUTPUT = (-1,)


class LlmRequestState(enum.Enum):
    DISAGG_GENERATION_INIT = "disagg_generation_init"  # arrived, KV not yet being received
    DISAGG_GENERATION_TRANS_IN_PROGRESS = "disagg_generation_trans_in_progress"
    GENERATION_IN_PROGRESS = "generation_in_progress"
    GENERATION_COMPLETE = "generation_complete"


@dataclass
class LlmRequest:
    """One request transferred from the context server."""

    request_id: int
    prompt: list[int]
    max_new_tokens: int
    output_tokens: list[int] = field(default_factory=list)
    state: LlmRequestState = LlmRequestState.DISAGG_GENERATION_INIT
    kv_blocks_needed: int = 1
    draft_seeded: bool = False
    # iteration at which this rank's slice of the KV cache lands (set when the receive starts)
    transfer_done_iter: int = -1

    @property
    def tokens(self) -> list[int]:
        return self.prompt + self.output_tokens

    @property
    def is_disagg_generation_init_state(self) -> bool:
        return self.state == LlmRequestState.DISAGG_GENERATION_INIT

    @property
    def is_disagg_generation_transmission_in_progress(self) -> bool:
        return self.state == LlmRequestState.DISAGG_GENERATION_TRANS_IN_PROGRESS

    @property
    def is_finished(self) -> bool:
        return len(self.output_tokens) >= self.max_new_tokens
