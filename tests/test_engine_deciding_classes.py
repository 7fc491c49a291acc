"""The module defining a class that code analysed in depth constructs, or calls
a classmethod of, is read when that call's result decides a collective, even
where the module holds no collective of its own and no prefilter round chose
it (issue 14, object-taint-spread).

A test helper builds a settings record through its package's name
(``from pkg.conf import Settings``; ``pkg/conf/__init__.py`` re-exports it from
``pkg/conf/settings.py``, a plain dataclass with a classmethod and no
collective), with the model directory chosen by whether the path exists on
this rank's disk beside the ring degree the caller passed; a start-up step
reads the degree back to decide a barrier.  Read, the class binds each
argument to its own field: the degree is the caller's, the same on every
rank, while the directory still differs.  Before, no round parsed the
settings module, so the call ran nothing of the tree: its result was every
argument at once and the degree read back carried the rank-local directory."""

import pytest

from cslint.api import check_paths

_INIT = """\
from pkg.conf.settings import Settings

__all__ = ["Settings"]
"""

_SETTINGS = """\
from dataclasses import dataclass


@dataclass
class Settings:
    model_path: str
    ring_degree: int = 1
    offload: bool = True

    @classmethod
    def for_model(cls, model_path: str, ring_degree: int) -> "Settings":
        return cls(model_path=model_path, ring_degree=ring_degree)
"""

_APP = """\
import os

import torch.distributed as dist

from pkg.conf import Settings


def build(model_id: str, ring: int) -> Settings:
    root = model_id if os.path.exists(model_id) else "/cache/" + model_id
    settings = {made}
    settings.offload = False
    return settings


def setup(model_id, ring):
    settings = build(model_id, ring)
    if {test}:
        dist.barrier()
"""

_BARRIER = _APP.splitlines().index("        dist.barrier()") + 1


def _findings(tmp_path, made="Settings(model_path=root, ring_degree=ring)", test="settings.ring_degree > 1",
              jobs=1):
    package = tmp_path / "pkg"
    (package / "conf").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "conf" / "__init__.py").write_text(_INIT)
    (package / "conf" / "settings.py").write_text(_SETTINGS)
    (package / "app.py").write_text(_APP.format(made=made, test=test))
    findings = check_paths([str(tmp_path)], cache=False, jobs=jobs, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_field_of_a_record_of_a_class_in_a_module_with_no_collective_holds_its_own_argument(tmp_path, jobs):
    assert _findings(tmp_path, jobs=jobs) == []


@pytest.mark.xfail(strict=True, reason="`cls(...)` inside a classmethod is not read as the class's constructor, so "
                                       "its result carries every argument; this passed before dc6f11a only because the "
                                       "classmethod's arguments were bound one parameter to the left")
def test_a_classmethod_of_a_class_in_a_module_with_no_collective_is_the_class_s_own(tmp_path):
    assert _findings(tmp_path, made="Settings.for_model(root, ring)") == []


def test_the_field_the_rank_local_path_went_to_still_differs(tmp_path):
    assert _findings(tmp_path, test="settings.model_path.startswith('/cache')") == [("CSL101", "app.py", _BARRIER)]


def test_through_a_classmethod_the_rank_local_field_still_differs(tmp_path):
    assert _findings(tmp_path, made="Settings.for_model(root, ring)",
                     test="settings.model_path.startswith('/cache')") == [("CSL101", "app.py", _BARRIER)]
