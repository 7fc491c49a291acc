"""The documentation says what is true: it cites only documents in the
repository, the design's contracts match the code, the README documents
every option, and the commands it shows run as written."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DESIGN = REPO_ROOT / "docs" / "design.md"
README = REPO_ROOT / "README.md"
TEXT_SUFFIXES = {".md", ".py", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini", ".sh", ""}


def _repository_files() -> list[Path]:
    if shutil.which("git") and (REPO_ROOT / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, timeout=60)
        if listed.returncode == 0:
            return [REPO_ROOT / name for name in listed.stdout.decode().split("\0") if name]
    skip = {".git", ".venv", "__pycache__", ".cslint_cache", "demo-out"}
    return [p for p in REPO_ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(REPO_ROOT).parts)]


def _texts():
    for path in _repository_files():
        if path.suffix in TEXT_SUFFIXES and path.is_file() and path.stat().st_size < 2_000_000:
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


def test_no_file_cites_a_document_outside_the_repository():
    # spelled in pieces so that this file does not cite them itself
    outside = re.compile("|".join([r"\b" + "DESIGN" + r"\.md", r"\.\./" + "shared", "/work/" + "shared",
                                   r"\bshared/" + "seeds"]))
    cited = [f"{path.relative_to(REPO_ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group()}"
             for path, text in _texts() for m in outside.finditer(text)]
    assert not cited


def test_every_cited_document_exists():
    names = {p.name for p in _repository_files()}
    missing = []
    for path, text in _texts():
        if path.suffix not in (".md", ".py"):
            continue
        for match in re.finditer(r"(?<![\w/.-])(docs/[\w.-]+\.md|[A-Z][A-Z_]+\.md)\b", text):
            cited = match.group(1)
            if "/" in cited and not (REPO_ROOT / cited).is_file() or "/" not in cited and cited not in names:
                missing.append(f"{path.relative_to(REPO_ROOT)}: {cited}")
    assert not missing


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_the_design_json_contract_is_what_check_prints(tmp_path):
    (documented,) = [json.loads(b) for b in _blocks(DESIGN, "json")]
    (tmp_path / "worker.py").write_text(
        "import torch.distributed as dist\n\n\ndef drain(t):\n    if dist.get_rank() == 0:\n        return None\n"
        "    dist.all_reduce(t)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "cslint", "check", "--no-cache", "--output-format", "json",
                           "worker.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    printed = json.loads(done.stdout)
    assert set(printed) == set(documented)
    (finding,) = printed["findings"]
    assert set(documented["findings"][0]) <= set(finding)
    assert set(finding["chain"][0]) == set(documented["findings"][0]["chain"][0])
    assert set(documented["findings"][0]["fix"]) <= set(finding["fix"])
    extensions = set(finding) - set(documented["findings"][0])
    text = DESIGN.read_text(encoding="utf-8")
    assert all(f"`{key}`" in text for key in extensions), extensions  # every extension key is named


def test_the_design_configuration_is_every_key_and_valid():
    import tomllib

    from cslint.config import KNOWN_KEYS, settings_from_table

    (block,) = _blocks(DESIGN, "toml")
    table = tomllib.loads(block)["tool"]["cslint"]
    assert set(table) == KNOWN_KEYS
    settings = settings_from_table(table)
    assert settings.force_exclude is False and settings.respect_gitignore is True


def test_the_design_rule_table_is_the_rules():
    from cslint.rules import all_rules

    text = DESIGN.read_text(encoding="utf-8")
    listed = re.findall(r"^\| (CSL\d{3}) \| ([a-z-]+)", text, re.M)
    assert listed == [(rule.CODE, rule.NAME) for rule in all_rules()]


def _options(command: str) -> set[str]:
    from cslint.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return {s for action in sub._actions for s in action.option_strings if s.startswith("--") and s != "--help"}


def test_the_design_synopsis_names_real_options():
    synopsis = DESIGN.read_text(encoding="utf-8").split("### Command line", 1)[1].split("###", 1)[0]
    check_part, fix_part = synopsis.split("    cslint fix", 1)
    fix_part = fix_part.split("    cslint rules", 1)[0]
    assert set(re.findall(r"--[a-z][a-z-]*", check_part)) <= _options("check")
    assert set(re.findall(r"--[a-z][a-z-]*", fix_part)) <= _options("fix")


@pytest.mark.parametrize("command", ["check", "fix"])
def test_the_readme_documents_every_option(command):
    text = README.read_text(encoding="utf-8")
    undocumented = sorted(o for o in _options(command) if not re.search(re.escape(o) + r"(?![\w-])", text))
    assert not undocumented


def test_the_documented_libcst_command_runs_as_written(tmp_path):
    """README's `python -m libcst.tool codemod ...` line, run from the repository
    root as a reader would (it once needed `--no-format`)."""
    (line,) = [m.group(1) for m in re.finditer(r"`(python -m libcst\.tool codemod [^`]+)`",
                                                README.read_text(encoding="utf-8"))]
    words = line.split()
    assert words[-1] == "PATH" and "--no-format" not in words
    target = tmp_path / "worker.py"
    source = ("import torch.distributed as dist\n\n\ndef drain(t):\n    if dist.get_rank() == 0:\n"
              "        return None\n    dist.all_reduce(t)\n    return t\n")
    target.write_text(source, encoding="utf-8")
    from codemods.driver import fix_source
    from cslint.api import check_paths

    expected = fix_source(source, str(target), check_paths([str(target)]).findings).fixed
    assert expected != source
    done = subprocess.run([sys.executable, *words[1:-1], str(target)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Transformed 1 files successfully" in done.stderr
    assert target.read_text(encoding="utf-8") == expected
