"""A preset's parallel settings gate the broadcasts that agree a value
(issue 14, values made uniform by a collective).

A diffusion server's rank 0 receives the work and hands it to its peers
through the sequence-parallel and CFG groups, each broadcast only where the
setting says that group has peers (``if args.sp_degree != 1:``, ``if
args.enable_cfg_parallel:``).  Where a setting says one rank, its group has
no peers to differ from, so past the skipped arm the work is as agreed as
after the broadcast (the sglang preset's ``group_switches``).  A setting no
preset names, or a broadcast over a group the setting does not size, agrees
nothing.  Each VALID shape sits beside the INVALID one that must still be
reported."""

import ast
import textwrap

from cslint.analysis.edges import switch_word
from cslint.api import check_paths
from cslint.presets import load_presets

SOURCE = """
    import torch.distributed as dist

    from serving.utils import broadcast_pyobj


    class Worker:
        def __init__(self, args, sp_group, sp_cpu_group, cfg_group, cfg_cpu_group, socket):
            self.args = args
            self.sp_group = sp_group
            self.sp_cpu_group = sp_cpu_group
            self.cfg_group = cfg_group
            self.cfg_cpu_group = cfg_cpu_group
            self.socket = socket

        def _receive(self):
            if dist.get_rank() == 0:
                return self.socket.recv_multipart()
            return None

        def _to_peers(self, data):
            if self.args.sp_degree != 1:
                data = broadcast_pyobj(data, self.sp_group.rank, self.sp_cpu_group, src=self.sp_group.ranks[0])
            if self.args.enable_cfg_parallel:
                data = broadcast_pyobj(data, self.cfg_group.rank, self.cfg_cpu_group, src=self.cfg_group.ranks[0])
            return data

        def _to_peers_when_fast(self, data):
            if self.args.enable_fast_path:
                data = broadcast_pyobj(data, self.sp_group.rank, self.sp_cpu_group, src=self.sp_group.ranks[0])
            return data

        def _to_peers_of_another_group(self, data):
            if self.args.enable_cfg_parallel:
                data = broadcast_pyobj(data, self.sp_group.rank, self.sp_cpu_group, src=self.sp_group.ranks[0])
            return data

        def step(self, t):
            frames = self._to_peers(self._receive())
            if frames:
                dist.all_reduce(t)        # VALID: each group skipped has one rank
            return t

        def step_when_fast(self, t):
            frames = self._to_peers_when_fast(self._receive())
            if frames:
                dist.all_reduce(t)        # INVALID: no preset sizes a group by that setting
            return t

        def step_of_another_group(self, t):
            frames = self._to_peers_of_another_group(self._receive())
            if frames:
                dist.all_reduce(t)        # INVALID: the CFG setting says nothing of the SP group
            return t
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_broadcast_skipped_where_its_setting_says_one_rank_still_agrees(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "worker.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.function.startswith("Worker.step")})
    assert flagged == _marked(source, "INVALID"), [(f.line, f.message) for f in findings]
    assert _marked(source, "VALID")


def test_a_setting_says_several_ranks_only_where_it_holds_above_one():
    switches = load_presets(["sglang"]).group_switches

    def word(text):
        return switch_word(ast.parse(text, mode="eval").body, switches)

    assert word("args.enable_cfg_parallel") == "cfg"
    assert word("self.server_args.sp_degree != 1") == "sp"
    assert word("args.sp_degree > 1") == "sp"
    assert word("args.sp_degree >= 2") == "sp"
    assert word("args.sp_degree == 1") is None  # holds where the group has one rank
    assert word("args.sp_degree > 0") is None  # holds with one rank too
    assert word("not args.enable_cfg_parallel") is None
    assert word("args.enable_fast_path") is None


COMMUNICATOR = """
    import json

    import torch.distributed as dist

    from serving.parallel import get_tuning_group, tuning_is_distributed


    def _context():
        if not tuning_is_distributed():
            return None, 0, 1
        group = get_tuning_group()
        return group, group.rank_in_group, group.world_size


    def _gather(group, value):
        if group is None or group.world_size == 1:
            return [value]
        gathered = [None] * group.world_size
        dist.all_gather_object(gathered, value, group=group.cpu_group)
        return gathered


    def _load(path):
        with open(path) as f:
            return json.load(f)


    def tune(path, wanted, tune_one):
        group, rank, size = _context()
        records = _load(path) if rank == 0 else None
        if group is not None:
            records = group.broadcast_object(records, src=0)
        missing = [w for w in wanted if w not in records]
        if not missing:
            return records
        return _gather(group, [tune_one(w) for w in missing[rank::size]])    # VALID: no communicator, no peers


    def tune_passed(path, wanted, tune_one):
        group, rank, size = _context()
        box = [_load(path) if rank == 0 else None]
        if group is not None:
            dist.broadcast_object_list(box, src=0, group=group)
        missing = [w for w in wanted if w not in box[0]]
        if not missing:
            return box[0]
        return _gather(group, [tune_one(w) for w in missing[rank::size]])    # INVALID: None names the default group
"""


def test_a_communicator_tested_for_being_there_agrees_what_its_arm_broadcasts(tmp_path):
    source = textwrap.dedent(COMMUNICATOR)
    (tmp_path / "tuning.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.function.startswith("tune")})
    assert flagged == _marked(source, "INVALID"), [(f.line, f.message) for f in findings]
    assert _marked(source, "VALID")
