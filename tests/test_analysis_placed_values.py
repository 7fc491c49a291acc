"""A value a torch tensor maker is told to put on a device (``torch.tensor(x,
device=dev)``) is the same kind of value, of the same shape, on every rank,
whatever the device argument is: one a rank index picks from a list
(``self.devices[self.local_rank]``) differs whole, and still only places it
(cslint/analysis/atoms.py PLACED).  A type test of such a tensor decides
nothing that differs; the device read back (``t.device``) and a shape made
from a rank-picked number still do, and so does what any other library call
builds on that device (``open_channel(device=dev)``: only held, its None-ness
and type may follow the device)."""

import textwrap

from cslint.api import check_paths

STRATEGY = """
    import torch
    import torch.distributed as dist
    from channels import open_channel
    from torch import Tensor


    def _sync_if_available(result):
        if dist.is_initialized():
            return _sync(result)
        return result


    def _sync(result):
        dist.all_reduce(result)
        return result


    class Strategy:
        def __init__(self, devices, counts, local_rank):
            self.devices = devices
            self.counts = counts
            self.local_rank = local_rank

        @property
        def root_device(self):
            return self.devices[self.local_rank]

        def reduce(self, tensor):
            if isinstance(tensor, Tensor):
                return _sync_if_available(tensor)
            return tensor

        def decide(self, decision):
            flag = torch.tensor(int(decision), device=self.root_device)
            return self.reduce(flag)                      # VALID: a tensor on every rank

        def decide_present(self, decision):
            flag = torch.zeros(1, device=self.devices[self.local_rank])
            if flag is not None:                          # VALID: made on every rank
                dist.all_reduce(flag)

        def decide_on_first(self, decision):
            flag = torch.tensor(int(decision), device=self.root_device)
            if flag.device == self.devices[0]:            # INVALID: the device read back
                dist.all_reduce(flag)

        def decide_channel(self, tensor):
            channel = open_channel(group=None, device=self.root_device)
            if channel is None:                           # INVALID: what a library call builds on the device
                return tensor
            dist.all_reduce(tensor)
            return tensor

        def decide_channel_kind(self, tensor):
            channel = open_channel(group=None, device=self.root_device)
            if isinstance(channel, Tensor):               # INVALID: what a library call builds on the device
                dist.all_reduce(tensor)

        def decide_sized(self, decision):
            flags = torch.zeros(self.counts[self.local_rank], device=self.root_device)
            if len(flags) > 1:                            # INVALID: a shape this rank's count makes
                dist.all_reduce(flags)
"""


def test_a_value_placed_on_a_rank_picked_device_is_alike_in_structure(tmp_path):
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "strategy.py").write_text(textwrap.dedent(STRATEGY))
    findings = check_paths([str(package)], cache=False, jobs=1, report="per-site").findings
    assert sorted(f.function for f in findings) == ["Strategy.decide_channel", "Strategy.decide_channel_kind",
                                                     "Strategy.decide_on_first", "Strategy.decide_sized"]
