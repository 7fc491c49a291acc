"""GRPO with a local vLLM engine: weights pushed to vLLM from the main process only.

Upstream: huggingface/trl, fix commit 37b26a386970761e2c255fe1f0857c47a79cc19d
          ("More comments, fix ds3 hanging", in PR #2600 "vLLM for fast generation in GRPO").
Group: world (under DeepSpeed ZeRO-3, unwrapping the model gathers the
partitioned parameters from every rank).
Why ranks diverge: only the main process owns the vLLM engine, so the weight
push sits in an `is_main_process` branch.  Under ZeRO-3 the unwrap inside it
all-gathers the parameters: the main process waits in that gather while the
other processes go on to gather the prompts.
Variant: buggy -- the parameter gather runs on the main process only.
"""

from accelerate.utils import broadcast_object_list, gather_object

from trl.models import unwrap_model_for_generation


class GRPOGenerator:
    def __init__(self, accelerator, llm, sampling_params):
        self.accelerator = accelerator
        self.llm = llm
        self.sampling_params = sampling_params
        self._last_loaded_step = -1

    def generate(self, model, global_step, prompts_text):
        if self.accelerator.is_main_process:
            if global_step != self._last_loaded_step:
                with unwrap_model_for_generation(model, self.accelerator) as unwrapped:  # expect: CSL101
                    engine_model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
                    engine_model.load_weights(unwrapped.state_dict().items())
                self._last_loaded_step = global_step
        all_prompts = gather_object(prompts_text)
        if self.accelerator.is_main_process:
            outputs = self.llm.generate(all_prompts, sampling_params=self.sampling_params)
            completion_ids = [out.token_ids for group in outputs for out in group.outputs]
        else:
            completion_ids = [None] * len(all_prompts)
        return broadcast_object_list(completion_ids, from_process=0)
