"""A module memo the constructor fills (issue 14: DeepSpeed's world-group
clone, ``if _WORLD is None: _WORLD = new_group(...)``, first reached from
the engine's constructor, then from methods under rank tests).

A later argument-free call of the function the constructor called at the
top of its body reaches the memo's collective only while the memo is None;
the constructor's call filled it on every rank whose path led there, and the
same call takes the same path while nothing writes the globals its tests
read.  Each shape that stays quiet sits beside those that must still be
reported: the memo cleared by a method the class can call, a path global
rebound by a method, the method run by the constructor before the fill, a
function that reaches the memo on its own, not through the filled call, and
a class of the family whose objects run no constructor of the family."""

import textwrap

from cslint.api import check_source

GROUPS = """
    import torch.distributed as dist

    _WORLD = None
    layout = None


    def _clone_world():
        global _WORLD
        if _WORLD is None:
            _WORLD = dist.new_group(ranks=list(range(dist.get_world_size())))
        return _WORLD


    def data_group():
        if layout is not None:
            return layout.get_group()
        return _clone_world()


    def data_rank():
        return dist.get_rank(group=data_group())


    def use_layout(mesh):
        global layout
        layout = mesh


    def release():
        global _WORLD
        _WORLD = None
"""

FILLED = GROUPS + """

    class Engine:
        def __init__(self, model, mesh=None):
            self.model = model
            if mesh is not None:
                use_layout(mesh)
            self._setup(model)

        def _setup(self, model):
            self.group = data_group()
            self.size = dist.get_world_size()

        def save(self, path):
            if dist.get_rank() == 0:
                if data_rank() == 0:
                    print(path)
"""

CLEARED = GROUPS + """

    class Engine:
        def __init__(self, model):
            self.model = model
            self._setup(model)

        def _setup(self, model):
            self.group = data_group()

        def close(self):
            release()

        def save(self, path):
            if dist.get_rank() == 0:
                if data_rank() == 0:
                    print(path)
"""

REBOUND = GROUPS + """

    class Engine:
        def __init__(self, model):
            self.model = model
            self._setup(model)

        def _setup(self, model):
            self.group = data_group()

        def move(self, mesh):
            use_layout(mesh)

        def save(self, path):
            if dist.get_rank() == 0:
                if data_rank() == 0:
                    print(path)
"""

EARLY = GROUPS + """

    class Engine:
        def __init__(self, model):
            self.model = model
            self.save("start")
            self._setup(model)

        def _setup(self, model):
            self.group = data_group()

        def save(self, path):
            if dist.get_rank() == 0:
                if data_rank() == 0:
                    print(path)
"""

BYPASS = GROUPS + """

    class Engine:
        def __init__(self, model):
            self.model = model
            self._setup(model)

        def _setup(self, model):
            self.group = data_group()

        def save(self, path):
            if dist.get_rank() == 0:
                _clone_world()
"""

UNBUILT = GROUPS + """

    class Saver:
        def save(self, path):
            if dist.get_rank() == 0:
                if data_rank() == 0:
                    print(path)


    class Engine(Saver):
        def __init__(self, model):
            self.model = model
            self._setup(model)

        def _setup(self, model):
            self.group = data_group()
"""

#: a path test longer than a condition's text (120 characters): what it reads is the test's own, not its text's
LONG_NAME = "use_the_process_mesh_layout_for_every_data_parallel_group_that_this_module_builds_from_this_point_on_forward"
LONG_TEST = FILLED.replace("layout = None\n", f"layout = None\n    {LONG_NAME} = False\n").replace(
    "if layout is not None:", f"if layout is not None and {LONG_NAME}:")

#: a path test that reads a part of a global: the part may change while the global is not rebound
PART_TEST = FILLED.replace("if layout is not None:", "if layout is not None and layout.active:")


def _codes_at(source, statement):
    """The codes of the findings on the line that is ``statement`` alone."""
    text = textwrap.dedent(source)
    rows = [i for i, row in enumerate(text.splitlines(), 1) if row.strip() == statement]
    assert len(rows) == 1
    return [f.code for f in check_source(text, report="per-site").findings if f.line == rows[0]]


def test_memo_filled_by_the_constructor_is_not_reached_later():
    assert _codes_at(FILLED, "if data_rank() == 0:") == []


def test_memo_cleared_by_a_method_is_still_reported():
    assert _codes_at(CLEARED, "if data_rank() == 0:") == ["CSL101"]


def test_path_global_rebound_by_a_method_is_still_reported():
    assert _codes_at(REBOUND, "if data_rank() == 0:") == ["CSL101"]


def test_method_run_before_the_fill_is_still_reported():
    assert _codes_at(EARLY, "if data_rank() == 0:") == ["CSL101"]


def test_memo_reached_past_the_filled_call_is_still_reported():
    assert _codes_at(BYPASS, "_clone_world()") == ["CSL101"]


def test_class_built_without_the_constructor_is_still_reported():
    assert _codes_at(UNBUILT, "if data_rank() == 0:") == ["CSL101"]


def test_memo_path_test_longer_than_its_text_is_read_whole():
    assert len(f"layout is not None and {LONG_NAME}") > 120
    assert _codes_at(LONG_TEST, "if data_rank() == 0:") == []


def test_memo_path_test_reading_a_part_of_a_global_is_still_reported():
    assert _codes_at(PART_TEST, "if data_rank() == 0:") == ["CSL101"]
