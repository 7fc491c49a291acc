"""Queries about the job's hardware and software setup (issue 14, precision
on real code): the properties of a device, how many devices a process sees,
the compute capability.  A job runs on nodes of one kind (the same GPUs, the
same driver and software image), so these return the same value on every
rank and fail, if they fail, on every rank alike: neither the value nor a
handler around the query separates ranks.  What one rank's own device holds
now (its free memory), which device it is (its index) and what it sees of its
disk are still this rank's own.  Each VALID shape sits beside an INVALID one
that must still be reported."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_GUARDED = """
    import os

    import torch
    import torch.distributed as dist


    def fast_path_available():
        try:
            props = QUERY
            arch = getattr(props, "name", "")
            return any(tag in arch for tag in ("H100", "H200"))
        except Exception:
            return False


    def setup(t, group):
        if fast_path_available():
            dist.all_reduce(t, group=group)
"""


def test_valid_device_properties_are_the_same_on_every_rank():
    assert _codes(_GUARDED.replace("QUERY", "torch.cuda.get_device_properties(0)")) == []


def test_valid_device_properties_of_this_ranks_own_device_are_the_same_hardware():
    # each rank asks about its own device, but every device is of one kind
    assert _codes("""
        import torch
        import torch.distributed as dist

        def maybe_reduce(t):
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            if props.major >= 9:
                dist.all_reduce(t)
    """) == []


def test_valid_a_failed_query_with_the_same_operands_fails_everywhere():
    assert _codes(_GUARDED.replace("QUERY", "torch.cuda.get_device_properties(torch.cuda.device_count() - 1)")) == []


def test_invalid_a_query_that_fails_by_its_operands_fails_where_they_differ():
    # whether an index names a device follows the index, this rank's own
    assert _codes(_GUARDED.replace("QUERY", "torch.cuda.get_device_properties(dist.get_rank())")) == [("CSL101", 19)]


def test_valid_device_capability_and_count_decide_alike():
    assert _codes("""
        import torch
        import torch.distributed as dist
        from torch.cuda import get_device_capability

        def maybe_reduce(t):
            major, _ = get_device_capability()
            if major >= 9 and torch.cuda.device_count() > 1:
                dist.all_reduce(t)
    """) == []


def test_invalid_a_query_of_this_ranks_disk_still_differs():
    assert _codes(_GUARDED.replace("QUERY", "open('/tmp/arch').read()")) == [("CSL101", 19)]


def test_invalid_free_memory_still_differs():
    assert _codes("""
        import torch
        import torch.distributed as dist

        def maybe_reduce(t):
            free, total = torch.cuda.mem_get_info()
            if free > 2**30:
                dist.all_reduce(t)
    """) == [("CSL101", 8)]


def test_invalid_which_device_a_rank_uses_still_differs():
    assert _codes("""
        import torch
        import torch.distributed as dist

        def maybe_reduce(t):
            if torch.cuda.current_device() == 0:
                dist.all_reduce(t)
    """) == [("CSL101", 7)]


def test_invalid_an_unknown_library_call_in_the_try_still_fails_on_one_rank():
    assert _codes(_GUARDED.replace("QUERY", "probe_devices()")) == [("CSL101", 19)]


_TOPOLOGY = """
    import pynvml
    import torch.distributed as dist


    def full_nvlink(device_ids):
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in device_ids]
        for i, first in enumerate(handles):
            for j, second in enumerate(handles):
                if i < j:
                    try:
                        status = QUERY
                        if status != pynvml.NVML_P2P_STATUS_OK:
                            return False
                    except pynvml.NVMLError:
                        return False
        return True


    def setup(t, group, device_ids):
        if full_nvlink(device_ids):
            dist.all_reduce(t, group=group)
"""


def test_valid_a_topology_query_of_the_same_devices_fails_alike():
    # every rank asks the driver about the same pairs of devices (the ids
    # the group shares): a failure of the query is not one rank's own
    query = "pynvml.nvmlDeviceGetP2PStatus(first, second, pynvml.NVML_P2P_CAPS_INDEX_NVLINK)"
    assert _codes(_TOPOLOGY.replace("QUERY", query)) == []


def test_invalid_a_topology_query_of_this_ranks_own_pair_fails_by_its_operands():
    query = "pynvml.nvmlDeviceGetP2PStatus(first, dist.get_rank(), pynvml.NVML_P2P_CAPS_INDEX_NVLINK)"
    assert _codes(_TOPOLOGY.replace("QUERY", query)) == [("CSL101", 22)]


def test_invalid_what_a_device_holds_now_is_not_a_topology_query():
    query = "pynvml.nvmlDeviceGetMemoryInfo(first).free"
    assert _codes(_TOPOLOGY.replace("QUERY", query)) == [("CSL101", 22)]


_PROBED = """
    import torch
    import torch.distributed as dist


    def capability_from_driver():
        try:
            import pynvml
        except ImportError:
            return None
        index_of = getattr(torch.cuda, "_get_nvml_device_index", None)
        if index_of is None:
            return None
        try:
            index = INDEX
        except Exception:
            return None
        try:
            pynvml.nvmlInit()
            try:
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
                major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            finally:
                pynvml.nvmlShutdown()
            return major * 10 + minor
        except Exception:
            return None


    def setup(t, group):
        if (capability_from_driver() or 0) >= 90:
            dist.all_reduce(t, group=group)
"""


def test_valid_the_driver_asked_about_this_ranks_own_device_answers_alike():
    # the index is which device torch's first ordinal is on this rank (read
    # through a feature probe, a local holding torch's function): a device
    # the runtime found, of the kind every rank's is; starting the driver,
    # asking it and stopping it fail alike
    assert _codes(_PROBED.replace("INDEX", "index_of(0)")) == []


def test_invalid_the_driver_asked_about_a_rank_id_fails_by_its_operand():
    # a rank id may name a device this node does not have
    assert _codes(_PROBED.replace("INDEX", "dist.get_rank()")) == [("CSL101", 32)]


def test_invalid_a_probed_function_the_presets_do_not_know_still_fails_on_one_rank():
    source = _PROBED.replace('"_get_nvml_device_index"', '"_lazy_probe"').replace("INDEX", "index_of(0)")
    assert _codes(source) == [("CSL101", 32)]


def test_invalid_a_local_bound_otherwise_too_is_no_probe():
    source = _PROBED.replace("        if index_of is None:\n            return None\n",
                             "        if index_of is None:\n            index_of = make_index\n")
    assert _codes(source.replace("INDEX", "index_of(0)")) == [("CSL101", 32)]


def test_valid_properties_of_this_ranks_own_device_fail_alike():
    assert _codes(_GUARDED.replace("QUERY", "torch.cuda.get_device_properties(torch.cuda.current_device())")) == []

