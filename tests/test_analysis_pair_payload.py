"""The structure of what a pair of pipeline stages exchanges (issue 14,
complementary-role-arms): where a framework's stage-to-stage send and
receive are one broadcast over the two ranks of the pair (the presets'
``pair_exchanges``), the sender's value and the receiver's buffer have one
structure -- the receiver built its buffers from what the sender told it
first, or from its own outputs, which the sender received as its inputs.  A
test of the exchanged value's kind (a tensor or a tuple, a floating one or
not) or a loop over the parts exchanged one each goes the same way at both
ends, even where the value came from stage-dependent code, as long as the
other half of the pair's exchanges tests its own value alike.  An end that
exchanges fixed parts (``parts[0]``, ``parts[1]``) meets a loop over the
other end's buffers only if there are exactly so many: that loop stays
reported, and so does a test of anything but the exchanged value, and a
test with no other half in the class."""

import textwrap

from cslint.api import check_paths

from tests.test_analysis_neighbour_exchanges import PAIR_LINK

# an engine in the shape of a pipeline engine's exchange of activations and
# gradients: the held values' structure is made per stage (the first stage
# loads a batch, later ones rebuild what they received; the last allocates
# its buffers otherwise)
ENGINE_HEAD = """
    import torch
    import torch.distributed as dist

    from . import p2p


    class Engine:
        def __init__(self, grid, split_grads):
            self.grid = grid
            self.stage_id = grid.get_stage_id()
            self.num_stages = grid.num_stages
            self.prev_stage = self.stage_id - 1
            self.next_stage = self.stage_id + 1
            self.split_grads = split_grads
            self.outputs = None
            self.held_inputs = None
            self.recv_buf = None
            self.grad_buf = None
            self.first_send = True

        def is_first_stage(self):
            return self.stage_id == 0

        def is_last_stage(self):
            return self.stage_id == self.num_stages - 1

        def forward(self):
            inputs = self.held_inputs
            if not self.is_first_stage():
                inputs = (self._alloc([4]), *inputs[1:])
                inputs = inputs[0] if len(inputs) == 1 else inputs
                self.held_inputs = inputs
            self.outputs = self.layers(inputs)

        def _alloc(self, shape):
            if self.is_last_stage():
                return torch.zeros(shape)
            return torch.empty(shape)

        def _send_meta(self, value, stage):
            meta = torch.zeros(8, dtype=torch.int32)
            meta[0] = 0 if isinstance(value, torch.Tensor) else len(value)
            p2p.send(meta, stage)

        def _recv_meta(self, stage):
            meta = torch.zeros(8, dtype=torch.int32)
            p2p.recv(meta, stage)
            count = int(meta[0])
            if count == 0:
                return self._alloc([4])
            return tuple(self._alloc([4]) for _ in range(count))

        def send_activations(self):
            outputs = self.outputs
            if self.first_send:
                self.first_send = False
                self._send_meta(outputs, self.next_stage)
            if isinstance(outputs, torch.Tensor):
                p2p.send(outputs, self.next_stage)
            else:
                for buffer in outputs:
                    p2p.send(buffer, self.next_stage)

        def recv_activations(self):
            if self.recv_buf is None:
                self.recv_buf = self._recv_meta(self.prev_stage)  # reported: the metadata's first use (not read here)
            if isinstance(self.recv_buf, torch.Tensor):
                p2p.recv(self.recv_buf, self.prev_stage)
                received = self.recv_buf.clone()
            else:
                received = []
                for idx, buffer in enumerate(self.recv_buf):
                    p2p.recv(buffer, self.prev_stage)
                    received.append(buffer.clone())
                received = tuple(received)
            self.held_inputs = received

        def recv_grads(self):
            outputs = self.outputs
            if self.grad_buf is None:
                if isinstance(outputs, torch.Tensor):
                    self.grad_buf = self._alloc(list(outputs.size()))
                else:
                    self.grad_buf = [self._alloc(list(t.size())) for t in outputs if t.is_floating_point()]
            if isinstance(self.grad_buf, torch.Tensor):
                p2p.recv(self.grad_buf, self.next_stage)
            else:
                for buffer in self.grad_buf:
                    p2p.recv(buffer, self.next_stage){loop_note}
"""

SEND_GRADS = """
        def send_grads(self):
            inputs = self.held_inputs
            if isinstance(inputs, torch.Tensor):
                p2p.send(inputs.grad, self.prev_stage)
            else:
                for buffer in inputs:
                    if not buffer.is_floating_point():
                        continue
                    p2p.send(buffer.grad, self.prev_stage)
            self.held_inputs = None
"""

# the gradients' first two parts sent as fixed elements where they are split:
# the receiver's loop over its buffers meets them only if it has two
SEND_SPLIT_GRADS = """
        def send_grads(self):
            inputs = self.held_inputs
            if isinstance(inputs, torch.Tensor):
                p2p.send(inputs.grad, self.prev_stage)
            else:
                if self.split_grads:
                    p2p.send(inputs[0], self.prev_stage)
                    p2p.send(inputs[1], self.prev_stage)
                else:
                    for buffer in inputs:
                        if not buffer.is_floating_point():
                            continue
                        p2p.send(buffer.grad, self.prev_stage)
            self.held_inputs = None
"""

# tests of the exchanged value with no other half in the class, and a test
# of something else than the exchanged value
ONE_SIDED = """
    import torch

    from . import p2p


    class Sender:
        def __init__(self, grid):
            self.stage_id = grid.get_stage_id()
            self.next_stage = self.stage_id + 1
            self.prev_stage = self.stage_id - 1
            self.outputs = None
            self.probe = torch.zeros(1)

        def produce(self):
            if self.stage_id == 0:
                self.outputs = torch.zeros(4)
            else:
                self.outputs = (torch.zeros(4), torch.zeros(4))

        def send_activations(self):
            outputs = self.outputs
            if isinstance(outputs, torch.Tensor):
                p2p.send(outputs, self.next_stage)  # reported: no receive from the stage before in the class
            else:
                for buffer in outputs:
                    p2p.send(buffer, self.next_stage)  # reported: no receive from the stage before in the class


    class Mixed:
        def __init__(self, grid):
            self.stage_id = grid.get_stage_id()
            self.next_stage = self.stage_id + 1
            self.prev_stage = self.stage_id - 1
            self.outputs = None
            self.probe = torch.zeros(1)
            self.buf = torch.zeros(4)

        def produce(self):
            if self.stage_id == 0:
                self.outputs = torch.zeros(4)
            else:
                self.outputs = (torch.zeros(4), torch.zeros(4))

        def send_activations(self):
            if isinstance(self.outputs, torch.Tensor):
                p2p.send(self.probe, self.next_stage)  # reported: the test reads another value than the one sent

        def recv_activations(self):
            if isinstance(self.buf, torch.Tensor):
                p2p.recv(self.buf, self.prev_stage)
"""


def _tree(tmp_path, files: dict):
    pipe = tmp_path / "deepspeed" / "runtime" / "pipe"
    pipe.mkdir(parents=True)
    for folder in (tmp_path / "deepspeed", tmp_path / "deepspeed" / "runtime", pipe):
        (folder / "__init__.py").write_text("")
    (pipe / "p2p.py").write_text(textwrap.dedent(PAIR_LINK))
    for name, text in files.items():
        (pipe / name).write_text(text)
    return tmp_path


def _engine(send_grads: str, loop_note: str = "") -> str:
    return textwrap.dedent(ENGINE_HEAD.replace("{loop_note}", loop_note) + send_grads)


def _reported(source: str) -> list:
    return [n for n, text in enumerate(source.splitlines(), 1) if "# reported" in text]


def _lines(tmp_path, files: dict) -> dict:
    findings = check_paths([str(_tree(tmp_path, files))], cache=False, jobs=1, report="per-site").findings
    return {name: sorted(f.line for f in findings if f.path.endswith(name)) for name in files}


def test_tests_of_the_exchanged_structure_part_no_member_of_the_pair(tmp_path):
    engine = _engine(SEND_GRADS)
    assert _lines(tmp_path, {"engine.py": engine}) == {"engine.py": _reported(engine)}


def test_a_loop_meeting_fixed_parts_stays_reported(tmp_path):
    engine = _engine(SEND_SPLIT_GRADS, "  # reported: the sender sends two fixed parts where it splits")
    assert _lines(tmp_path, {"engine.py": engine}) == {"engine.py": _reported(engine)}


def test_a_test_of_another_value_or_with_no_other_half_stays_reported(tmp_path):
    one_sided = textwrap.dedent(ONE_SIDED)
    assert _lines(tmp_path, {"sides.py": one_sided}) == {"sides.py": _reported(one_sided)}
