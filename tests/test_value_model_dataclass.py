"""A dataclass's generated ``__init__``: each field holds what its own
argument held, so reading one field of the object reads that argument
alone (not every argument the object was built with), and an argument
rank-local by itself still reaches the field it is stored in."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_SELECTION = """
    import os
    import torch.distributed as dist
    from dataclasses import dataclass, field

    @dataclass(frozen=True)
    class Selection:
        model_id: str
        count: int
        source_path: str = ""
        tags: list = field(default_factory=list)

    def read_index(path):
        if not os.path.exists(path):
            return {}
        return {"a": 1}

    def select(model_id, count):
        found = read_index(model_id + "/index.json")
        return Selection(model_id, count, source_path=found.get("a"))

    def init_runtime(n):
        for g in range(n):
            dist.new_group([g])
"""


def test_field_read_holds_its_own_argument_only():
    # VALID: the path read from this rank's file system sits beside the count
    # in the object; the count alone decides the loop
    assert _codes(_SELECTION + """
    def main(model_id, n):
        sel = select(model_id, n)
        init_runtime(sel.count)
    """) == []


def test_rank_local_argument_reaches_its_field():
    # INVALID: the count itself is read from this rank's file system
    assert _codes(_SELECTION + """
    def main(model_id):
        sel = Selection(model_id, len(os.listdir(model_id)))
        init_runtime(sel.count)
    """) == [("CSL103", 24)]


def test_rank_local_keyword_argument_reaches_its_field():
    # INVALID: the path field is the rank-local one, and the test reads it
    assert _codes(_SELECTION + """
    def main(model_id, n, t):
        sel = Selection(model_id, n, source_path=read_index(model_id).get("a"))
        if sel.source_path:
            dist.all_reduce(t)
    """) == [("CSL101", 29)]


_CONFIG = """
    import torch.distributed as dist
    from dataclasses import dataclass

    @dataclass
    class Base:
        world: int

    @dataclass
    class Config(Base):
        rank: int
        steps: int = 1

        def __post_init__(self):
            self.ready = True

    def make(world, steps):
        return Config(world, dist.get_rank(), steps)

    def run(t, world, steps):
        cfg = make(world, steps)
"""


def test_fields_of_a_dataclass_base_come_first():
    # VALID: positions follow the base's fields, then the class's own;
    # the world size and the step count are the same on every rank
    assert _codes(_CONFIG + """
        for _ in range(cfg.steps * cfg.world):
            dist.all_reduce(t)
    """) == []


def test_post_init_does_not_hide_the_constructor_arguments():
    # INVALID: the rank given to the constructor is the field read
    # (a class with __post_init__ ran only that, and its fields lost their arguments)
    assert _codes(_CONFIG + """
        if cfg.rank == 0:
            dist.all_reduce(t)
    """) == [("CSL101", 24)]



def test_class_arguments_stay_bound_past_the_nesting_limit():
    # VALID: the path is a call nested three deep when the object is built;
    # past the nesting limit the arguments still go to their own fields
    assert _codes("""
        import os
        import torch.distributed as dist

        class Selection:
            def __init__(self, model_id, count, source_path):
                self.model_id = model_id
                self.count = count
                self.source_path = source_path

        def read_index(path):
            if not os.path.exists(path):
                return {}
            return {"a": 1}

        def main(root, n):
            sel = Selection(root, n, os.path.join(root, str(read_index(root).get("a"))))
            for g in range(sel.count):
                dist.new_group([g])
    """) == []


def test_class_arguments_past_the_nesting_limit_still_reach_their_field():
    # INVALID: the count is this rank's directory listing, nested as deep
    assert _codes("""
        import os
        import torch.distributed as dist

        class Selection:
            def __init__(self, model_id, count):
                self.model_id = model_id
                self.count = count

        def main(root, n):
            sel = Selection(root, len(os.listdir(os.path.join(root, str(os.getcwd())))))
            for g in range(sel.count):
                dist.new_group([g])
    """) == [("CSL103", 13)]
