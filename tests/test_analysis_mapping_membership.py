"""``key in table`` where ``table`` holds a mapping wherever it is read
(``analysis/mappings.py``): a field every assignment of which in the file
builds a dict, or a local every binding of which does.  The test asks which
keys are there, never what is stored under them, so a gradient cache every
rank fills under the same parameter names, each with its own rank's shard,
has the same key set on every rank.  Each VALID shape sits beside the
INVALID one that must be reported.
"""

import textwrap

from cslint.api import check_paths

BUFFER = """
    import torch
    import torch.distributed as dist


    class ShardedGrads:
        def __init__(self, group):
            self.group = group
            self.rank = dist.get_rank(group)
            {init}

        def shard_of(self, grad):
            size = grad.numel() // dist.get_world_size(self.group)
            return grad.flatten()[self.rank * size:(self.rank + 1) * size]

        def update(self, named_grads):
            for name, grad in named_grads:
                if {test}:
                    {store}
                    dist.all_reduce(self.grads[name], group=self.group)

        def seed(self, names):
            {seed}
"""


def _findings(tmp_path, init="self.grads = {}", test="name not in self.grads",
              store="self.grads[name] = self.shard_of(grad)", seed="pass"):
    path = tmp_path / "grads.py"
    source = BUFFER.replace("{init}", init).replace("{test}", test).replace("{store}", store).replace("{seed}", seed)
    path.write_text(textwrap.dedent(source))
    return sorted((f.code, f.condition) for f in check_paths([str(path)], cache=False).findings)


def test_VALID_a_field_built_as_a_dict_has_the_same_keys_on_every_rank(tmp_path):
    assert _findings(tmp_path) == []


def test_VALID_a_dict_made_by_a_mapping_class_or_annotated_counts_too(tmp_path):
    assert _findings(tmp_path, init="self.grads = dict()") == []
    assert _findings(tmp_path, init="self.grads: dict = {}") == []


def test_INVALID_a_list_field_compares_the_values_it_holds(tmp_path):
    # ``x in list`` compares values: the shards this rank stored
    found = _findings(tmp_path, init="self.grads = []", test="grad in self.grads",
                      store="self.grads.append(self.shard_of(grad))")
    assert found == [("CSL101", "grad in self.grads")]


def test_INVALID_a_field_also_assigned_something_else_is_not_known_to_be_a_dict(tmp_path):
    found = _findings(tmp_path, init="self.grads = {}\n            self.grads = list(self.grads)")
    assert found == [("CSL101", "name not in self.grads")]


def test_INVALID_a_key_stored_only_on_some_ranks_still_differs(tmp_path):
    # rank 0 alone puts the names there first: which keys the others find is not what it finds
    found = _findings(tmp_path, seed="if self.rank == 0:\n                self.grads.update(dict.fromkeys(names))")
    assert found == [("CSL101", "name not in self.grads")]


LOCAL = """
    import torch.distributed as dist


    def reduce_once(named, group, rank, {param}):
        {bind}
        for name, value in named:
            if name not in seen:
                seen[name] = value[rank]
                dist.all_reduce(value, group=group)
"""


def _local_findings(tmp_path, bind="seen = {}", param="extra=None"):
    path = tmp_path / "once.py"
    path.write_text(textwrap.dedent(LOCAL.replace("{bind}", bind).replace("{param}", param)))
    return sorted((f.code, f.condition) for f in check_paths([str(path)], cache=False).findings)


def test_VALID_a_local_bound_only_to_a_dict_has_the_same_keys_on_every_rank(tmp_path):
    assert _local_findings(tmp_path) == []


def test_INVALID_a_local_bound_otherwise_too_keeps_the_old_reading(tmp_path):
    found = _local_findings(tmp_path, bind="seen = {} if extra is None else extra")
    assert found == [("CSL101", "name not in seen")]
