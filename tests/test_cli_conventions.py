"""The command line follows ruff's conventions: rule selectors, output
formats, quiet and show options, colour, stdin, and which files are checked
(force-exclude, .gitignore, fix temporaries)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from cslint.cli import main
from cslint.config import DEFAULT_PRESETS, KNOWN_KEYS

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HAZARD = textwrap.dedent(
    """\
    import torch.distributed as dist


    def drain(tensor):
        if dist.get_rank() == 0:
            return None
        dist.all_reduce(tensor)
        return tensor
    """
)
UNUSED_SUPPRESSION = "x = 1  # cslint: ignore[CSL101]\n"


def _write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _cslint(cwd, *args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cslint", *args], cwd=str(cwd), capture_output=True, text=True,
                          timeout=120, input=stdin, env=env)


@pytest.fixture()
def project(tmp_path, monkeypatch):
    _write(tmp_path / "worker.py", HAZARD)
    _write(tmp_path / "stale.py", UNUSED_SUPPRESSION)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- rule selectors ---------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_an_unknown_code_on_the_command_line_is_a_usage_error(project, capsys, option):
    assert main(["check", "--no-cache", option, "CSL101,CSL999", "."]) == 2
    err = capsys.readouterr().err
    assert f"invalid value 'CSL999' for '{option}'" in err and "unknown rule selector" in err
    assert "CSL102" in err  # the message lists the rules there are


def test_prefixes_of_rule_codes_are_selectors(project, capsys):
    assert main(["check", "--no-cache", "--select", "csl10", "--format", "json", "."]) == 1
    codes = [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert codes == ["CSL102"]
    assert main(["check", "--no-cache", "--ignore", "CSL1", "--format", "json", "."]) == 1
    assert [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["CSL002"]


@pytest.mark.parametrize("table, where", [
    ('select = ["CSL1", "CSL9"]', "`select`"),
    ('ignore = ["XYZ"]', "`ignore`"),
    ('extend-select = ["CSL0001"]', "`extend-select`"),
    ('per-file-ignores = { "tests/*" = ["CSL10x"] }', "`per-file-ignores.tests/*`"),
])
def test_an_unknown_code_in_the_configuration_is_an_error(project, capsys, table, where):
    _write(project / "pyproject.toml", f"[tool.cslint]\n{table}\n")
    assert main(["check", "--no-cache", "."]) == 2
    err = capsys.readouterr().err
    assert "unknown rule selector" in err and where in err and "pyproject.toml" in err


def test_a_config_file_without_cslint_settings_is_an_error(project, capsys):
    _write(project / "other.toml", "[tool.black]\nline-length = 100\n")
    assert main(["check", "--no-cache", "--config", "other.toml", "."]) == 2
    err = capsys.readouterr().err
    assert "other.toml" in err and "no [tool.cslint] table" in err
    _write(project / "cslint.toml", "[tool.cslint]\nignore = [\"CSL002\"]\n")
    assert main(["check", "--no-cache", "--config", "cslint.toml", "--format", "json", "."]) == 1
    assert [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["CSL102"]


def test_csl002_is_a_rule_that_rules_and_explain_know(project, capsys):
    assert main(["rules"]) == 0
    assert re.search(r"^CSL002  unused-suppression\s+\S", capsys.readouterr().out, re.M)
    assert main(["explain", "CSL002"]) == 0
    doc = capsys.readouterr().out
    assert doc.startswith("# CSL002 (unused-suppression)") and "## Why is this bad?" in doc
    assert main(["explain", "unused-suppression"]) == 0
    assert capsys.readouterr().out == doc
    from cslint.rules import get_rule

    rule = get_rule("CSL002")
    assert main(["check", "--no-cache", "--format", "json", "stale.py"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == rule.CODE and finding["message"] == rule.message(frozenset({"CSL101"}))
    assert main(["check", "--no-cache", "--output-format", "sarif", "stale.py"]) == 1
    descriptors = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    (descriptor,) = [d for d in descriptors if d["id"] == "CSL002"]
    assert (descriptor["id"], descriptor["name"]) == ("CSL002", rule.NAME)
    assert descriptor["shortDescription"]["text"] == rule.SUMMARY and descriptor["help"]["text"] == rule.DOC.strip()


# -- output -----------------------------------------------------------------------------


def test_output_format_and_its_alias_format_give_the_same_report(project, capsys):
    assert main(["check", "--no-cache", "--output-format", "json", "."]) == 1
    long_form = capsys.readouterr().out
    assert main(["check", "--no-cache", "--format", "json", "."]) == 1
    assert capsys.readouterr().out == long_form and json.loads(long_form)["findings"]


def test_concise_prints_one_line_per_finding(project, capsys):
    assert main(["check", "--no-cache", "--output-format", "concise", "."]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "Found 2 findings in 2 files."
    assert re.fullmatch(r"stale\.py:1:8: CSL002 unused suppression \(CSL101\): no finding on this line", lines[0])
    assert re.fullmatch(r"worker\.py:7:5: CSL102 \S.*", lines[1])
    assert len(lines) == 3


def test_statistics_count_findings_per_code(project, capsys):
    _write(project / "worker2.py", HAZARD)
    assert main(["check", "--no-cache", "--statistics", "."]) == 1
    assert capsys.readouterr().out.splitlines() == ["2\tCSL102\tdivergent-early-exit",
                                                    "1\tCSL002\tunused-suppression"]
    assert main(["check", "--no-cache", "--statistics", "--output-format", "json", "."]) == 1
    assert json.loads(capsys.readouterr().out) == [
        {"code": "CSL102", "name": "divergent-early-exit", "count": 2},
        {"code": "CSL002", "name": "unused-suppression", "count": 1}]
    assert main(["check", "--no-cache", "--statistics", "--output-format", "sarif", "."]) == 2


def test_quiet_prints_findings_only_and_twice_quiet_nothing(project, capsys):
    assert main(["check", "--no-cache", "-q", "--output-format", "concise", "."]) == 1
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 2 and "Found" not in out
    assert main(["check", "--no-cache", "-q", "."]) == 1
    out = capsys.readouterr().out
    assert "worker.py:7:5: CSL102" in out and "Found" not in out and "root cause" in out
    assert main(["check", "--no-cache", "-qq", "."]) == 1
    assert capsys.readouterr().out == ""
    os.remove("worker.py")
    os.remove("stale.py")
    _write(project / "clean.py", "x = 1\n")
    assert main(["check", "--no-cache", "-q", "."]) == 0
    assert capsys.readouterr().out == ""


def test_show_files_lists_what_would_be_checked(project, capsys):
    _write(project / "pyproject.toml", '[tool.cslint]\nextend-exclude = ["generated"]\n')
    _write(project / "generated" / "g.py", HAZARD)
    _write(project / "pkg" / "m.py", "x = 1\n")
    assert main(["check", "--show-files", "."]) == 0
    assert capsys.readouterr().out.splitlines() == ["pkg/m.py", "stale.py", "worker.py"]


def test_show_settings_prints_the_resolved_settings_as_toml(project, capsys):
    import tomllib

    _write(project / "pyproject.toml", '[tool.cslint]\npresets = ["tensorrt_llm"]\nignore = ["CSL103"]\n'
                                       'per-file-ignores = { "tests/*" = ["CSL1"] }\n')
    assert main(["check", "--show-settings", "--ignore", "CSL104", "--no-respect-gitignore", "worker.py"]) == 0
    out = capsys.readouterr().out
    head, table = out.split("\n\n", 1)
    assert head.splitlines() == ["Resolved settings for: worker.py", "Settings path: pyproject.toml"]
    settings = tomllib.loads(table)["tool"]["cslint"]
    assert settings["presets"] == [*DEFAULT_PRESETS, "tensorrt_llm"]
    assert settings["ignore"] == ["CSL103", "CSL104"]
    assert settings["per-file-ignores"] == {"tests/*": ["CSL1"]}
    assert settings["respect-gitignore"] is False and settings["force-exclude"] is False
    # every key a pyproject.toml may set is shown (``extend-*`` already merged into the keys they extend),
    # an unset ``unhandled-exceptions`` as the presets resolve it (tensorrt_llm: "hang")
    assert set(settings) == KNOWN_KEYS - {"extend-select", "extend-exclude"}
    assert settings["unhandled-exceptions"] == "hang"
    assert settings["report"] == "root-cause" and settings["min-confidence"] == "low"


def test_show_settings_shows_the_command_lines_report_choices_and_the_exception_setting(project, capsys):
    import tomllib

    _write(project / "pyproject.toml", '[tool.cslint]\npresets = ["tensorrt_llm"]\nunhandled-exceptions = "crash"\n')
    assert main(["check", "--show-settings", "--report", "per-site", "--min-confidence", "high", "worker.py"]) == 0
    settings = tomllib.loads(capsys.readouterr().out.split("\n\n", 1)[1])["tool"]["cslint"]
    assert (settings["report"], settings["min-confidence"], settings["unhandled-exceptions"]) == \
        ("per-site", "high", "crash")


def test_color_follows_no_color_and_force_color():
    from cslint.report.common import color_wanted

    class Terminal:
        def isatty(self):
            return True

    class Pipe:
        def isatty(self):
            return False

    assert color_wanted("auto", Terminal(), {}) and not color_wanted("auto", Pipe(), {})
    assert not color_wanted("auto", Terminal(), {"NO_COLOR": "1"})
    assert color_wanted("auto", Pipe(), {"FORCE_COLOR": "1"})
    assert not color_wanted("auto", Pipe(), {"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert color_wanted("always", Pipe(), {"NO_COLOR": "1"}) and not color_wanted("never", Terminal(), {"FORCE_COLOR": "1"})
    assert color_wanted("auto", Terminal(), {"NO_COLOR": ""})  # empty means unset


def test_force_color_colours_check_and_fix_diff_through_a_pipe(project):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    plain = _cslint(project, "check", "--no-cache", "worker.py", env=env)
    assert plain.returncode == 1 and "\x1b[" not in plain.stdout
    forced = _cslint(project, "check", "--no-cache", "worker.py", env={**env, "FORCE_COLOR": "1"})
    assert "\x1b[1;31mCSL102\x1b[0m" in forced.stdout
    assert "\x1b[" not in _cslint(project, "check", "--no-cache", "worker.py",
                                  env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout

    diff = _cslint(project, "fix", "--no-cache", "--unsafe-fixes", "worker.py", env={**env, "FORCE_COLOR": "1"})
    assert diff.returncode == 1, diff.stderr
    assert re.search(r"^\x1b\[31m-\s+return None\x1b\[0m$", diff.stdout, re.M)
    assert re.search(r"^\x1b\[32m\+.*\x1b\[0m$", diff.stdout, re.M) and "\x1b[36m@@" in diff.stdout
    uncoloured = _cslint(project, "fix", "--no-cache", "--unsafe-fixes", "worker.py", env=env).stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", diff.stdout) == uncoloured and "\x1b[" not in uncoloured


# -- stdin ------------------------------------------------------------------------------


def test_check_reads_stdin_with_the_name_stdin_filename_gives(project):
    _write(project / "sub" / "pyproject.toml", '[tool.cslint]\nper-file-ignores = { "legacy/*" = ["CSL102"] }\n')
    done = _cslint(project, "check", "--no-cache", "--output-format", "concise", "--stdin-filename",
                   "sub/pkg/step.py", "-", stdin=HAZARD)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith("sub/pkg/step.py:7:5: CSL102 ")
    # per-file-ignores of the configuration found from the named path, with the named path
    ignored = _cslint(project, "check", "--no-cache", "--stdin-filename", "sub/legacy/step.py", "-", stdin=HAZARD)
    assert ignored.returncode == 0 and "All checks passed (1 file checked)." in ignored.stdout
    # no file of that name exists: the text alone is checked, with its own source lines shown
    text = _cslint(project, "check", "--no-cache", "--stdin-filename", "new.py", stdin=HAZARD)
    assert text.returncode == 1 and "7 |     dist.all_reduce(tensor)" in text.stdout
    assert not (project / "new.py").exists()
    bare = _cslint(project, "check", "--no-cache", "--output-format", "json", "-", stdin=HAZARD)
    assert [f["path"] for f in json.loads(bare.stdout)["findings"]] == ["-"]
    assert _cslint(project, "check", "--stdin-filename", "x.py", "worker.py").returncode == 2


def test_stdin_text_replaces_the_file_on_disk_and_uses_the_project_as_context(project):
    _write(project / "helpers.py", "import torch.distributed as dist\n\n\ndef sync_counts(t):\n    dist.all_reduce(t)\n")
    _write(project / "step.py", "from helpers import sync_counts\n\n\ndef step(t):\n    sync_counts(t)\n")
    edited = "import torch.distributed as dist\nfrom helpers import sync_counts\n\n\ndef step(t):\n" \
             "    if dist.get_rank() == 0:\n        sync_counts(t)\n"
    alone = _cslint(project, "check", "--no-cache", "--output-format", "concise", "--stdin-filename", "step.py",
                    "-", stdin=edited)
    assert "step.py:7:" not in alone.stdout  # the wrapper is in another file
    done = _cslint(project, "check", "--no-cache", "--output-format", "concise", "--context", ".",
                   "--stdin-filename", "step.py", "-", stdin=edited)
    assert done.returncode == 1, done.stderr
    assert [line.split(" ")[0] for line in done.stdout.splitlines()[:-1]] == ["step.py:7:9:"]


def test_fix_on_stdin_prints_the_fixed_module(project):
    done = _cslint(project, "fix", "--no-cache", "--unsafe-fixes", "--stdin-filename", "worker.py", "-", stdin=HAZARD)
    assert done.returncode == 0, done.stderr
    assert "worker.py:7:5: CSL102 fixed by" in done.stderr
    assert (project / "worker.py").read_text(encoding="utf-8") == HAZARD  # nothing written
    written = _cslint(project, "fix", "--no-cache", "--unsafe-fixes", "--write", "worker.py")
    assert written.returncode == 0, written.stderr
    assert done.stdout == (project / "worker.py").read_text(encoding="utf-8") != HAZARD
    clean = _cslint(project, "fix", "--no-cache", "-", stdin="x = 1\n")
    assert clean.returncode == 0 and clean.stdout == "x = 1\n"


def test_force_exclude_applies_to_the_stdin_filename(project):
    _write(project / "pyproject.toml", '[tool.cslint]\nextend-exclude = ["generated"]\n')
    checked = _cslint(project, "check", "--no-cache", "--stdin-filename", "generated/g.py", "-", stdin=HAZARD)
    assert checked.returncode == 1
    skipped = _cslint(project, "check", "--no-cache", "--force-exclude", "--stdin-filename", "generated/g.py",
                      "-", stdin=HAZARD)
    assert skipped.returncode == 0 and "CSL102" not in skipped.stdout
    fixed = _cslint(project, "fix", "--no-cache", "--force-exclude", "--stdin-filename", "generated/g.py", "-",
                    stdin=HAZARD)
    assert fixed.returncode == 0 and fixed.stdout == HAZARD  # an excluded file passes through unchanged


# -- which files --------------------------------------------------------------------------


def test_force_exclude_applies_exclude_to_named_paths(project, capsys):
    _write(project / "pyproject.toml", '[tool.cslint]\nextend-exclude = ["generated", "vendored/*.py"]\n')
    _write(project / "generated" / "g.py", HAZARD)
    _write(project / "vendored" / "v.py", HAZARD)
    named = ["generated/g.py", "vendored/v.py", "generated", "worker.py"]
    assert main(["check", "--show-files", *named]) == 0
    assert capsys.readouterr().out.splitlines() == ["generated/g.py", "vendored/v.py", "worker.py"]
    assert main(["check", "--show-files", "--force-exclude", *named]) == 0
    assert capsys.readouterr().out.splitlines() == ["worker.py"]
    assert main(["check", "--no-cache", "--force-exclude", "--output-format", "concise", *named]) == 1
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()[:-1]] == ["worker.py"]
    _write(project / "pyproject.toml", '[tool.cslint]\nextend-exclude = ["generated"]\nforce-exclude = true\n')
    assert main(["check", "--show-files", "generated/g.py", "worker.py"]) == 0
    assert capsys.readouterr().out.splitlines() == ["worker.py"]
    assert main(["check", "--show-files", "--no-force-exclude", "generated/g.py"]) == 0
    assert capsys.readouterr().out.splitlines() == ["generated/g.py"]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=str(cwd), check=True, capture_output=True, timeout=60)


@pytest.fixture()
def git_project(project, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for key, value in dict(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
                           GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
                           GIT_COMMITTER_EMAIL="t@example.invalid").items():
        monkeypatch.setenv(key, value)
    _git(project, "init", "-q")
    _write(project / ".gitignore", "gen/\n*_pb2.py\n!keep_pb2.py\n/top_only.py\n")
    _write(project / "sub" / ".gitignore", "local.py\n")
    for name in ("gen/x.py", "gen.py", "msg_pb2.py", "keep_pb2.py", "sub/local.py", "sub/other.py",
                 "sub/top_only.py", "top_only.py", "sub/deep/gen/y.py", "tracked_pb2.py"):
        _write(project / name, HAZARD)
    _git(project, "add", "-f", "tracked_pb2.py")  # tracked files are never ignored in git
    return project


def test_gitignore_is_respected_with_gits_own_rules(git_project, capsys):
    assert main(["check", "--show-files", "."]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "gen.py", "keep_pb2.py", "stale.py", "sub/other.py", "sub/top_only.py", "tracked_pb2.py", "worker.py"]
    assert main(["check", "--no-cache", "--statistics", "."]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "6\tCSL102\tdivergent-early-exit"
    assert main(["check", "--show-files", "--no-respect-gitignore", "."]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 12
    _write(git_project / "pyproject.toml", "[tool.cslint]\nrespect-gitignore = false\n")
    assert main(["check", "--show-files", "sub"]) == 0
    assert capsys.readouterr().out.splitlines() == ["sub/deep/gen/y.py", "sub/local.py", "sub/other.py",
                                                    "sub/top_only.py"]


def test_named_files_are_checked_unless_force_exclude_also_asks_git(git_project, capsys):
    assert main(["check", "--show-files", "gen/x.py", "sub/local.py", "worker.py"]) == 0
    assert capsys.readouterr().out.splitlines() == ["gen/x.py", "sub/local.py", "worker.py"]
    assert main(["check", "--show-files", "--force-exclude", "gen/x.py", "sub/local.py", "worker.py"]) == 0
    assert capsys.readouterr().out.splitlines() == ["worker.py"]


def test_leftover_fix_temporaries_are_never_checked(project, capsys):
    _write(project / ".cslint-fix-abc123.py", HAZARD)  # the name older versions used
    _write(project / "pkg" / ".cslint-fix-worker.py.k2j3.tmp", HAZARD)
    assert main(["check", "--show-files", ".", ".cslint-fix-abc123.py"]) == 0
    assert capsys.readouterr().out.splitlines() == ["stale.py", "worker.py"]
    assert main(["check", "--no-cache", "--output-format", "concise", "."]) == 1
    assert ".cslint-fix" not in capsys.readouterr().out


def test_make_lint_passes_on_the_repository():
    """The Makefile's lint recipe, run on this checkout, finds nothing."""
    with open(os.path.join(REPO_ROOT, "Makefile"), encoding="utf-8") as handle:
        makefile = handle.read()
    recipe = re.search(r"^lint:.*\n\t(.+)$", makefile, re.M).group(1)
    words = recipe.split()
    assert words[0].endswith("/cslint") and words[1] == "check"
    done = subprocess.run([sys.executable, "-m", "cslint", "check", "--no-cache", *words[2:]], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert re.search(r"All checks passed \(\d{2,} files checked\)", done.stdout)


def test_check_loads_no_command_of_another_package_and_help_lists_them_all(tmp_path):
    """``cslint check`` does not import what only ``fix`` needs (libcst, a
    tenth of a second of every run); the help without a command still lists
    ``fix``, and ``cslint fix`` still works."""
    (tmp_path / "a.py").write_text("x = 1\n")
    probe = ("import sys\nfrom cslint.cli import main\n"
             "code = main(['check', '--no-cache', sys.argv[1]])\n"
             "print(code, 'libcst' in sys.modules, 'codemods' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "a.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split()[-3:] == ["0", "False", "False"], done.stdout + done.stderr
    listed = subprocess.run([sys.executable, "-m", "cslint", "--help"], capture_output=True, text=True, timeout=120)
    assert re.search(r"^\s+fix\s", listed.stdout, re.M), listed.stdout
    fixed = subprocess.run([sys.executable, "-m", "cslint", "fix", "--no-cache", str(tmp_path / "a.py")],
                           capture_output=True, text=True, timeout=120)
    assert fixed.returncode == 0, fixed.stderr
