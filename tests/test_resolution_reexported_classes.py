"""A class a package re-exports from its ``__init__.py`` is the class it names
when that ``__init__.py`` is not analysed (it holds no collective), for a call
as for a type (issue 14, object-taint-spread).

A test helper builds a settings record through the package's own name
(``from pkg.conf import Settings``; ``pkg/conf/__init__.py`` imports it from
``pkg/conf/settings.py``), with the model directory chosen by whether the path
exists on this rank's disk beside the ring degree the caller passed, and a
start-up step reads the degree back to decide a barrier.  The settings module
holds a collective of its own (a method waiting for the peers), so it is
analysed; its package's ``__init__.py`` is not.  Resolved, the call
binds each argument to its own field, so the degree is the caller's and the
same on every rank, while the directory still differs.  Before, a call through
the re-exported name ran no function of the tree: its result was every
argument at once, and each attribute read of it all of them, while the same
code importing ``pkg.conf.settings`` directly was read field by field."""

import pytest

from cslint.api import check_paths

_INIT = """\
from pkg.conf.settings import Settings

__all__ = ["Settings"]
"""

_SETTINGS = """\
from dataclasses import dataclass

import torch.distributed as dist


@dataclass
class Settings:
    model_path: str
    ring_degree: int = 1
    offload: bool = True

    @classmethod
    def for_model(cls, model_path: str, ring_degree: int) -> "Settings":
        return cls(model_path=model_path, ring_degree=ring_degree)

    def wait_for_peers(self):
        dist.barrier()
"""

_APP = """\
import os

import torch.distributed as dist

from {module} import Settings


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


def _findings(tmp_path, module="pkg.conf", made="Settings(model_path=root, ring_degree=ring)",
              test="settings.ring_degree > 1"):
    package = tmp_path / "pkg"
    (package / "conf").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "conf" / "__init__.py").write_text(_INIT)
    (package / "conf" / "settings.py").write_text(_SETTINGS)
    (package / "app.py").write_text(_APP.format(module=module, made=made, test=test))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings)


def test_a_field_of_a_record_built_through_a_reexported_name_holds_its_own_argument(tmp_path):
    assert _findings(tmp_path) == []


@pytest.mark.xfail(strict=True, reason="`cls(...)` inside a classmethod is not read as the class's constructor, so "
                                       "its result carries every argument; this passed before dc6f11a only because the "
                                       "classmethod's arguments were bound one parameter to the left")
def test_a_classmethod_called_through_a_reexported_name_is_the_class_s_own(tmp_path):
    assert _findings(tmp_path, made="Settings.for_model(root, ring)") == []


def test_the_field_the_rank_local_path_went_to_still_differs(tmp_path):
    barrier = _APP.splitlines().index("        dist.barrier()") + 1
    assert _findings(tmp_path, test="settings.model_path.startswith('/cache')") == [("CSL101", "app.py", barrier)]


def test_the_module_imported_directly_reads_alike(tmp_path):
    assert _findings(tmp_path, module="pkg.conf.settings") == []
