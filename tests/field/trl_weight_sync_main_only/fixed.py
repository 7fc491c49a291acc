"""GRPO with a local vLLM engine: weights pushed to vLLM from the main process only.

Upstream: huggingface/trl, fix commit 37b26a386970761e2c255fe1f0857c47a79cc19d
          ("More comments, fix ds3 hanging", in PR #2600 "vLLM for fast generation in GRPO").
Group: world (under DeepSpeed ZeRO-3, unwrapping the model gathers the
partitioned parameters from every rank).
Why ranks diverge: see buggy.py.
Variant: fixed -- every process takes the full state dict (joining the
gather); only the main process loads it into vLLM.
"""

from accelerate.utils import broadcast_object_list, gather_object


class GRPOGenerator:
    def __init__(self, accelerator, llm, sampling_params):
        self.accelerator = accelerator
        self.llm = llm
        self.sampling_params = sampling_params
        self._last_loaded_step = -1

    def generate(self, model, global_step, prompts_text):
        if global_step != self._last_loaded_step:
            state_dict = self.accelerator.get_state_dict(model)
            if self.accelerator.is_main_process:
                engine_model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
                engine_model.load_weights(state_dict.items())
            self._last_loaded_step = global_step
        all_prompts = gather_object(prompts_text)
        if self.accelerator.is_main_process:
            outputs = self.llm.generate(all_prompts, sampling_params=self.sampling_params)
            completion_ids = [out.token_ids for group in outputs for out in group.outputs]
        else:
            completion_ids = [None] * len(all_prompts)
        return broadcast_object_list(completion_ids, from_process=0)
