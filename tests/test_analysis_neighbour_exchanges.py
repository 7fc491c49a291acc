"""Exchanges between neighbouring pipeline stages (issue 14,
complementary-role-arms): a framework whose stage-to-stage send and receive
are one broadcast over the two ranks of the pair of stages (the presets'
``pair_exchanges``) has stage s enter the group {s, s + 1} by its send to
the stage after it, under "this stage is not the last", and stage s + 1 by
its receive from the stage before it, under "this stage is not the first":
both tests hold on the pair's members wherever the pair is there, so neither
parts the pair's group.  A send under any other test, or with no receive
from the stage before in the function, stays reported."""

import ast
import textwrap

from cslint.analysis.neighbours import stage_end_test
from cslint.api import check_paths
from cslint.presets import load_presets
from cslint.presets.rank_names import pipeline_end

# the exchanges, in the module the DeepSpeed pack names: a broadcast from the
# sender over the group of the two stages (a table the grid fills)
PAIR_LINK = """
    import torch.distributed as dist

    _pair_groups = None
    _layout = None


    def _pair_group(first, second):
        low = min(first, second)
        return _pair_groups[_layout.rank_of(low)]


    def send(tensor, dest_stage):
        here = _layout.stage()
        group = _pair_group(here, dest_stage)
        return dist.broadcast(tensor, _layout.rank_of(here), group=group)


    def recv(tensor, src_stage):
        here = _layout.stage()
        group = _pair_group(src_stage, here)
        return dist.broadcast(tensor, _layout.rank_of(src_stage), group=group)
"""

STAGES = """
    import torch
    import torch.distributed as dist

    from . import p2p


    class Stages:
        def __init__(self, grid):
            self.grid = grid
            self.stage_id = grid.get_stage_id()
            self.num_stages = grid.num_stages
            self.prev_stage = self.stage_id - 1
            self.next_stage = self.stage_id + 1
            self.probe = torch.zeros(1)

        def is_first_stage(self):
            return self.stage_id == 0

        def is_last_stage(self):
            return self.stage_id == self.num_stages - 1

        def handshake(self):
            dist.barrier()
            if self.stage_id % 2 == 0:
                if not self.is_last_stage():
                    p2p.send(self.probe, self.next_stage)
                if not self.is_first_stage():
                    p2p.recv(self.probe, self.prev_stage)
            else:
                if not self.is_first_stage():
                    p2p.recv(self.probe, self.prev_stage)
                if not self.is_last_stage():
                    p2p.send(self.probe, self.next_stage)

        def forward_step(self, batch, buffer):
            dist.barrier()
            if self.is_first_stage():
                buffer = batch
            else:
                p2p.recv(buffer, src_stage=self.prev_stage)
            out = buffer * 2
            if self.is_last_stage():
                return out
            else:
                p2p.send(out, dest_stage=self.next_stage)
            return None

        def send_only(self):
            dist.barrier()
            if not self.is_last_stage():
                p2p.send(self.probe, self.next_stage)  # reported: no receive from the stage before meets it

        def send_on_data(self, out):
            dist.barrier()
            if dist.get_rank() % 2 == 0:
                p2p.send(out, self.next_stage)  # reported: a rank's own test
            if not self.is_first_stage():
                p2p.recv(out, self.prev_stage)  # reported: the send before it meets it on some ranks only

        def send_under_the_wrong_end(self, out):
            dist.barrier()
            if not self.is_first_stage():
                p2p.send(out, self.next_stage)  # reported: the last stage sends to no one
                p2p.recv(out, self.prev_stage)  # reported: no send to the stage after under its own test
"""


# (``send`` and ``recv`` are too short a name to have their callers read in
# depth: each method issues a collective of its own, as the engine's does)


def _tree(tmp_path):
    pipe = tmp_path / "deepspeed" / "runtime" / "pipe"
    pipe.mkdir(parents=True)
    for folder in (tmp_path / "deepspeed", tmp_path / "deepspeed" / "runtime", pipe):
        (folder / "__init__.py").write_text("")
    (pipe / "p2p.py").write_text(textwrap.dedent(PAIR_LINK))
    (pipe / "stages.py").write_text(textwrap.dedent(STAGES))
    return tmp_path


def _reported(source: str) -> list:
    return [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


def test_a_pair_exchange_under_the_test_that_the_neighbour_is_there_parts_no_member(tmp_path):
    findings = check_paths([str(_tree(tmp_path))], cache=False, jobs=1, report="per-site").findings
    assert sorted(f.line for f in findings if f.path.endswith("stages.py")) == _reported(STAGES)


def test_the_deepspeed_pack_names_its_pipeline_exchanges():
    knowledge = load_presets(["torch_distributed", "deepspeed"])
    assert knowledge.pair_exchanges == {"deepspeed.runtime.pipe.p2p.send": ("send", 1, "dest_stage"),
                                        "deepspeed.runtime.pipe.p2p.recv": ("recv", 1, "src_stage")}
    assert load_presets(["torch_distributed"]).pair_exchanges == {}


def test_the_tests_of_the_pipelines_ends():
    def read(text):
        return stage_end_test(ast.parse(text, mode="eval").body)

    assert read("self.is_last_stage()") == ("last", True)
    assert read("not self.is_last_stage()") == ("last", False)
    assert read("not is_pipeline_first_stage()") == ("first", False)
    assert read("self.dist.is_last_pp_rank") == ("last", True)
    assert read("self.pp_rank > 0") == ("first", False)
    assert read("self.is_last_stage(chunk)") is None  # a virtual chunk's, not this rank's
    assert read("self.is_last_tp_rank") is None
    assert pipeline_end("is_first_stage") == "first" and pipeline_end("is_stage") is None
