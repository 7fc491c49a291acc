"""tensorrt_llm_patch verify: compile + re-lint, and an exit status that reflects both."""

from __future__ import annotations

import pytest
from test_patch_helpers import EXECUTOR, copy_fixture, load_report

from tensorrt_llm_patch.__main__ import (
    EXIT_COMPILE,
    EXIT_COMPILE_AND_RELINT,
    EXIT_NOTHING_TO_VERIFY,
    EXIT_OK,
    EXIT_RELINT,
    main,
)
from tensorrt_llm_patch.apply import apply_tree
from tensorrt_llm_patch.verify import verify_tree

NEW_HAZARD = '''

def _fresh_hazard(executor):
    if not executor.active_requests:
        return None
    return executor.dist.tp_allgather(len(executor.active_requests))
'''


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("verify")
    original = copy_fixture(base / "original")
    mirror = base / "mirror"
    apply_tree(original, out=mirror)
    full = base / "full"
    apply_tree(original, out=full, full_copy=True)
    return {"base": base, "original": original, "mirror": mirror, "full": full}


SEED_SITE = {"path": EXECUTOR, "function": "PyExecutor._sync_gen_only_benchmark_has_insufficient_kv",
             "callee": "self._allgather_model_parallel_status"}


def _outcome(report):
    """What a verify run concluded, independent of the mode that produced it."""
    return (report.compiles, sorted(map(str, report.fixed)), sorted((d["path"], d["function"], d["callee"])
            for d in report.still_reported), sorted((d["path"], d["function"], d["callee"])
            for d in report.new_hazards))


def test_full_copy_verifies_from_its_own_record(trees):
    report = verify_tree(trees["full"])
    assert report.mode == "record"
    assert report.compiles and not report.relint_error
    assert set(report.patched_files) == {c["path"] for c in load_report(trees["full"])["changed_files"]}
    # The seeded fill-gate hazard, fixed by always-enter, is gone after the patch.
    assert SEED_SITE in report.fixed
    # Whatever is still reported was recorded as fixed: verify compares like with like.
    record = load_report(trees["full"])
    fixed_keys = {tuple(h["key"]) for h in record["hazards"] if h["outcome"] == "fixed"}
    for item in report.still_reported:
        assert (item["path"], item["function"], item["callee"]) in fixed_keys
    expected = EXIT_OK if report.ok else EXIT_RELINT
    assert main(["verify", "--tree", str(trees["full"])]) == expected


def test_patched_fixture_verifies_clean(trees):
    # a consensus covers every group the guarded call reaches (`tp_cp_allgather` through
    # `_allgather_model_parallel_status` included), so re-lint reports none of the fixed sites
    report = verify_tree(trees["full"])
    assert report.ok, report.to_json()


def test_every_verify_mode_reaches_the_same_conclusion(trees, tmp_path):
    by_record = verify_tree(trees["full"])
    overlay = verify_tree(trees["original"], against=trees["mirror"])
    assert overlay.mode == "overlay"
    assert _outcome(overlay) == _outcome(by_record)
    assert main(["verify", "--tree", str(trees["original"]), "--against", str(trees["mirror"])]) == (
        EXIT_OK if overlay.ok else EXIT_RELINT)

    tree = copy_fixture(tmp_path / "tree")
    apply_tree(tree, write=True)
    in_place = verify_tree(tree)
    assert in_place.mode == "record"
    assert _outcome(in_place) == _outcome(by_record)


def test_patched_tree_against_the_original_tree(trees):
    report = verify_tree(trees["full"], against=trees["original"])
    assert report.mode == "original"
    assert report.compiles and not report.new_hazards
    assert EXECUTOR in report.patched_files
    assert SEED_SITE in report.fixed


def _broken_copy(trees, tmp_path, name):
    tree = tmp_path / name
    import shutil

    shutil.copytree(trees["full"], tree)
    return tree


def test_a_patched_file_that_does_not_compile_fails(trees, tmp_path):
    tree = _broken_copy(trees, tmp_path, "broken")
    patched = tree / EXECUTOR
    patched.write_text(patched.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    # Against the original tree, the edited file is a patched file that does not compile.
    code = main(["verify", "--tree", str(tree), "--against", str(trees["original"])])
    assert code in (EXIT_COMPILE, EXIT_COMPILE_AND_RELINT)
    report = verify_tree(tree, against=trees["original"])
    assert not report.compiles and any(EXECUTOR in e for e in report.compile_errors)


def test_a_new_hazard_in_a_patched_file_fails_relint(trees, tmp_path):
    tree = _broken_copy(trees, tmp_path, "newhazard")
    patched = tree / EXECUTOR
    patched.write_text(patched.read_text(encoding="utf-8") + NEW_HAZARD, encoding="utf-8")
    assert main(["verify", "--tree", str(tree), "--against", str(trees["original"])]) == EXIT_RELINT
    report = verify_tree(tree, against=trees["original"])
    assert report.compiles and any(h["function"] == "_fresh_hazard" for h in report.new_hazards)


def test_both_failures_give_the_combined_status(trees, tmp_path):
    tree = _broken_copy(trees, tmp_path, "both")
    (tree / EXECUTOR).write_text((tree / EXECUTOR).read_text(encoding="utf-8") + NEW_HAZARD, encoding="utf-8")
    other = tree / "tensorrt_llm/_torch/pyexecutor/scheduler/scheduler.py"
    other.write_text(other.read_text(encoding="utf-8") + "\nclass Broken(:\n", encoding="utf-8")
    assert main(["verify", "--tree", str(tree), "--against", str(trees["original"])]) == EXIT_COMPILE_AND_RELINT


def test_unchanged_tree_against_itself_shows_no_fix(trees, tmp_path):
    tree = copy_fixture(tmp_path / "touched")
    target = tree / EXECUTOR
    target.write_text(target.read_text(encoding="utf-8") + "\n# reviewed\n", encoding="utf-8")
    # The file differs but no hazard went away: the fix is missing.
    assert main(["verify", "--tree", str(tree), "--against", str(trees["original"])]) == EXIT_RELINT


def test_record_that_does_not_match_the_tree_is_refused(trees, tmp_path, capsys):
    tree = _broken_copy(trees, tmp_path, "mismatch")
    (tree / EXECUTOR).write_text("# something else entirely\n", encoding="utf-8")
    assert main(["verify", "--tree", str(tree)]) == EXIT_NOTHING_TO_VERIFY
    assert "differs from both" in capsys.readouterr().err


def test_nothing_to_verify_without_record_or_against(tmp_path, capsys):
    tree = copy_fixture(tmp_path / "plain")
    assert main(["verify", "--tree", str(tree)]) == EXIT_NOTHING_TO_VERIFY
    assert "--against" in capsys.readouterr().err


def test_verify_says_why_each_site_left_was_left(trees, capsys):
    """Every hazard still reported after the patch that apply left on purpose is listed with the
    record's outcome and reason (review: the analysis' doubts; refused: why no fix fits)."""
    record = load_report(trees["full"])
    left_in_record = [h for h in record["hazards"] if h["outcome"] not in ("fixed", "not-analysable")]
    assert left_in_record  # the fixture keeps some for review and some refused
    report = verify_tree(trees["full"])
    assert report.ok
    assert len(report.left) == len(left_in_record)
    by_site = {(h["path"], h["function"], h["callee"]): h for h in left_in_record}
    for item in report.left:
        recorded = by_site[(item["path"], item["function"], item["callee"])]
        assert item["outcome"] == recorded["outcome"] and item["reason"] == recorded["reason"] != ""
    assert {item["outcome"] for item in report.left} >= {"review", "refused"}
    assert report.to_json()["left"] == report.left
    assert main(["verify", "--tree", str(trees["full"])]) == EXIT_OK
    printed = capsys.readouterr().err
    assert f"left on purpose (as recorded by apply): {len(report.left)}" in printed
    assert all(f"{item['outcome']}: {item['path']}:{item['line']}" in printed for item in report.left)
