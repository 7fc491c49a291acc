"""The pylint plugin reports what `cslint check` reports, as pylint messages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from cslint.model import CheckResult, Finding
from cslint.pylint_plugin import CODE_BY_MSGID, RULES, SYMBOL_BY_CODE, message_id

FIXTURES = {
    "early_exit.py": """\
        import torch.distributed as dist


        class Worker:
            def __init__(self):
                self.pending = []
                if dist.get_rank() == 0:
                    self.pending.append(1)

            def drain(self, tensor):
                if not self.pending:
                    return None
                dist.all_reduce(tensor)
                return tensor
        """,
    "branch.py": """\
        import torch.distributed as dist


        def report(tensor):
            if dist.get_rank() == 0:
                dist.barrier()
            return tensor
        """,
    "loop.py": """\
        import torch.distributed as dist


        def per_rank_loop(tensor):
            for _ in range(dist.get_rank()):
                dist.all_reduce(tensor)
        """,
    "wrapper.py": """\
        import torch.distributed as dist


        def sync(tensor):
            dist.all_reduce(tensor)


        def caller(tensor):
            if dist.get_rank() > 1:
                sync(tensor)
        """,
    "consensus.py": """\
        import torch
        import torch.distributed as dist


        def agreed(queue):
            flag = torch.tensor([len(queue)])
            dist.all_reduce(flag)
            if flag.item() > 0:
                dist.barrier()
        """,
    "suppressed.py": """\
        import torch.distributed as dist


        def quiet(tensor):
            if dist.get_rank() == 0:
                dist.barrier()  # cslint: ignore[CSL101]
            dist.all_reduce(tensor)  # cslint: ignore[CSL101]
        """,
}


def _write_fixtures(directory) -> list[str]:
    paths = []
    for name, text in FIXTURES.items():
        path = directory / name
        path.write_text(textwrap.dedent(text))
        paths.append(str(path))
    try:  # the rules' own INVALID examples are fixtures too
        from cslint.rules import all_rules

        for rule in all_rules():
            if rule.CODE == "CSL001":
                continue  # unparsable on purpose: pylint reports its own syntax-error and builds no module
            for index, example in enumerate(getattr(rule, "INVALID", ()) or ()):
                text = example if isinstance(example, str) else getattr(example, "code", str(example))
                path = directory / f"{rule.CODE.lower()}_invalid_{index}.py"
                path.write_text(textwrap.dedent(text))
                paths.append(str(path))
    except ImportError:
        pass
    return paths


def _key(path: str, directory) -> str:
    """A finding's file relative to the checked directory (pylint prints cwd-relative paths)."""
    return os.path.relpath(os.path.join(str(directory), path), str(directory)).replace(os.sep, "/")


def _cslint_findings(directory) -> set[tuple[str, str, int]]:
    done = subprocess.run(
        [sys.executable, "-m", "cslint", "check", "--no-cache", "--format", "json", str(directory)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    return {(_key(f["path"], directory), f["code"], f["line"]) for f in document["findings"]}


def _pylint_findings(directory, *extra: str) -> tuple[set[tuple[str, str, int]], list[dict]]:
    done = subprocess.run(
        [
            sys.executable, "-m", "pylint", "--load-plugins", "cslint.pylint_plugin",
            "--disable=all", "--enable=cslint", "--output-format=json", "--score=n",
            *extra, str(directory),
        ],
        capture_output=True, text=True, timeout=180, cwd=str(directory),
    )
    assert done.returncode != 32 and "Traceback" not in done.stderr, done.stderr
    messages = json.loads(done.stdout or "[]")
    found = {(_key(m["path"], directory), CODE_BY_MSGID[m["message-id"]], m["line"]) for m in messages}
    return found, messages


def test_message_ids_follow_the_codes():
    assert message_id("CSL101") == "W9101"
    assert message_id("CSL104") == "W9104"
    assert message_id("CSL001") == "W9151"
    assert SYMBOL_BY_CODE["CSL101"].startswith("csl-")
    assert len(set(SYMBOL_BY_CODE.values())) == len(RULES)  # one message per rule
    with pytest.raises(ValueError):
        message_id("CSL900")


def test_plugin_agrees_with_cslint_check(tmp_path):
    _write_fixtures(tmp_path)
    expected = _cslint_findings(tmp_path)
    assert expected, "the fixtures must produce findings, or this comparison proves nothing"
    found, messages = _pylint_findings(tmp_path)
    assert found == expected
    assert all(m["symbol"] == SYMBOL_BY_CODE[CODE_BY_MSGID[m["message-id"]]] for m in messages)
    assert all(m["message"].endswith(f"({CODE_BY_MSGID[m['message-id']]})") for m in messages)


def test_plugin_agrees_on_the_seed_fixtures(tmp_path):
    """The TensorRT-LLM-shaped seed tree: its own [tool.cslint] config, preset and cross-file wrappers."""
    seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "seeds")
    if not os.path.isdir(seeds):
        pytest.skip("tests/fixtures/seeds is not in this checkout")
    tree = tmp_path / "seeds"
    shutil.copytree(seeds, tree)
    expected = _cslint_findings(tree)
    assert any(path.startswith("buggy/") for path, _, _ in expected)
    found, _ = _pylint_findings(tree)
    assert found == expected


def test_pylint_disable_pragma_applies(tmp_path):
    _write_fixtures(tmp_path)
    found, _ = _pylint_findings(tmp_path)
    branch = sorted((f for f in found if f[0] == "branch.py"), key=lambda f: f[2])
    assert branch, "branch.py must have a finding for this test"
    _, code, line = branch[0]
    path = tmp_path / "branch.py"
    lines = path.read_text().splitlines()
    lines[line - 1] += f"  # pylint: disable={SYMBOL_BY_CODE[code]}"
    path.write_text("\n".join(lines) + "\n")
    after, _ = _pylint_findings(tmp_path)
    assert (("branch.py", code, line) not in after) and after == found - {("branch.py", code, line)}


def test_plugin_emits_findings_in_process(tmp_path, monkeypatch):
    """The emission path itself, independent of the analysis: fake findings come out as messages."""
    from pylint.lint import Run
    from pylint.reporters import CollectingReporter

    import cslint.api

    module = tmp_path / "mod.py"
    module.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    fake = CheckResult(
        files=1,
        findings=[
            Finding("CSL102", str(module), 5, 5, 6, 13, "early exit skips barrier", "barrier", "world"),
            Finding("CSL101", str(module), 2, 5, 2, 13, "branch skips all_reduce", "all_reduce", "world"),
        ],
    )
    calls = []

    def fake_check_paths(paths, **kwargs):
        calls.append(list(paths))
        return fake

    monkeypatch.setattr(cslint.api, "check_paths", fake_check_paths)
    reporter = CollectingReporter()
    Run(
        ["--load-plugins=cslint.pylint_plugin", "--disable=all", "--enable=cslint", f"--cslint-context={tmp_path}", str(module)],
        reporter=reporter,
        exit=False,
    )
    got = sorted((m.msg_id, m.line, m.column, m.msg) for m in reporter.messages)
    assert got == [
        ("W9101", 2, 4, "branch skips all_reduce (CSL101)"),
        ("W9102", 5, 4, "early exit skips barrier (CSL102)"),
    ]
    assert calls == [[str(tmp_path)]]


def test_plugin_is_not_fooled_by_earlier_checks(tmp_path):
    """Earlier `cslint check` runs (one file, the project from its own
    directory) fill the cache with other spellings of the same files; pylint
    run from elsewhere must still get every finding (it rated such a file
    10/10)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.cslint]\n")  # one cache, at the project root
    for name in ("branch.py", "early_exit.py", "wrapper.py"):
        (project / name).write_text(textwrap.dedent(FIXTURES[name]))
    expected = {(os.path.basename(path), code, line) for path, code, line in _cslint_findings(project)}
    assert {path for path, _, _ in expected} == {"branch.py", "early_exit.py", "wrapper.py"}
    for args in (["branch.py"], ["."]):
        done = subprocess.run([sys.executable, "-m", "cslint", "check", *args], cwd=str(project),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pylint", "--load-plugins", "cslint.pylint_plugin", "--disable=all",
         "--enable=cslint", "--output-format=json", "--score=n", "proj"],
        capture_output=True, text=True, timeout=180, cwd=str(tmp_path),
    )
    assert done.returncode != 32 and "Traceback" not in done.stderr, done.stderr
    found = {(os.path.basename(m["path"]), CODE_BY_MSGID[m["message-id"]], m["line"]) for m in json.loads(done.stdout)}
    assert found == expected
