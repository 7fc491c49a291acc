"""Calling an object a field holds runs its class's ``__call__`` (issue 14,
cause 5: a call resolved by its name alone): ``self.all_reduce(x)``, where
the field holds an instance of a class of the tree that defines ``__call__``,
is no collective named ``all_reduce`` over the world; it reaches what that
``__call__`` issues, over the group it names.  A field holding the library's
collective itself stays that collective."""

import textwrap

from cslint.api import check_paths


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def _findings(tmp_path):
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(tmp_path / "pkg" / "comm.py", """
        import torch.distributed as dist

        from vllm.distributed import get_tp_group


        class FusedReduce:
            def __init__(self, size):
                self.size = size

            def __call__(self, x):
                dist.all_reduce(x, group=get_tp_group().device_group)
                return x
    """)
    _write(tmp_path / "pkg" / "scale.py", """
        import torch.distributed as dist


        class Scale:
            def __call__(self, x):
                return x * 2


        def sync():
            dist.barrier()
    """)
    _write(tmp_path / "pkg" / "layer.py", """
        from typing import TYPE_CHECKING

        import torch.distributed as dist

        from vllm.distributed import get_pp_group

        from .scale import Scale

        if TYPE_CHECKING:
            from .comm import FusedReduce


        class Layer:
            def __init__(self, all_reduce: "FusedReduce"):
                self.all_reduce = all_reduce

            def forward(self, x):
                if get_pp_group().is_first_rank:
                    return x
                return self.all_reduce(x)          # over TP in FusedReduce: a stage predicate is alike there

            def leader_only(self, x):
                if dist.get_rank() == 0:
                    return x
                return self.all_reduce(x)          # reported: the rank differs inside the TP group


        class Direct:
            def __init__(self, group):
                self.all_reduce = dist.all_reduce
                self.group = group

            def forward(self, x):
                if get_pp_group().is_first_rank:
                    return x
                return self.all_reduce(x)          # reported: torch's all_reduce itself, over the world


        class Scaled:
            def __init__(self):
                self.all_reduce = Scale()

            def forward(self, x):
                if dist.get_rank() == 0:
                    return x
                return self.all_reduce(x)          # a Scale, whose __call__ issues no collective
    """)
    result = check_paths([str(tmp_path / "pkg")], report="per-site")
    return sorted((f.path.rsplit("/", 1)[-1], f.line, f.group) for f in result.findings)


def test_a_field_holding_a_tree_object_is_called_through_its_class(tmp_path):
    found = _findings(tmp_path)
    # INVALID: line 21 (a stage predicate before the TP all-reduce FusedReduce issues) and
    # line 47 (a Scale: its call reaches no collective, whatever the field is called)
    assert not any(line in (21, 47) for _path, line, _group in found)
    # VALID: reached through FusedReduce.__call__, over the TP group; the library's own all_reduce stays
    assert found == [("layer.py", 26, "tp"), ("layer.py", 37, "world")]
