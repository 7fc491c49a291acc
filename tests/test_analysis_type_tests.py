"""A type test for a class no data is of (``analysis/typetests.py``): a list
holds a rank's prepared data loader beside the model it prepared, and the
element a loop picks by ``isinstance(obj, torch.nn.Module)`` is the model,
never the loader, so the model does not carry the loader's per-rank data.
A test against a class the presets do not know, a name bound again inside
the arm and a read outside the arm keep the data."""

import textwrap

from cslint.api import check_paths

PREPARER = """
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader


    class Preparer:
        def __init__(self):
            self._models = []

        def prepare_data_loader(self, loader):
            return loader

        def wrap_model(self, model):
            if model.frozen:
                return None
            return model

        def _prepare_one(self, obj):
            if isinstance(obj, DataLoader):
                return self.prepare_data_loader(obj)
            elif isinstance({model_class}):
                return self.wrap_model(obj)
            return obj

        def prepare(self, *args):
            result = [self._prepare_one(obj) for obj in args]
            index = None
            for i, obj in enumerate(result):
                if isinstance({pick_class}):
                    {pick}
            if index is None:
                return tuple(result)
            dist.broadcast(torch.zeros(1), src=0)
            return tuple(result)

        def clip(self, parameters):
            for model in self._models:
                if parameters == [p for p in model.parameters()]:
                    dist.all_reduce(torch.zeros(1))
"""

PICK = "index = i\n                self._models.append(obj)"


def _findings(tmp_path, model_class="obj, torch.nn.Module", pick_class="obj, torch.nn.Module", pick=PICK):
    path = tmp_path / "preparer.py"
    text = textwrap.dedent(PREPARER).replace("{model_class}", model_class).replace("{pick_class}", pick_class)
    path.write_text(text.replace("{pick}", pick))
    return sorted((f.code, f.function) for f in check_paths([str(path)], cache=False).findings)


def test_the_element_a_model_test_picks_is_not_the_rank_s_data_loader(tmp_path):
    assert _findings(tmp_path) == []


def test_a_test_for_a_class_the_presets_do_not_know_narrows_nothing(tmp_path):
    assert _findings(tmp_path, model_class="obj, Wrapped", pick_class="obj, Wrapped") == [("CSL101", "Preparer.clip")]


def test_a_tuple_of_classes_narrows_only_where_every_class_is_known(tmp_path):
    assert ("CSL101", "Preparer.clip") in _findings(tmp_path, pick_class="obj, (torch.nn.Module, Wrapped)")
    assert _findings(tmp_path, pick_class="obj, (torch.nn.Module, torch.optim.Optimizer)") == []


def test_a_name_bound_again_inside_the_arm_keeps_what_it_is_bound_to(tmp_path):
    pick = "obj = result[0]\n                self._models.append(obj)"
    assert ("CSL101", "Preparer.clip") in _findings(tmp_path, pick=pick)


def test_the_else_of_a_negated_test_is_narrowed_too(tmp_path):
    pick = "self._models.append(None if not isinstance(obj, torch.nn.Module) else obj)"
    assert ("CSL101", "Preparer.clip") not in _findings(tmp_path, pick_class="obj, object", pick=pick)
    pick = "self._models.append(obj if not isinstance(obj, torch.nn.Module) else None)"
    assert ("CSL101", "Preparer.clip") in _findings(tmp_path, pick_class="obj, object", pick=pick)


def test_the_else_of_a_negated_or_of_tests_is_narrowed_too(tmp_path):
    either = "isinstance(obj, torch.nn.Module) or isinstance(obj, torch.optim.Optimizer)"
    pick = f"self._models.append(None if not ({either}) else obj)"
    assert ("CSL101", "Preparer.clip") not in _findings(tmp_path, pick_class="obj, object", pick=pick)
    pick = f"self._models.append(obj if not ({either}) else None)"
    assert ("CSL101", "Preparer.clip") in _findings(tmp_path, pick_class="obj, object", pick=pick)


# The engine a launcher builds from the model, optimizer and scheduler it picks out of what it prepared:
# the optimizer by a tuple holding a library's stand-in optimizer class, the scheduler by an `or` of a
# type test and a test by class name against a library's list of its schedulers' names.
LAUNCHER = """
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader

    import deepspeed
    from accelerate.utils import DummyOptim, DummyScheduler
    from engines import SCHEDULE_NAMES, make_engine


    class Launcher:
        def __init__(self):
            self._engines = []
            self._loaders = []

        def prepare_data_loader(self, loader):
            return loader

        def launch(self, *args):
            result = [self.prepare_data_loader(obj) if isinstance(obj, DataLoader) else obj for obj in args]
            model = optimizer = scheduler = None
            for obj in result:
                if isinstance(obj, torch.nn.Module):
                    model = obj
                elif isinstance(obj, {optimizer_classes}):
                    optimizer = obj
                elif {scheduler_test}:
                    scheduler = obj
                else:
                    self._loaders.append(obj)
            self._engines.append(make_engine(model, optimizer, scheduler))
            return tuple(result)

        def clip(self, parameters):
            for engine in self._engines:
                if parameters == [p for p in engine.parameters()]:
                    dist.all_reduce(torch.zeros(1))

        def drain(self):
            for loader in self._loaders:
                for batch in loader:
                    if batch.any():
                        dist.all_reduce(batch)
"""

SCHEDULER_TEST = ("isinstance(obj, DummyScheduler) or "
                  "type(obj).__name__ in deepspeed.runtime.lr_schedules.VALID_LR_SCHEDULES")


def _launcher_findings(tmp_path, optimizer_classes="(torch.optim.Optimizer, DummyOptim)",
                       scheduler_test=SCHEDULER_TEST):
    path = tmp_path / "launcher.py"
    text = textwrap.dedent(LAUNCHER).replace("{optimizer_classes}", optimizer_classes)
    path.write_text(text.replace("{scheduler_test}", scheduler_test))
    return sorted((f.code, f.function) for f in check_paths([str(path)], cache=False).findings)


def test_stand_in_classes_and_a_scheduler_name_list_narrow_and_the_loader_still_decides(tmp_path):
    # the engine is built from what the model, optimizer and scheduler tests picked: never the loader;
    # the loaders the chain leaves over still hold this rank's batches
    assert _launcher_findings(tmp_path) == [("CSL101", "Launcher.drain")]


def test_a_class_name_list_the_presets_do_not_know_narrows_nothing(tmp_path):
    test = "isinstance(obj, DummyScheduler) or type(obj).__name__ in SCHEDULE_NAMES"
    assert ("CSL101", "Launcher.clip") in _launcher_findings(tmp_path, scheduler_test=test)


def test_an_or_narrows_only_where_every_operand_narrows(tmp_path):
    test = "isinstance(obj, DummyScheduler) or hasattr(obj, 'step')"
    assert ("CSL101", "Launcher.clip") in _launcher_findings(tmp_path, scheduler_test=test)
    assert ("CSL101", "Launcher.clip") in _launcher_findings(tmp_path, optimizer_classes="(DummyOptim, Wrapped)")
