"""Helpers shared by the tensorrt_llm_patch tests, and checks of the fixture tree itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "trtllm_tree"
EXECUTOR = "tensorrt_llm/_torch/pyexecutor/py_executor.py"
TRANSCEIVER = "tensorrt_llm/_torch/disaggregation/transceiver.py"
COORDINATOR = "tensorrt_llm/_torch/disaggregation/orchestration/coordinator.py"
COMMUNICATOR = "tensorrt_llm/_torch/distributed/communicator.py"
DRAFTER = "tensorrt_llm/_torch/speculative/dspark_drafter.py"
INCLUDE_PREFIXES = ("tensorrt_llm/_torch/pyexecutor/", "tensorrt_llm/_torch/disaggregation/")


def copy_fixture(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to prove nothing was written)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def load_report(directory: Path) -> dict:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


def hazards_in(report: dict, function_suffix: str) -> list[dict]:
    return [h for h in report["hazards"] if h["function"].endswith(function_suffix)]


# The fixture tree itself: compiles, and is recognised as TensorRT-LLM with its version.


def test_fixture_tree_compiles():
    import py_compile
    import tempfile

    files = sorted(FIXTURE.rglob("*.py"))
    assert len(files) >= 12
    with tempfile.TemporaryDirectory() as scratch:
        for index, path in enumerate(files):
            py_compile.compile(str(path), cfile=f"{scratch}/{index}.pyc", doraise=True)


def test_fixture_tree_is_identified_with_its_version():
    from tensorrt_llm_patch.locate import identify_tree

    info = identify_tree(FIXTURE)
    assert info.root == FIXTURE
    assert info.version == "0.99.0.dev0+fixture"
    assert info.version_source == "tensorrt_llm/version.py"
    # The package directory itself is accepted too.
    assert identify_tree(FIXTURE / "tensorrt_llm").root == FIXTURE
