"""bench/realtree.py: joining findings with labels, weighting, sampling.

The real trees are downloaded by the script; here a tiny synthetic tree with
three hazards stands in for them (cslint runs on it for real), and the
labels file is written by the test. No network.
"""

from __future__ import annotations

import io
import json
import tarfile
import textwrap
import zipfile
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from bench_scripts import load_bench

REPO_ROOT = Path(__file__).resolve().parent.parent

SYNTHETIC = textwrap.dedent("""\
    import os

    import torch.distributed as dist


    def sync_on_leader(tensor):
        if dist.get_rank() == 0:
            dist.all_reduce(tensor)


    def drain(tensor):
        if os.environ.get("LOCAL_RANK") == "0":
            return
        dist.barrier()


    def gather_each(tensor):
        for _ in range(dist.get_rank()):
            dist.broadcast(tensor, 0)
    """)
HEADER = "tree@version\tpath\tline\tcode\tverdict\tcategory\treason\n"


@pytest.fixture(scope="module")
def bench():
    return load_bench("realtree")


@pytest.fixture()
def synthetic(tmp_path, bench, monkeypatch):
    """A local-only tree `syn@1` with three findings (CSL101 :8, CSL102 :14, CSL103 :19)."""
    root = tmp_path / "syn-tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "steps.py").write_text(SYNTHETIC)
    tree = bench.Tree("syn", "1", env="CSLINT_REALTREE_TEST_SYN")
    absent = bench.Tree("gone", "2", env="CSLINT_REALTREE_TEST_GONE")
    monkeypatch.setattr(bench, "TREES", (tree, absent))
    monkeypatch.setenv("CSLINT_REALTREE_TEST_SYN", str(root))
    monkeypatch.delenv("CSLINT_REALTREE_TEST_GONE", raising=False)
    return root


def run_main(bench, *argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = bench.main(list(argv))
    return code, out.getvalue()


def test_findings_are_joined_with_labels_by_relative_path_line_and_code(bench, synthetic, tmp_path):
    labels = tmp_path / "labels.tsv"
    labels.write_text(
        "# a note line\n" + HEADER
        + "syn@1\tpkg/steps.py\t8\tCSL101\tTP\trank0-only-collective\tonly rank 0 enters the all_reduce\n"
        + "syn@1\tpkg/steps.py\t14\tCSL102\tUNCLEAR\t\tdepends on the launcher\n"
        # same place, other rule: must not cover the CSL103 finding at line 19
        + "syn@1\tpkg/steps.py\t19\tCSL101\tFP\tsome-cause\twrong rule on purpose\n"
        # another tree version: must not count
        + "syn@0\tpkg/steps.py\t19\tCSL103\tFP\tsome-cause\tother version\n")
    json_dir = tmp_path / "reports"
    code, out = run_main(bench, "--labels", str(labels), "--unlabelled", "--save-json", str(json_dir))
    assert code == 0, out
    assert "== gone@2: skipped: no local copy (set CSLINT_REALTREE_TEST_GONE" in out
    block = out.split("== syn@1:")[1].split("\n== ")[0]
    assert "3 findings" in block
    rows = {line.split()[0]: line.split() for line in block.splitlines()[3:]}
    # code findings labelled TP FP UNCLEAR unlabelled precision
    assert rows["CSL101"][1:] == ["1", "1", "1", "0", "0", "0", "1.00"]
    assert rows["CSL102"][1:] == ["1", "1", "0", "0", "1", "0", "-"]
    assert rows["CSL103"][1:] == ["1", "0", "0", "0", "0", "1", "-"]
    listing = out.split("== findings not yet labelled (1)")[1]
    assert "syn@1\tpkg/steps.py:19\tCSL103" in listing
    # the wrong-rule label and the syn@1 :19 CSL101 row have no finding
    assert "labels with no current finding: 1" in out
    assert "no finding: syn@1 pkg/steps.py:19 CSL101 (FP)" in out
    saved = json.loads((json_dir / "syn@1.json").read_text())
    assert len(saved["report"]["findings"]) == 3
    # a saved report gives the same table without linting again
    code, again = run_main(bench, "--labels", str(labels), "--load-json", str(json_dir))
    assert again.split("== syn@1:")[1].split("\n", 1)[1].split("\n== ")[0] == block.split("\n", 1)[1]


def test_precision_is_weighted_by_finding_counts_and_unclear_is_excluded(bench):
    Cell = bench.Cell
    big = Cell(findings=100, tp=2, fp=0)           # sample says 1.0, stands for 100 findings
    small = Cell(findings=10, tp=0, fp=2, unclear=1)  # sample says 0.0, stands for 10
    only_unclear = Cell(findings=50, unclear=2)     # no TP/FP: no weight at all
    weighted, covered = bench.weighted_precision([big, small, only_unclear])
    assert covered == 110
    assert weighted == pytest.approx(100 / 110)
    total = Cell()
    for cell in (big, small, only_unclear):
        total.add(cell)
    assert total.precision == pytest.approx(0.5)   # the raw figure differs from the weighted one
    assert total.unclear == 3 and total.labelled == 7 and total.unlabelled == 153
    assert bench.weighted_precision([only_unclear]) == (None, 0)


def test_a_label_covers_every_finding_with_its_key(bench):
    F = bench.Finding
    findings = [F("t@1", "a.py", 3, "CSL101"), F("t@1", "a.py", 3, "CSL101"), F("t@1", "a.py", 9, "CSL101")]
    labels = {("t@1", "a.py", 3, "CSL101"): bench.Label("t@1", "a.py", 3, "CSL101", "FP", "c", "r"),
              ("t@1", "a.py", 9, "CSL101"): bench.Label("t@1", "a.py", 9, "CSL101", "", "", "")}
    cell = bench.score(findings, labels)[("t@1", "CSL101")]
    assert (cell.findings, cell.fp, cell.tp, cell.pending, cell.unlabelled) == (3, 2, 0, 1, 1)


def test_a_finding_by_root_cause_takes_the_labels_of_the_sites_it_lists(bench):
    F, L = bench.Finding, bench.Label
    labels = {("t@1", "a.py", 5, "CSL102"): L("t@1", "a.py", 5, "CSL102", "FP", "c", "r"),
              ("t@1", "a.py", 8, "CSL102"): L("t@1", "a.py", 8, "CSL102", "TP", "s", "r"),
              ("t@1", "a.py", 20, "CSL102"): L("t@1", "a.py", 20, "CSL102", "FP", "c", "r")}
    labels[("t@1", "a.py", 4, "CSL102")] = L("t@1", "a.py", 4, "CSL102", "FP", "c", "r")
    guard = F("t@1", "a.py", 4, "CSL102", "", (5, 8))    # its own site an FP, one listed site a TP
    other = F("t@1", "a.py", 19, "CSL102", "", (20,))
    alone = F("t@1", "a.py", 30, "CSL102")
    assert bench.label_of(guard, labels).verdict == "TP"  # a guard is a hazard when any site it decides is
    assert bench.label_of(other, labels).line == 20 and bench.label_of(alone, labels) is None
    cell = bench.score([guard, other, alone], labels)[("t@1", "CSL102")]
    assert (cell.tp, cell.fp, cell.unlabelled) == (1, 1, 1)
    assert bench.stale_labels([guard, other], labels, ["t@1"]) == []
    report = {"findings": [{"path": "a.py", "line": 4, "code": "CSL102", "message": "m",
                            "sites": [{"line": 4}, {"line": 8}, {"line": 5}]}]}
    (found,) = bench.findings_of("t@1", Path("/nowhere"), report)
    assert found.other_lines == (5, 8)


def test_bad_labels_files_are_refused_with_the_line(bench, tmp_path):
    cases = {
        "syn@1\tpkg/a.py\t8\tCSL101\tMAYBE\tx\ty\n": "verdict `MAYBE`",
        "syn@1\tpkg/a.py\t8\tCSL101\tFP\tx\n": "6 columns",
        "syn@1\tpkg/a.py\teight\tCSL101\tFP\tx\ty\n": "is not a number",
        "syn@1\tpkg/a.py\t8\tCSL101\tFP\tx\t\n": "needs a reason",
        "syn@1\tpkg/a.py\t8\tCSL101\tFP\tx\ty\nsyn@1\tpkg/a.py\t8\tCSL101\tTP\tx\ty\n": "a second label",
        "syn@1\tpkg/a.py\t8\tCSL101\tTP\tx\trelabel: y\n": "which no earlier row",
        "syn@1\tpkg/a.py\t8\tCSL101\tFP\tx\ty\nsyn@1\tpkg/a.py\t8\tCSL101\tTP\tx\trelabel:  \n": "must say what",
    }
    for body, expected in cases.items():
        path = tmp_path / "labels.tsv"
        path.write_text(HEADER + body)
        with pytest.raises(bench.BenchError, match=expected) as raised:
            bench.read_labels(path)
        assert f"{path}:" in str(raised.value)
    path.write_text("tree\tpath\tline\n")
    with pytest.raises(bench.BenchError, match="header"):
        bench.read_labels(path)


def test_a_relabel_row_corrects_an_earlier_reading_and_keeps_it(bench, tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_text(HEADER + "syn@1\tpkg/a.py\t8\tCSL101\tFP\told\tfirst reading\n"
                    "syn@1\tpkg/a.py\t9\tCSL101\tFP\tother\tuntouched\n"
                    "syn@1\tpkg/a.py\t8\tCSL101\tTP\tnew\trelabel: the first reading missed the handler\n")
    labels = bench.read_labels(path)
    corrected = labels[("syn@1", "pkg/a.py", 8, "CSL101")]
    assert (corrected.verdict, corrected.category) == ("TP", "new")
    assert corrected.replaces is not None and corrected.replaces.verdict == "FP"
    assert corrected.replaces.reason == "first reading"
    assert labels[("syn@1", "pkg/a.py", 9, "CSL101")].replaces is None


def _population(bench):
    F = bench.Finding
    findings = []
    for i in range(60):
        findings.append(F("big@1", f"m{i % 7}.py", i + 1, "CSL101"))
    for i in range(30):
        findings.append(F("big@1", f"m{i % 5}.py", i + 1, "CSL102"))
    findings.append(F("small@1", "x.py", 5, "CSL104"))
    findings.append(F("small@1", "x.py", 5, "CSL104"))  # duplicate key: drawn once at most
    for i in range(9):
        findings.append(F("small@1", "y.py", i + 1, "CSL103"))
    return findings


def test_stratified_sample_is_proportional_with_a_minimum_and_deterministic(bench):
    findings = _population(bench)
    sizes = {("big@1", "CSL101"): 60, ("big@1", "CSL102"): 30, ("small@1", "CSL103"): 9, ("small@1", "CSL104"): 1}
    assert bench.allocate(sizes, 20, 2) == {("big@1", "CSL101"): 12, ("big@1", "CSL102"): 6,
                                            ("small@1", "CSL103"): 2, ("small@1", "CSL104"): 1}
    assert sum(bench.allocate(sizes, 50, 0).values()) == 50
    first = bench.stratified_sample(findings, {}, 20, seed=14, minimum=2)
    assert bench.stratified_sample(list(reversed(findings)), {}, 20, seed=14, minimum=2) == first
    assert bench.stratified_sample(findings, {}, 20, seed=15, minimum=2) != first
    keys = [f.key for f in first]
    assert len(keys) == len(set(keys)) == 21
    assert Counter_of(first) == {("big@1", "CSL101"): 12, ("big@1", "CSL102"): 6,
                                 ("small@1", "CSL103"): 2, ("small@1", "CSL104"): 1}
    # labelled findings are never drawn again
    labels = {key: bench.Label(*key, "FP", "c", "r") for key in keys}
    second = bench.stratified_sample(findings, labels, 20, seed=14, minimum=2)
    assert not {f.key for f in second} & set(keys)


def Counter_of(sample):
    from collections import Counter

    return dict(Counter((f.tree, f.code) for f in sample))


def test_sample_mode_appends_untriaged_rows_with_the_seed(bench, synthetic, tmp_path):
    labels = tmp_path / "new" / "labels.tsv"
    labels.parent.mkdir()
    code, out = run_main(bench, "--labels", str(labels), "--sample", "2", "--seed", "7",
                         "--min-per-stratum", "1")
    assert code == 0, out
    text = labels.read_text()
    assert "--sample 2 --seed 7 --min-per-stratum 1 over syn@1" in text
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    assert rows[0] == list(bench.COLUMNS)
    # three strata of one finding each and a minimum of one: all three are drawn
    assert sorted((r[2], r[3], r[4]) for r in rows[1:]) == [("14", "CSL102", ""), ("19", "CSL103", ""),
                                                            ("8", "CSL101", "")]
    # drawn rows await triage; a second draw finds nothing left
    code, out = run_main(bench, "--labels", str(labels), "--sample", "2", "--seed", "7")
    assert "sampled rows awaiting triage: 3" in out
    assert "sample of 0" in out
    code, out = run_main(bench, "--labels", str(labels), "--sample", "2")
    assert code == 2


def test_sources_are_unpacked_from_wheels_and_sdists(bench, tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zipped:
        zipped.writestr("pkg/__init__.py", "x = 1\n")
        zipped.writestr("pkg/lib.so", b"\0ELF")
        zipped.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\n")
        zipped.writestr("../escape.py", "y = 1\n")
    out = tmp_path / "wheel"
    assert bench.unpack_sources(wheel, out) == 1
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["pkg/__init__.py"]
    assert not (tmp_path / "escape.py").exists()

    sdist = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tarred:
        for name, body in (("pkg-1.0/setup.py", b"s = 1\n"), ("pkg-1.0/pkg/dist/a.py", b"a = 1\n"),
                           ("pkg-1.0/pkg/other/b.py", b"b = 1\n"), ("pkg-1.0/README", b"r\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tarred.addfile(info, io.BytesIO(body))
    out = tmp_path / "sdist"
    assert bench.unpack_sources(sdist, out, parts=("pkg/dist",)) == 1
    assert (out / "pkg" / "dist" / "a.py").read_text() == "a = 1\n"
    assert not (out / "setup.py").exists()


def test_tree_dir_and_unknown_trees(bench, synthetic, tmp_path):
    code, out = run_main(bench, "--labels", str(tmp_path / "none.tsv"), "--trees", "nope")
    assert code == 2
    code, out = run_main(bench, "--labels", str(tmp_path / "none.tsv"), "--trees", "gone",
                         "--tree-dir", f"gone={synthetic}")
    assert code == 0
    assert "== gone@2: 1 files, 3 findings" in out


def test_label_files_are_merged_and_a_key_labelled_twice_is_refused(bench, tmp_path):
    first = tmp_path / "labels.tsv"
    second = tmp_path / "other_labels.tsv"
    first.write_text(HEADER + "t@1\ta.py\t3\tCSL101\tFP\tc\tr\n")
    second.write_text(HEADER + "u@2\tb.py\t4\tCSL102\tTP\tc\tr\n")
    merged = bench.read_all_labels([first, second])
    assert sorted(merged) == [("t@1", "a.py", 3, "CSL101"), ("u@2", "b.py", 4, "CSL102")]
    second.write_text(HEADER + "t@1\ta.py\t3\tCSL101\tTP\tc\tr\n")
    with pytest.raises(bench.BenchError, match="labelled in .*labels.tsv too"):
        bench.read_all_labels([first, second])
