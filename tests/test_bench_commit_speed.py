"""bench/commit_speed.py --min-of N: the least CPU seconds of each side, not
the median, and their ratio."""

from __future__ import annotations

import pytest

from bench_scripts import load_bench


def test_min_of_n_reports_the_least_cpu_of_each_side_and_their_ratio():
    bench = load_bench("commit_speed")
    # a busy round adds time to one run of each side; the minima are untouched by it
    lines = bench.min_of_n_report([10.0, 14.0, 10.5], [11.0, 10.0, 16.0])
    assert lines[0].startswith("old cpu min-of-3 10.00 s (max 14.00, spread 40 %)")
    assert lines[1].startswith("new cpu min-of-3 10.00 s (max 16.00, spread 60 %)")
    assert lines[2] == "new/old cpu min-of-3: 1.000"


def test_min_of_n_sets_the_rounds_and_passes_the_config(monkeypatch, tmp_path, capsys):
    bench = load_bench("commit_speed")
    calls = []
    cpu = iter([9.0, 5.0, 4.0, 6.0, 8.0, 4.5, 4.2])  # warm-up, then old/new, new/old, old/new (alternating)

    def fake_run(directory, tree, python, jobs, config=None):
        calls.append((directory, config))
        return 1.0, next(cpu)

    monkeypatch.setattr(bench, "one_run", fake_run)
    config = tmp_path / "cslint.toml"
    bench.main([str(tmp_path), "--old", str(tmp_path), "--new", str(tmp_path), "--min-of", "3",
                "--config", str(config)])
    assert len(calls) == 7 and {c for _, c in calls} == {str(config)}
    out = capsys.readouterr().out
    assert "old cpu min-of-3 4.50 s" in out and "new cpu min-of-3 4.00 s" in out
    assert "new/old cpu min-of-3: 0.889" in out


def test_min_of_n_and_repeat_are_one_choice_of_the_rounds(monkeypatch, tmp_path, capsys):
    # --min-of N sets the rounds as --repeat does: both at once would leave one unread
    bench = load_bench("commit_speed")
    monkeypatch.setattr(bench, "one_run", lambda *args, **kwargs: pytest.fail("ran with two round counts"))
    with pytest.raises(SystemExit) as stopped:
        bench.main([str(tmp_path), "--old", str(tmp_path), "--new", str(tmp_path), "--repeat", "7", "--min-of", "3"])
    assert stopped.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
