"""`--format github`: workflow-command annotations with correct escaping."""

from __future__ import annotations

from report_samples import early_exit_finding, sample_result, write_sample

from cslint.model import CheckResult
from cslint.report import render
from cslint.report.github import command, escape_data, escape_property


def _unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _parse(line: str) -> tuple[str, dict, str]:
    assert line.startswith("::")
    head, message = line[2:].split("::", 1)
    level, _, props = head.partition(" ")
    properties = {}
    for item in props.split(","):
        key, value = item.split("=", 1)
        properties[key] = _unescape(value)
    return level, properties, _unescape(message)


def test_escaping_rules():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    # ':' and ',' are legal inside the message
    assert escape_data("a:b,c") == "a:b,c"
    # '%' first, so an existing escape sequence is not decoded by the runner
    assert escape_data("%0A") == "%250A"


def test_annotation_line_shape(tmp_path):
    path = write_sample(str(tmp_path))
    text = render(CheckResult(files=1, findings=[early_exit_finding(path)]), "github", root=str(tmp_path))
    lines = text.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("::error file=executor.py,line=9,col=17,endLine=9,endColumn=66,title=CSL102::")
    level, props, message = _parse(lines[0])
    assert level == "error"
    assert props == {"file": "executor.py", "line": "9", "col": "17", "endLine": "9", "endColumn": "66", "title": "CSL102"}
    assert message.splitlines()[0].startswith("`tp_allgather` is skipped")
    assert "  2. executor.py:7: early return on `not self.active_requests`" in message.splitlines()


def test_every_finding_and_error_is_annotated(tmp_path):
    path = write_sample(str(tmp_path))
    lines = render(sample_result(path), "github", root=str(tmp_path)).splitlines()
    parsed = [_parse(line) for line in lines]
    assert [(lvl, p.get("title")) for lvl, p, _ in parsed] == [
        ("error", "CSL102"),
        ("error", "CSL101"),
        ("warning", "CSL002"),
        ("error", "cslint"),
    ]
    assert parsed[-1][1]["file"] == "broken.py"


def test_hostile_path_and_message_round_trip(tmp_path):
    odd_dir = tmp_path / "we,ird:dir"
    odd_dir.mkdir()
    path = write_sample(str(odd_dir), "ex%41mple.py")
    finding = early_exit_finding(path)
    finding.message = "line one\r\nline two: 50%, done"
    finding.chain = []
    finding.fix = None
    line = render(CheckResult(files=1, findings=[finding]), "github", root=str(tmp_path)).rstrip("\n")
    assert "\n" not in line and "\r" not in line
    _, props, message = _parse(line)
    assert props["file"] == "we,ird:dir/ex%41mple.py"
    assert message == "line one\r\nline two: 50%, done"


def test_command_leaves_out_missing_properties():
    assert command("error", "boom", file="a.py", line=None, title="cslint") == "::error file=a.py,title=cslint::boom"


def test_clean_run_prints_nothing():
    assert render(CheckResult(files=2), "github") == ""
