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
