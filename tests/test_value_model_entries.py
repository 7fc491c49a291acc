"""A table whose entries are tuples of one length is read back by position
(``analysis/entries.py``), and a computation whose failure follows its
operands fails alike on every rank given agreed operands.

The shape of a staging table: one tuple per in-flight ticket, holding the
job and the wall clock it started at, unpacked whole when the ticket
completes.  Only the clock differs between ranks; a test of the job must not
read it.  Each valid shape is paired with one where the test really reads a
rank-local position, or the table is filled some other way, which must
still be reported."""

import textwrap

from cslint.api import check_paths, check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_STAGING = """
    import time

    import torch
    import torch.distributed as dist


    class Staging:
        def __init__(self, group, acks):
            self.group = group
            self.acks = acks
            self.inflight = {}
            self.tickets = 0

        def start(self, job):
            self.tickets += 1
            self.inflight[self.tickets] = (job, self.tickets, time.time())

        def drain(self, done):
            while done > 0:
                ticket = self.acks.pop(0)
                job, number, started = self.inflight.pop(ticket)
                print("staged in", time.time() - started)
                if job.finished():
                    self.release(job)
                done -= 1

        def release(self, job):
            flag = torch.tensor([1])
            dist.all_reduce(flag, group=self.group)
"""


# -- valid: a test of one position reads that position alone ---------------------------


def test_an_unpacked_entry_reads_its_own_position():
    assert _codes(_STAGING) == []


def test_an_entry_read_by_subscript_or_get_reads_its_own_position():
    for read in ("self.inflight[ticket]", "self.inflight.get(ticket)"):
        assert _codes(_STAGING.replace("self.inflight.pop(ticket)", read)) == [], read


# -- invalid: the position tested differs, or the table holds other things ------------


def test_a_test_of_the_clock_position_is_still_reported():
    source = _STAGING.replace("job, number, started = self.inflight.pop(ticket)",
                              "started, number, job = self.inflight.pop(ticket)")
    assert [code for code, _ in _codes(source)] == ["CSL101"]


def test_a_table_also_filled_another_way_is_read_whole():
    source = _STAGING.replace("self.tickets = 0",
                              "self.tickets = 0\n            self.inflight.update({0: (time.time(), 0, 0)})")
    assert [code for code, _ in _codes(source)] == ["CSL101"]


def test_a_table_with_entries_of_two_lengths_is_read_whole():
    source = _STAGING.replace("self.tickets += 1",
                              "self.tickets += 1\n            self.inflight[-1] = (time.time(), job)")
    assert [code for code, _ in _codes(source)] == ["CSL101"]


def test_a_subclass_in_another_file_storing_a_whole_value_makes_the_table_whole(tmp_path):
    package = tmp_path / "stage"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text(textwrap.dedent(_STAGING).replace("time.time())", "0)"))
    (package / "other.py").write_text(textwrap.dedent("""
        import time

        import torch.distributed as dist

        from stage.base import Staging


        class Timed(Staging):
            def begin(self, job):
                self.inflight[0] = (job, 0, 0) if time.time() > 5 else None
                dist.barrier()
    """))
    findings = check_paths([str(tmp_path)], cache=False, jobs=1).findings
    assert [(f.code, f.path.endswith("base.py")) for f in findings] == [("CSL101", True)]


# -- a numerical computation fails by its operands -------------------------------------


_FIT = """
    import numpy as np
    import torch.distributed as dist


    class Fitter:
        def fit(self, xs, ys):
            try:
                coeffs, _, _, _ = {solve}
                if len(coeffs) >= 2:
                    slope = float(coeffs[0])
                else:
                    raise ValueError("too few coefficients")
            except np.linalg.LinAlgError as e:
                raise ValueError(f"no fit: {e}")
            self.slope = slope


    def setup(group):
        samples = [None]
        dist.broadcast_object_list(samples, src=0, group=group)
        fitter = Fitter()
        try:
            fitter.fit(*samples[0])
        except Exception:
            return None
        dist.barrier(group=group)
        return fitter
"""


def test_a_least_squares_fit_of_agreed_samples_fails_alike_everywhere():
    assert _codes(_FIT.replace("{solve}", "np.linalg.lstsq(np.array(xs), np.array(ys), rcond=None)")) == []


def test_a_builtin_exception_made_for_a_raise_fails_nowhere_by_itself():
    source = _FIT.replace("{solve}", "xs, None, None, None").replace(
        "except np.linalg.LinAlgError as e:", "except RuntimeError as e:")
    assert _codes(source) == []


def test_a_numerical_module_reading_this_ranks_file_still_fails_locally():
    source = _FIT.replace("{solve}", "np.load(xs), None, None, None")
    assert [code for code, _ in _codes(source)] == ["CSL104"]


_FLAG = """
    import torch
    import torch.distributed as dist

    _unavailable = False


    def sync_unavailable(group):
        global _unavailable
        try:
            flag = torch.tensor([1 if _unavailable else 0], dtype=torch.int32{device})
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
            _unavailable = bool(flag.item())
        except Exception:
            _unavailable = True


    def agree(flags, group):
        packed = torch.tensor(flags, dtype=torch.int32{device})
        dist.all_reduce(packed, group=group)
        return packed


    def step(group):
        try:
            agree([1, 0], group)
        except Exception:
            return
        dist.barrier(group=group)
"""


def test_a_flag_tensor_made_on_the_host_fails_alike_everywhere():
    assert _codes(_FLAG.replace("{device}", "")) == []
    assert _codes(_FLAG.replace("{device}", ', device="cpu"')) == []


def test_a_tensor_of_the_data_on_this_ranks_device_may_fail_there_alone():
    # the flag written out is a few bytes on whatever device, and this rank's
    # own device is one the runtime found (raises.device_named): it fails
    # alike; the tensor of the flags handed in holds what the caller passed
    codes = _codes(_FLAG.replace("{device}", ", device=torch.cuda.current_device()"))
    assert codes == [("CSL104", 29)], codes
