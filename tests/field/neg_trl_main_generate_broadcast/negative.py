"""Negative (safe): the main process generates with its local engine, every process joins the broadcast.

Upstream: huggingface/trl, trl/trainer/grpo_trainer.py at commit
          37b26a386970761e2c255fe1f0857c47a79cc19d (GRPO with a local vLLM engine).
Group: world (accelerate's `gather_object` and `broadcast_object_list`).
Why it looks divergent: generation runs under `is_main_process`.
Why it is safe: the local engine's `generate` issues no collective across the
training processes; the gather before and the broadcast after are
unconditional.
"""

from accelerate.utils import broadcast_object_list, gather_object


def generate_completions(accelerator, llm, sampling_params, prompts_text, num_generations):
    all_prompts = gather_object(prompts_text)
    if accelerator.is_main_process:
        outputs = llm.generate(all_prompts, sampling_params=sampling_params, use_tqdm=False)
        completion_ids = [out.token_ids for group in outputs for out in group.outputs]
    else:
        completion_ids = [None] * len(all_prompts) * num_generations
    completion_ids = broadcast_object_list(completion_ids, from_process=0)
    start = accelerator.process_index * len(prompts_text) * num_generations
    return completion_ids[start:start + len(prompts_text) * num_generations]
