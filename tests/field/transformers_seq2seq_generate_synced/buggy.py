"""Seq2seq evaluation with generation under ZeRO-3: the trainer calls generate without synced ranks.

Upstream: huggingface/transformers PR #22242 ("[deepspeed zero3] need
          `generate(synced_gpus=True, ...)`"); the same hang and fix in
          deepspeedai/DeepSpeedExamples PR #636 ("DS Chat Step 3 - Fix Zero Stage 3").
Group: world (the ZeRO-3 partition group: every forward all-gathers the layer weights).
Why ranks diverge: `generate` (generation.py) stops a rank as soon as its own
sequences are done unless `synced_gpus` is set.  The prediction step passes
only the length settings, so under ZeRO-3 the first rank to finish leaves
the decode loop while its peers wait in the next forward's all-gather.
Variant: buggy -- the caller leaves `synced_gpus` at its default (False),
selecting generate's per-rank exit.
"""

from .generation import generate


class Seq2SeqEvaluator:
    def __init__(self, model, generation_max_length, eos_token_id):
        self.model = model
        self.generation_max_length = generation_max_length
        self.eos_token_id = eos_token_id

    def prediction_step(self, inputs):
        gen_kwargs = {"max_length": self.generation_max_length, "eos_token_id": self.eos_token_id}
        return generate(self.model, inputs["input_ids"], **gen_kwargs)  # expect: CSL102
