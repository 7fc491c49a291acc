"""The CLI integration flags (--output-file, --baseline, --write-baseline) and the docs' snippets, end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import jsonschema
import pytest
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(REPO_ROOT, "docs", "integrations.md")
SCHEMA = os.path.join(REPO_ROOT, "tests", "data", "sarif-schema-2.1.0.json")

WORKER = textwrap.dedent(
    """\
    import torch.distributed as dist


    def drain(tensor):
        if dist.get_rank() == 0:
            return None
        dist.all_reduce(tensor)
        return tensor
    """
)


def _cslint(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cslint", *args], cwd=str(cwd), capture_output=True, text=True, timeout=120
    )


def _json_findings(cwd, *args: str) -> list[dict]:
    done = _cslint(cwd, "check", "--no-cache", "--format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["findings"]


@pytest.fixture()
def project(tmp_path):
    (tmp_path / "worker.py").write_text(WORKER)
    findings = _json_findings(tmp_path, "worker.py")
    assert findings, "the fixture must produce a finding for these tests to mean anything"
    return tmp_path


def test_output_file(project):
    out = project / "reports" / "cslint.json"
    done = _cslint(project, "check", "--no-cache", "--format", "json", "--output-file", str(out), "worker.py")
    assert done.returncode == 1
    assert done.stdout == ""
    document = json.loads(out.read_text())
    assert document["findings"] and document["findings"][0]["path"].endswith("worker.py")


def test_baseline_survives_lines_inserted_above(project):
    assert _cslint(project, "check", "--no-cache", "--write-baseline", "cslint-baseline.json", "worker.py").returncode == 0
    baseline = json.loads((project / "cslint-baseline.json").read_text())
    assert len(baseline["findings"]) == len(_json_findings(project, "worker.py"))

    assert _cslint(project, "check", "--no-cache", "--baseline", "cslint-baseline.json", "worker.py").returncode == 0

    # insert lines above the finding: line numbers shift, the baseline still covers it
    shifted = WORKER.replace("import torch.distributed as dist\n", "import torch.distributed as dist\nimport os\nimport sys\n\nLIMIT = 3\n", 1)
    (project / "worker.py").write_text(shifted)
    moved = _json_findings(project, "worker.py")
    assert moved and moved[0]["line"] > baseline["findings"][0]["line"]
    done = _cslint(project, "check", "--no-cache", "--baseline", "cslint-baseline.json", "--format", "json", "worker.py")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["findings"] == []

    # change the condition: a new finding, reported and failing
    (project / "worker.py").write_text(shifted.replace("if dist.get_rank() == 0:", "if dist.get_rank() > 1:"))
    done = _cslint(project, "check", "--no-cache", "--baseline", "cslint-baseline.json", "--format", "json", "worker.py")
    assert done.returncode == 1
    new = json.loads(done.stdout)["findings"]
    assert len(new) == 1 and new[0]["path"].endswith("worker.py")


def test_bad_baseline_is_a_usage_error(project):
    (project / "bad.json").write_text("{nope")
    done = _cslint(project, "check", "--no-cache", "--baseline", "bad.json", "worker.py")
    assert done.returncode == 2
    assert "bad.json" in done.stderr and "Traceback" not in done.stderr


def test_sarif_from_the_cli_is_schema_valid(project):
    with open(SCHEMA, encoding="utf-8") as handle:
        validator = jsonschema.Draft4Validator(json.load(handle))
    done = _cslint(project, "check", "--no-cache", "--format", "sarif", "worker.py")
    assert done.returncode == 1
    log = json.loads(done.stdout)
    assert not list(validator.iter_errors(log))
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"].startswith("CSL1")]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "worker.py"
    assert result["relatedLocations"]


def _doc_blocks(language: str) -> list[str]:
    with open(DOCS, encoding="utf-8") as handle:
        text = handle.read()
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_docs_github_workflow_commands_run(project):
    """The workflow in docs/integrations.md parses, and its cslint steps do what it says."""
    (workflow,) = [yaml.safe_load(block) for block in _doc_blocks("yaml") if "jobs:" in block]
    steps = workflow["jobs"]["cslint"]["steps"]
    assert any(str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif") for s in steps)
    commands = [s["run"] for s in steps if str(s.get("run", "")).startswith("cslint ")]
    assert len(commands) == 2
    annotate, sarif = (c.split()[1:] for c in commands)

    done = _cslint(project, *annotate)
    assert done.returncode == 1  # fails the job on findings
    assert re.search(r"^::error file=worker\.py,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=CSL\d+::", done.stdout, re.M)

    done = _cslint(project, *sarif)
    assert done.returncode == 0  # --exit-zero, so upload-sarif still runs
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif"))
    log = json.loads((project / upload["with"]["sarif_file"]).read_text())
    assert log["version"] == "2.1.0" and log["runs"][0]["results"]


def test_docs_baseline_commands_run(project):
    (block,) = [b for b in _doc_blocks("sh") if "--write-baseline" in b]
    commands = [line.split("#")[0].split() for line in block.splitlines() if line.startswith("cslint ")]
    assert [c[1:3] for c in commands] == [["check", "--write-baseline"], ["check", "--baseline"]]
    assert _cslint(project, *commands[0][1:]).returncode == 0
    assert _cslint(project, *commands[1][1:]).returncode == 0
    (project / "worker2.py").write_text(WORKER)
    assert _cslint(project, *commands[1][1:]).returncode == 1  # a new file's finding is new


def test_docs_local_pre_commit_snippet_matches_the_published_hook():
    local = [yaml.safe_load(b) for b in _doc_blocks("yaml") if "repo: local" in b]
    assert local
    (hook,) = local[0]["repos"][0]["hooks"]
    with open(os.path.join(REPO_ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
        published = {h["id"]: h for h in yaml.safe_load(handle)}
    system = published["cslint-system"]
    for key in ("entry", "language", "types", "require_serial"):
        assert hook[key] == system[key], key


def test_docs_cache_step_names_the_directory_cslint_writes(project):
    (steps,) = [yaml.safe_load(b) for b in _doc_blocks("yaml") if "actions/cache" in b]
    from cslint.engine.cache import CACHE_DIR

    assert steps[0]["with"]["path"] == CACHE_DIR
    assert _cslint(project, "check", "worker.py").returncode == 1
    assert (project / CACHE_DIR / "runs").is_dir()
    assert _cslint(project, "check", "worker.py").returncode == 1  # answered from the cache, same verdict


def test_the_process_flushes_everything_before_it_exits(project):
    """The command ends with ``os._exit`` (no interpreter teardown): every
    byte of a long report still arrives through a block-buffered pipe, with
    the right exit status, and a reader that stops early gets no traceback."""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

    def run(cwd, *args):
        return subprocess.run([sys.executable, "-m", "cslint", *args], cwd=str(cwd), capture_output=True,
                              text=True, timeout=120, env=buffered)

    small = run(project, "check", "--no-cache", "--format", "json", "worker.py")  # smaller than a pipe buffer
    assert small.returncode == 1, small.stderr
    assert len(json.loads(small.stdout)["findings"]) == 1
    assert run(project, "check", "--no-cache", "worker.py").stdout.rstrip().endswith("1 root cause).")
    for index in range(40):
        (project / f"worker_{index}.py").write_text(WORKER)
    done = run(project, "check", "--no-cache", "--format", "json", ".")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert len(document["findings"]) == 41
    clean = project / "clean"
    clean.mkdir()
    (clean / "ok.py").write_text("x = 1\n")
    assert run(clean, "check", "--no-cache", "ok.py").returncode == 0

    process = subprocess.Popen([sys.executable, "-m", "cslint", "check", "--no-cache", "."], cwd=str(project),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=buffered)
    process.stdout.read(10)
    process.stdout.close()  # like `cslint check . | head -c 10`
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    assert "Traceback" not in stderr


def test_docs_every_sh_command_runs(project):
    """Every `cslint ...` line of the page's shell blocks, in order, as a shell runs it."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    ran = 0
    for block in _doc_blocks("sh"):
        for line in block.splitlines():
            if not line.startswith("cslint "):
                continue
            done = subprocess.run(["bash", "-c", line], cwd=str(project), capture_output=True, text=True,
                                  timeout=120, env=env)
            assert done.returncode in (0, 1), f"{line}\n{done.stderr}"
            assert "error:" not in done.stderr and "Traceback" not in done.stderr, f"{line}\n{done.stderr}"
            if "--stdin-filename worker.py - < worker.py" in line and line.startswith("cslint check"):
                assert done.stdout.startswith("worker.py:7:5: CSL102 "), done.stdout
            if line.startswith("cslint check --show-files ."):
                assert done.stdout.splitlines() == ["worker.py"]
            ran += 1
    assert ran >= 7
    fixed = (project / "fixed.py").read_text(encoding="utf-8")
    assert fixed != WORKER and "dist.all_reduce(" in fixed  # `cslint fix -` printed the fixed module
    assert (project / "worker.py").read_text(encoding="utf-8") == WORKER
