"""PyTorch Lightning and Fabric.

What the API issues.  A ``Strategy`` (``trainer.strategy``,
``self.trainer.strategy``, ``fabric.strategy``) communicates over every
process of the job in ``barrier``, ``broadcast``, ``reduce``, ``all_gather``
and ``reduce_boolean_decision``; ``Fabric`` and ``LightningModule`` expose
the same as ``barrier``/``broadcast``/``all_gather``/``all_reduce``.  A
trainer's entry points (``trainer.fit``, ``validate``, ``test``, ``predict``)
run the distributed loop: set-up barriers, gradient all-reduces, metric syncs.

What the trainer says about this process.  ``is_global_zero`` (of a
trainer, a strategy or Fabric) holds on global rank 0 only;
``local_rank``/``global_rank``/``node_rank`` are already rank names.
``world_size`` and ``num_devices`` are the same on every process.

What the trainer hands a ``LightningModule``.  Its step hooks
(``training_step``, ``validation_step``, ``test_step``, ``predict_step``)
get this process's own batch, from its shard of the data: a test on the
batch's contents, or a metric logged only for some batches, differs between
ranks.

What runs on another thread.  Lightning's ``RichProgressBar`` draws with
rich, whose auto-refreshing ``Progress`` calls every column's ``render``
from its own refresh thread on a timer: a ``ProgressColumn`` subclass's
``render`` runs a per-process number of times, at per-process moments
(``thread_callbacks``), so it must not reach a collective (a metric sync).
"""

from __future__ import annotations

from .specs import KIND_RANK_ID, CollectiveSpec, Preset, SourceSpec

_L = "lightning"

_STRATEGY_METHODS = {
    "barrier": "uniform", "broadcast": "uniform", "reduce": "uniform", "all_gather": "uniform",
    "reduce_boolean_decision": "uniform", "all_reduce": "uniform",
}

_collectives = []
for _name, _result in _STRATEGY_METHODS.items():
    for _receiver in ("*.strategy", "strategy", "*.fabric", "fabric", "*._fabric"):
        _collectives.append(CollectiveSpec(f"{_receiver}.{_name}", _L, group="world", result=_result,
                                           receiver="named"))

for _name in ("fit", "validate", "test", "predict"):
    for _receiver in ("trainer", "*.trainer", "*_trainer"):
        _collectives.append(CollectiveSpec(f"{_receiver}.{_name}", _L, group="world", result="local",
                                           receiver="named", local_work=True))

_sources = [
    SourceSpec("*.is_global_zero", KIND_RANK_ID, what="value"),
    SourceSpec("is_global_zero", KIND_RANK_ID, what="value"),
]

PRESET = Preset(
    name="lightning",
    collectives=_collectives,
    sources=_sources,
    uniform=["*.num_devices", "*.num_nodes", "*.trainer.world_size", "*.strategy.world_size"],
    batch_hooks=[("*LightningModule", ("training_step", "validation_step", "test_step", "predict_step"))],
    # Lightning's RichProgressBar draws with rich: a `Progress` with auto-refresh calls every
    # column's `render` from rich's refresh thread, on its own timer.
    thread_callbacks=[("rich.progress.ProgressColumn", ("render",))],
)
