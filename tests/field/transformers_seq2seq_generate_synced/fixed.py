"""Seq2seq evaluation with generation under ZeRO-3: the trainer calls generate without synced ranks.

Upstream: huggingface/transformers PR #22242 ("[deepspeed zero3] need
          `generate(synced_gpus=True, ...)`"); the same hang and fix in
          deepspeedai/DeepSpeedExamples PR #636 ("DS Chat Step 3 - Fix Zero Stage 3").
Group: world (the ZeRO-3 partition group: every forward all-gathers the layer weights).
Why ranks diverge: see buggy.py.
Variant: fixed -- under ZeRO-3 the trainer passes `synced_gpus=True`, so
finished ranks keep forwarding until every rank is done.
"""

from transformers.integrations import is_deepspeed_zero3_enabled

from .generation import generate


class Seq2SeqEvaluator:
    def __init__(self, model, generation_max_length, eos_token_id):
        self.model = model
        self.generation_max_length = generation_max_length
        self.eos_token_id = eos_token_id

    def prediction_step(self, inputs):
        gen_kwargs = {
            "max_length": self.generation_max_length,
            "eos_token_id": self.eos_token_id,
            "synced_gpus": is_deepspeed_zero3_enabled(),
        }
        return generate(self.model, inputs["input_ids"], **gen_kwargs)
