"""Configuration discovery and rule selection."""

import textwrap

import pytest

from cslint.config import DEFAULT_PRESETS, ConfigError, Settings, find_config_file, load_settings, matches_any


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_nearest_pyproject_with_table_wins_and_tableless_ones_are_skipped(tmp_path):
    write(tmp_path / "pyproject.toml", """
        [tool.cslint]
        presets = ["tensorrt_llm"]
        rank-local = ["self.local_*"]
    """)
    write(tmp_path / "pkg" / "pyproject.toml", "[tool.other]\nx = 1\n")
    module = write(tmp_path / "pkg" / "sub" / "mod.py", "x = 1\n")
    assert find_config_file(str(module)) == tmp_path / "pyproject.toml"
    settings = load_settings(str(module))
    assert settings.root == str(tmp_path.resolve())
    assert settings.presets == [*DEFAULT_PRESETS, "tensorrt_llm"]
    assert settings.rank_local == ["self.local_*"]


def test_no_configuration_gives_defaults(tmp_path):
    module = write(tmp_path / "m.py", "")
    settings = load_settings(str(module))
    assert settings.config_file is None
    assert settings.presets == list(DEFAULT_PRESETS)
    assert DEFAULT_PRESETS == ("torch_distributed", "mpi4py", "vllm", "sglang", "deepspeed", "megatron", "accelerate",
                               "lightning")


def test_unknown_key_is_a_clear_error(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.cslint]\nrank_local = ['x']\n")
    with pytest.raises(ConfigError, match="unknown key.*rank_local"):
        load_settings(str(tmp_path))


def test_wrong_type_is_a_clear_error(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.cslint]\ncollectives = 3\n")
    with pytest.raises(ConfigError, match="collectives"):
        load_settings(str(tmp_path))


def test_broken_toml_is_a_clear_error(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.cslint\n")
    with pytest.raises(ConfigError, match="cannot read configuration"):
        load_settings(str(tmp_path))


def test_select_ignore_longest_prefix_and_per_file_ignores(tmp_path):
    write(tmp_path / "pyproject.toml", """
        [tool.cslint]
        select = ["CSL1"]
        ignore = ["CSL103"]
        per-file-ignores = {"tests/*" = ["CSL102"]}
    """)
    settings = load_settings(str(tmp_path))
    assert settings.code_enabled("CSL101")
    assert not settings.code_enabled("CSL103")
    assert not settings.code_enabled("CSL001")
    assert settings.code_enabled("CSL102", str(tmp_path / "src" / "a.py"))
    assert not settings.code_enabled("CSL102", str(tmp_path / "tests" / "a.py"))


def test_exclude_matches_path_components(tmp_path):
    settings = Settings(root=str(tmp_path))
    assert settings.is_excluded(str(tmp_path / ".venv" / "lib" / "x.py"))
    assert not settings.is_excluded(str(tmp_path / "src" / "x.py"))


def test_patterns_are_dotted_wildcards():
    assert matches_any("self.local_queue", ["self.local_*"])
    assert not matches_any("self.cfg.local_queue", ["self.local_*x"])
    assert matches_any("self.dist.my_gather", ["*.my_gather:tp"])


def test_fingerprint_changes_with_analysis_settings():
    assert Settings().fingerprint() == Settings().fingerprint()
    assert Settings().fingerprint() != Settings(rank_local=["self.x"]).fingerprint()


def test_exclude_accepts_directory_subpaths(tmp_path):
    settings = Settings(root=str(tmp_path), exclude=["tests/fixtures", "third_party/*"])
    assert settings.is_excluded(str(tmp_path / "tests" / "fixtures" / "tree" / "a.py"))
    assert settings.is_excluded(str(tmp_path / "third_party" / "lib" / "a.py"))
    assert not settings.is_excluded(str(tmp_path / "tests" / "test_a.py"))
