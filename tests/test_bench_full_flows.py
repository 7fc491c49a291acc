"""bench/full_flows.py prints every link of a flow an explanation cuts (the
"flow-cut" doubt), for its own run only: the ordinary report still shows the
first links alone."""

import importlib.util
import textwrap
from pathlib import Path

from cslint.analysis import divergence
from cslint.api import check_paths

_SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "full_flows.py"

_RELAY = """
    import torch.distributed as dist


    class Relay:
        def __init__(self):
            self.a = dist.get_rank()

        def step_b(self):
            self.b = self.a

        def step_c(self):
            self.c = self.b

        def step_d(self):
            self.d = self.c

        def step_e(self):
            self.e = self.d

        def reduce(self, t):
            if self.e:
                dist.all_reduce(t)

        def reduce_near(self, t):
            if self.b:
                dist.all_reduce(t)
"""


def _script():
    spec = importlib.util.spec_from_file_location("full_flows", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relay(tmp_path) -> Path:
    path = tmp_path / "relay.py"
    path.write_text(textwrap.dedent(_RELAY))
    return path


def test_every_link_of_a_cut_flow_is_printed(tmp_path, capsys, monkeypatch):
    path = _relay(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert _script().main([str(path)]) == 0
    printed = capsys.readouterr().out
    assert "`self.e` is assigned from it in `Relay.step_e`" in printed  # the link the explanation leaves out
    assert "self.e = self.d" in printed  # with its source line
    assert "when `self.b`" not in printed  # a flow the explanation shows whole is not listed
    assert divergence.MAX_VIA == 4  # the run's own setting only


def test_the_ordinary_report_still_cuts_the_flow(tmp_path):
    path = _relay(tmp_path)
    found = [f for f in check_paths([str(path)], report="per-site").findings if f.condition == "self.e"]
    assert len(found) == 1
    notes = [link.note for link in found[0].chain]
    assert not any("`self.e` is assigned" in note for note in notes)
    assert any(doubt.kind == "flow-cut" for doubt in found[0].confidence.doubts)
