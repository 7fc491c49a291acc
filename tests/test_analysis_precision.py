"""What the analysis must not call rank-local (issue 14), each with the shape
it must still report beside it: receivers resolved by their type, stage
predicates inside a stage's groups, exceptions raised alike on every rank,
complementary role arms and group membership."""

import textwrap

from cslint.api import check_paths, check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


# -- (a) method calls resolved by the receiver's type ------------------------------------

RECEIVERS = """
    import socket
    import threading
    import zmq
    import torch.distributed as dist

    class Peer:
        def connect(self, t):
            dist.all_reduce(t)

    class Maker:
        def make(self) -> "Peer":
            return Peer()

    def rank_local():
        return dist.get_rank() == 0

    def plain_socket(addr):
        sock = socket.socket()
        if rank_local():
            sock.connect(addr)                 # a socket, never Peer.connect

    def zmq_socket(addr):
        ctx = zmq.Context()
        s = ctx.socket(zmq.PUSH)
        if rank_local():
            s.connect(addr)                    # a library object's method returns a library object

    def constructed(t):
        p = Peer()
        if rank_local():
            p.connect(t)                       # reported, the receiver is a Peer

    def annotated(t, m: Maker):
        if rank_local():
            m.make().connect(t)                # reported, through the return annotation

    class Holder:
        _ctx = zmq.Context()

        def __init__(self):
            self.sock = self._ctx.socket(zmq.PUSH)
            self.lock = threading.Lock()
            self.peer = Peer()

        def run(self, t):
            if rank_local():
                self.sock.connect(t)           # a field made by a library object
            if rank_local():
                self.peer.connect(t)           # reported, a field holding a Peer
"""


def test_library_receivers_are_never_project_classes():
    assert _lines(RECEIVERS) == [32, 36, 50]


def test_a_factory_is_typed_by_what_it_returns():
    lines = _lines("""
        import torch.distributed as dist

        class Benchmark:
            def propose(self, t):
                dist.all_reduce(t)

        class LocalDrafter:
            def __init__(self, n):
                self.n = n

        def make_drafter(n):
            from collections import OrderedDict
            return LocalDrafter(n)

        class Runner:
            def __init__(self, n):
                self.drafter = make_drafter(n)

            def step(self, t):
                if dist.get_rank() == 0:
                    self.drafter.propose(t)        # the drafter is a LocalDrafter
                if dist.get_rank() == 0:
                    Benchmark().propose(t)         # reported
    """)
    assert lines == [24]


def test_same_named_modules_of_namespace_folders_are_not_merged(tmp_path):
    # pkg/a and pkg/b hold no __init__.py: both util modules are pkg.a.util and
    # pkg.b.util, not one module "util" whose functions overwrite each other
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(tmp_path / "pkg" / "a" / "util.py", """
        def sync_all(t):
            return t
    """)
    _write(tmp_path / "pkg" / "b" / "util.py", """
        import torch.distributed as dist

        def sync_all(t):
            dist.all_reduce(t)
    """)
    _write(tmp_path / "pkg" / "a" / "run_a.py", """
        import torch.distributed as dist
        from .util import sync_all

        def step(t):
            if dist.get_rank() == 0:
                sync_all(t)
    """)
    _write(tmp_path / "pkg" / "b" / "run_b.py", """
        import torch.distributed as dist
        from .util import sync_all

        def step(t):
            if dist.get_rank() == 0:
                sync_all(t)
    """)
    result = check_paths([str(tmp_path / "pkg")], report="per-site")
    got = [(f.path.split("pkg/")[-1], f.line) for f in result.findings]
    assert got == [("b/run_b.py", 7)]
    assert all("a/util.py" not in link.path for link in result.findings[0].chain)


# -- (b) stage predicates are uniform inside the groups of one stage ----------------------


def test_a_stage_predicate_does_not_endanger_a_tensor_parallel_collective():
    assert _lines("""
        import torch.distributed as dist
        from vllm.distributed import get_pp_group, get_tp_group, tensor_model_parallel_all_reduce

        def last_stage_only(x):
            if not get_pp_group().is_last_rank:
                return x
            return tensor_model_parallel_all_reduce(x)       # the TP group is inside one stage

        def global_rank_of_a_coordinator(x):
            if get_pp_group().rank == 0:                     # `rank` of a coordinator is the global rank
                get_tp_group().all_reduce(x)                 # reported

        def stage_guard_over_the_stage_group(x):
            if get_pp_group().is_first_rank:
                get_pp_group().broadcast(x)                  # reported, the PP group spans the stages

        def rank_asked_of_the_pp_group(x, pp_group):
            if pp_group.rank() == 0:
                dist.all_reduce(x, group=get_tp_group().device_group)
            if dist.get_rank(group=get_pp_group().device_group) == 0:
                dist.all_reduce(x, group=get_tp_group().device_group)
            if dist.get_rank() == 0:
                dist.all_reduce(x, group=get_tp_group().device_group)   # reported
    """) == [12, 16, 24]


def test_deepspeed_stage_ids_differ_along_pipeline_stages_only():
    assert _lines("""
        from deepspeed import comm as dist

        class Engine:
            def __init__(self, grid):
                self.grid = grid
                self.stage_id = grid.get_stage_id()

            def reduce(self, t):
                if self.is_last_stage():
                    dist.all_reduce(t, group=self.grid.get_data_parallel_group())
                if self.stage_id == 0:
                    dist.all_reduce(t, group=self.grid.get_pipe_parallel_group())      # reported
    """) == [13]


def test_deepspeed_slice_parallel_group_is_the_tensor_slicing_group_of_one_stage():
    # DeepSpeed's pipeline grid names its Megatron-style tensor-slicing group
    # "slice parallel": the model-parallel ranks of one stage, so a stage
    # predicate agrees within it, and the slice rank differs along it alone
    assert _lines("""
        from deepspeed import comm as dist

        class Engine:
            def __init__(self, grid):
                self.grid = grid

            def gather(self, t):
                if not self.is_first_stage():
                    dist.all_reduce(t, group=self.grid.get_slice_parallel_group())
                if self.grid.get_slice_parallel_rank() == 0:
                    dist.all_reduce(t, group=self.grid.get_data_parallel_group())
                if self.grid.get_slice_parallel_rank() == 0:
                    dist.all_reduce(t, group=self.grid.get_slice_parallel_group())   # reported
    """) == [14]


# -- (c) exceptions raised alike on every rank --------------------------------------------


def test_uniform_exceptions_are_not_rank_local():
    assert _lines("""
        import importlib
        import torch
        import torch.distributed as dist

        def backend_name(backend):
            try:
                return backend.get_name()
            except NotImplementedError:
                return None

        def warm(backend, t):
            if backend_name(backend) is None:
                return
            dist.all_reduce(t)

        def load_plugin(t):
            try:
                importlib.import_module("fastcomm")
            except ImportError:
                return
            dist.all_reduce(t)

        def drain(it, t):
            try:
                while True:
                    item = next(it)
                    dist.broadcast(item, src=0)
            except StopIteration:
                pass

        def probe(t):
            try:
                buf = torch.empty(1 << 30, device="cuda")
            except RuntimeError:
                return
            dist.all_reduce(buf)                     # reported, out of memory on one rank

        def read_cfg(path, t):
            try:
                data = open(path).read()
            except ValueError:
                return
            dist.all_reduce(t)                       # reported, what a local file holds
    """) == [37, 44]


def test_a_class_known_only_at_run_time_beside_a_uniform_one_may_be_rank_local():
    # ``except (ImportError, errors.pick()):`` may catch an OSError of this rank's disk: it still counts
    assert _lines("""
        import importlib
        import torch.distributed as dist

        def load_plugin(t, errors):
            try:
                importlib.import_module("fastcomm")
            except (ImportError, errors.pick()):
                return
            dist.all_reduce(t)
    """) == [10]


def test_a_uniform_exception_from_rank_local_data_still_counts():
    assert _lines("""
        import torch.distributed as dist

        def parse(values, t):
            try:
                n = int(values[dist.get_rank()])
            except ValueError:
                return
            dist.all_reduce(t)
    """) == [9]


# -- (d) complementary role arms ------------------------------------------------------------

ROLES = """
    import pickle
    import torch
    import torch.distributed as dist

    def broadcast_obj(data, rank, group, src=0):
        if rank == src:
            if data is None:
                dist.broadcast(torch.tensor([0]), src=src, group=group)
            else:
                payload = torch.ByteTensor(list(pickle.dumps(data)))
                dist.broadcast(torch.tensor([payload.numel()]), src=src, group=group)
                dist.broadcast(payload, src=src, group=group)
            return data
        size = torch.tensor([0])
        dist.broadcast(size, src=src, group=group)
        if size.item() == 0:
            return None
        payload = torch.empty(size.item(), dtype=torch.uint8)
        dist.broadcast(payload, src=src, group=group)
        return pickle.loads(payload.numpy().tobytes())

    def send_dict(tensors, group, src=0):
        if dist.get_rank(group) == src:
            meta = [[(k, t.shape) for k, t in tensors.items()]]
            dist.broadcast_object_list(meta, src=src, group=group)
            for t in tensors.values():
                dist.broadcast(t, src=src, group=group)
        else:
            meta = [None]
            dist.broadcast_object_list(meta, src=src, group=group)
            for _k, shape in meta[0]:
                dist.broadcast(torch.empty(shape), src=src, group=group)

    def unequal(x, group):
        if dist.get_rank(group) == 0:
            dist.broadcast(x, src=0, group=group)           # reported
            dist.broadcast(x, src=0, group=group)           # reported
        else:
            dist.broadcast(x, src=0, group=group)           # reported

    def role_of():
        rank = dist.get_rank()
        return "leader" if rank == 0 else ("member" if rank < 4 else "idle")

    def exchange(x, group):
        role = role_of()
        if role == "leader":
            dist.broadcast(x, src=0, group=group)           # reported, idle ranks may be in the group
        elif role == "member":
            dist.broadcast(x, src=0, group=group)           # reported

    def exchange_every_role(x, group):
        role = role_of()
        if role == "leader":
            dist.broadcast(x, src=0, group=group)
        elif role == "member":
            dist.broadcast(x, src=0, group=group)
        else:
            dist.broadcast(x, src=0, group=group)

    def exchange_world(x):
        role = role_of()
        if role == "leader":
            dist.broadcast(x, src=0)                        # reported, idle ranks are in the world
        elif role == "member":
            dist.broadcast(x, src=0)                        # reported

    def send_if_any(x, pp_group, dp_group, n):
        if dist.get_rank(pp_group) == 0:
            dist.all_reduce(x, group=dp_group)              # reported, the others issue nothing over dp_group
            if n > 0:
                dist.broadcast(x, src=0, group=pp_group)    # reported, n == 0 sends nothing
                dist.broadcast(x, src=0, group=pp_group)    # reported
                return
        else:
            dist.broadcast(x, src=0, group=pp_group)        # reported, the receivers always wait
            dist.broadcast(x, src=0, group=pp_group)        # reported

    def reduce_by_kind(x, group, other_group):
        if dist.get_rank(group) == 0:
            dist.all_reduce(x, group=group)                 # reported
            return
        dist.all_reduce(x, group=other_group)               # reported, the other group may be this one

    def send_other_sequence(x, group, n):
        if dist.get_rank(group) == 0:
            if n > 0:
                dist.broadcast(x, src=0, group=group)       # reported
                return
            dist.all_reduce(x, group=group)                 # reported
        else:
            dist.broadcast(x, src=0, group=group)           # reported
"""


def test_complementary_role_arms_issue_matching_collectives():
    assert _lines(ROLES) == [37, 38, 40, 49, 51, 65, 67, 71, 73, 74, 77, 78, 82, 84, 89, 91, 93]


ROLE_SIDES = """
    import pickle
    import torch
    import torch.distributed as dist

    def materialise(raw):
        return [raw]

    def report_error(error):
        return {"error": str(error)}

    def entry_broadcast(raw, group, world):
        if dist.get_rank(group) == 0:
            try:
                result = materialise(raw)
            except ValueError as error:
                result = report_error(error)
            if world > 1:
                box = [result]
                dist.broadcast_object_list(box, src=0, group=group)
                result = box[0]
        else:
            if world > 1:
                box = [None]
                dist.broadcast_object_list(box, src=0, group=group)
                result = box[0]
            else:
                result = materialise(raw)
        return result

    def receiver_reduces(x, group, world):
        if dist.get_rank(group) == 0:
            dist.broadcast(x, src=0, group=group)               # reported
        else:
            if world > 1:
                dist.all_reduce(x, group=group)                 # reported
            else:
                x = x * 2
        return x

    def receiver_picks_by_rank(x, group):
        if dist.get_rank(group) == 0:
            dist.broadcast(x, src=0, group=group)               # reported, the even receivers skip it
        else:
            if dist.get_rank(group) % 2:
                dist.broadcast(x, src=0, group=group)           # reported
            else:
                x = x * 2
        return x

    def handler_barrier(raw, group):
        if dist.get_rank(group) == 0:
            try:
                result = materialise(raw)
            except ValueError:
                dist.barrier(group=group)                       # reported
                result = None
            dist.broadcast_object_list([result], src=0, group=group)   # reported
        else:
            box = [None]
            dist.broadcast_object_list(box, src=0, group=group)       # reported
            result = box[0]
        return result
"""


def test_an_else_holding_only_an_if_is_one_roles_side():
    """``else: if world > 1: recv else: make locally`` reads like an ``elif`` chain whose last arm
    issues nothing; read as the test's two sides, the receiver issues the sender's broadcast on the
    paths its own test chooses.  A receiver that issues another collective, or chooses by rank, is
    still reported; a handler runs after any part of its ``try`` body, so a handler that issues a
    collective of its own makes the sender's side differ."""
    assert _lines(ROLE_SIDES) == [33, 36, 43, 46, 56, 58, 61]


# -- (d2) elements of a tuple a call returns --------------------------------------------------

TUPLE_ELEMENTS = """
    import torch
    import torch.distributed as dist


    def local_count():
        return dist.get_rank() * 3


    def synced_counts():
        mine = local_count()
        total = torch.tensor([mine])
        dist.all_reduce(total, op=dist.ReduceOp.MIN)
        return mine, int(total.item())


    def swapped(first, second):
        return second, first


    def kept_whole():
        mine = local_count()
        total = torch.tensor([mine])
        dist.all_reduce(total, op=dist.ReduceOp.MIN)
        pair = (mine, int(total.item()))
        return pair


    def returned_under_rank_test():
        total = torch.tensor([1])
        dist.all_reduce(total, op=dist.ReduceOp.MIN)
        if dist.get_rank() == 0:
            return 1, int(total.item())
        return 0, int(total.item())


    def unpacked(x):
        mine, agreed = synced_counts()
        if agreed > 0:
            dist.all_reduce(x)
        if mine > 0:
            dist.all_reduce(x)                      # reported


    def indexed(x):
        counts = synced_counts()
        if counts[1] > 0:
            dist.all_reduce(x)
        if synced_counts()[0] > 0:
            dist.all_reduce(x)                      # reported


    def through_parameters(x, size):
        rank_first, size_second = swapped(size, dist.get_rank())
        if size_second:
            dist.all_reduce(x)
        if rank_first:
            dist.all_reduce(x)                      # reported


    def whole_results(x):
        _, agreed = kept_whole()
        if agreed:
            dist.all_reduce(x)                      # reported: the function returns a name, not a tuple written out
        _, agreed = returned_under_rank_test()
        if agreed:
            dist.all_reduce(x)                      # whichever return runs, the element is the one all-reduce's result
        _, chosen = flags_under_rank_test()
        if chosen:
            dist.all_reduce(x)                      # reported: which return runs differs between ranks


    def flags_under_rank_test():
        if dist.get_rank() == 0:
            return 1, 0
        return 0, 1
"""


def test_an_element_of_a_returned_tuple_is_read_alone():
    """``mine, agreed = synced_counts()``: each name holds its own element of what the function
    returns when every return writes out a tuple (``return mine, agreed``), parameters bound per
    position; a function that returns a name, or whose returns differ between ranks, keeps its
    whole result in every element, except an element made of one group's collective results,
    the same whichever return hands it on (resulttransfer.agreed_group)."""
    assert _lines(TUPLE_ELEMENTS) == [42, 50, 58, 64, 70]


# -- (e) membership of the collective's own group -------------------------------------------


def test_membership_in_the_collectives_group_is_uniform_within_it():
    assert _lines("""
        import torch.distributed as dist

        class Coordinator:
            def __init__(self, group_ranks, backend):
                self.rank = dist.get_rank()
                self.device_group = None
                for ranks in group_ranks:
                    device_group = dist.new_group(ranks, backend=backend)
                    if self.rank in ranks:
                        self.ranks = ranks
                        self.device_group = device_group

            def all_reduce(self, t):
                if len(self.ranks) < 2:
                    return t
                dist.all_reduce(t, group=self.device_group)

        def _rank_not_in_group(group):
            return group is None

        def bcast(t, groups):
            group = groups.get(dist.get_rank())
            if _rank_not_in_group(group):
                return
            group.broadcast(t)

        def gather_if_member(t, groups):
            group = groups.get(dist.get_rank())
            if group is None:
                return
            dist.all_gather([t], t, group=group)

        def other_group(t, groups, world):
            group = groups.get(dist.get_rank())
            if group is None:
                return
            dist.all_gather([t], t, group=world)                  # reported, another group
    """) == [38]


def test_membership_in_the_collectives_group_is_dropped_from_a_test_too_long_to_show_whole():
    # the condition's text is cut at 120 characters; the operands are read off the test itself
    lines = _lines("""
        import torch.distributed as dist

        def members_only(t, expert_parallel_process_group):
            if dist.get_world_size(expert_parallel_process_group) > 1 and dist.get_rank() in dist.get_process_group_ranks(expert_parallel_process_group):
                dist.all_reduce(t, group=expert_parallel_process_group)

        def other_group(t, expert_parallel_process_group, world_process_group):
            if dist.get_world_size(expert_parallel_process_group) > 1 and dist.get_rank() in dist.get_process_group_ranks(expert_parallel_process_group):
                dist.all_reduce(t, group=world_process_group)                # reported, another group
    """)
    assert lines == [10]


def test_a_failure_before_a_rendezvous_leaves_no_peer_past_it():
    assert _lines("""
        import torch.distributed as dist

        def start(store, use_store):
            try:
                store.connect()
                if use_store:
                    dist.init_process_group("gloo", store=store)
                else:
                    dist.init_process_group("gloo")
                dist.barrier()
            except Exception:
                return

        def start_then_read(path):
            try:
                dist.init_process_group("gloo")
                open(path).read()
                dist.barrier()                  # reported, the read fails on one rank after the group is made
            except Exception:
                return

        def maybe_start(store, use_store):
            try:
                store.connect()
                if use_store:
                    dist.init_process_group("gloo", store=store)
                dist.barrier()                  # reported, without the store no group is made here
            except Exception:
                return
    """) == [19, 28]


def test_a_handler_that_keeps_one_message_is_judged_by_that_message():
    assert _lines("""
        import torch
        import torch.distributed as dist

        UNSUPPORTED = "backend does not support splitting"

        def split_or_fall_back(shape):
            try:
                mesh = torch.cuda.make_mesh(shape)
            except RuntimeError as exc:
                if UNSUPPORTED not in str(exc):
                    raise
                dist.new_group(list(range(4)))
                return None
            return mesh

        def sizes_until_oom(sizes):
            for size in sizes:
                try:
                    buf = torch.ones(size)
                except RuntimeError as e:
                    if "out of memory" in str(e):
                        break
                    else:
                        raise e
                dist.all_reduce(buf)            # reported, one rank runs out of memory first
    """) == [26]


def test_a_rank_asked_for_given_coordinates_is_a_table_lookup():
    assert _lines("""
        import torch.distributed as dist

        def first_of_group(t, group, topo, stage):
            src = dist.get_global_rank(group, 0)
            owner = topo.get_rank(pipe=stage, data=0)
            if src == owner:
                dist.broadcast(t, src=src, group=group)

        def own(t, group):
            if dist.get_rank(group) == 0:
                dist.all_reduce(t, group=group)        # reported
            if dist.get_rank(group=group) == 1:
                dist.all_reduce(t, group=group)        # reported
    """) == [12, 14]


def test_whether_a_rank_is_set_is_the_same_on_every_rank():
    assert _lines("""
        import os
        import torch.distributed as dist

        def launched(t, owners):
            local_rank = int(os.environ.get("LOCAL_RANK", -1))
            if local_rank != -1:
                dist.all_reduce(t)
            if os.environ.get("RANK") is None:
                return
            dist.all_reduce(t)
            if owners.get(dist.get_rank(), -1) != -1:
                dist.all_reduce(t)                  # reported, looked up with the rank
            if local_rank == 0:
                dist.all_reduce(t)                  # reported
    """) == [13, 15]


def test_a_progress_bar_on_one_rank_yields_the_same_elements():
    assert _lines("""
        import torch.distributed as dist
        from tqdm import tqdm

        def capture(sizes, t):
            if dist.get_rank() == 0:
                sizes = tqdm(sizes, desc="capturing")
            for size in sizes:
                dist.all_reduce(t)

        def capture_reversed(sizes, t):
            order = tqdm(list(reversed(sizes))) if dist.get_rank() == 0 else reversed(sizes)
            for size in order:
                dist.all_reduce(t)

        def capture_some(sizes, t):
            order = tqdm(sizes[:2]) if dist.get_rank() == 0 else sizes
            for size in order:
                dist.all_reduce(t)                  # reported, rank 0 takes two sizes only
    """) == [19]


def test_an_optional_rank_parameter_is_what_the_callers_pass():
    assert _lines("""
        import torch.distributed as dist

        def reduce_bucket(t, group, rank=None):
            if rank == 0:
                dist.all_reduce(t, group=group)
            else:
                dist.reduce(t, dst=rank, group=group)

        def reduce_all(t, group):
            reduce_bucket(t, group)

        def worker(rank, t):
            if rank == 0:
                dist.all_reduce(t)              # reported
    """) == [15]



def test_a_rank_parameter_the_tree_passes_is_what_the_callers_pass():
    # A source rank a loop hands over is the same on every rank; the
    # caller's own rank still differs, and a function the tree never calls
    # (a spawned worker) takes its rank parameter for this process's rank.
    assert _lines("""
        import torch.distributed as dist


        class Optimizer:
            def __init__(self, params, group):
                self.params = params
                self.group = group
                self.rank = dist.get_rank(group)

            def _broadcast_from(self, rank):
                for p in self.params[rank]:
                    dist.broadcast(p, src=rank, group=self.group)

            def sync(self):
                for rank in range(dist.get_world_size(self.group)):
                    self._broadcast_from(rank)

            def _reduce_to(self, rank):
                if rank == 0:
                    dist.all_reduce(self.params[0], group=self.group)      # reported

            def reduce_own(self):
                self._reduce_to(self.rank)


        def worker(rank, t):
            if rank == 0:
                dist.all_reduce(t)                                         # reported


        def launch(t):
            import torch.multiprocessing as mp
            mp.spawn(worker, args=(t,), nprocs=2)
    """) == [21, 29]

def test_a_comprehension_variable_is_bound_inside_the_comprehension():
    assert _lines("""
        import torch.distributed as dist

        def global_ranks(group):
            return [dist.get_global_rank(group, rank) for rank in range(dist.get_world_size(group=group))]

        def reduce_if_spanned(t, group, mp_group):
            if not set(global_ranks(group)).issuperset(global_ranks(mp_group)):
                dist.all_reduce(t, group=mp_group)

        def own_ranks(t, groups):
            mine = [dist.get_rank(g) for g in groups]
            if mine[0] == 0:
                dist.all_reduce(t)                 # reported
    """) == [14]


# -- (f) arms of an if/else that make the same call or assignment ---------------------------


def test_arms_that_make_the_same_call_or_assignment_decide_nothing_about_it():
    # Each rank makes the call (or the assignment from the same call) on one
    # side or the other; a different callee, condition, positional argument
    # or a missing else still differs.
    assert _lines("""
        import torch.distributed as dist

        class BothArms:
            def __init__(self):
                self.state = None

            def dummy_run(self, n, tune=False):
                self.state = n

            def step(self, x):
                if self.state is None:
                    dist.all_reduce(x)

        class OneArm:
            def __init__(self):
                self.state = None

            def dummy_run(self, n, tune=False):
                self.state = n

            def step(self, x):
                if self.state is None:
                    dist.all_reduce(x)                           # reported

        class ElifArm:
            def __init__(self):
                self.state = None

            def dummy_run(self, n, tune=False):
                self.state = n

            def step(self, x):
                if self.state is None:
                    dist.all_reduce(x)                           # reported


        def warmup(runner, n, context=None):
            return n > 0


        def tune(runner, n):
            return n > 1


        def same_call_both_arms(x, n):
            runner = BothArms()
            is_leader = dist.get_rank() == 0
            if is_leader:
                with open("/tmp/log"):
                    runner.dummy_run(n, tune=True)
            else:
                runner.dummy_run(n)
            runner.step(x)


        def call_on_one_arm(x, n):
            runner = OneArm()
            if dist.get_rank() == 0:
                runner.dummy_run(n)
            else:
                print(n)
            runner.step(x)


        def same_value_both_arms(runner, x, n):
            done = True
            if dist.get_rank() == 0:
                if n > 4:
                    done = warmup(runner, n, context="tune")
            else:
                if n > 4:
                    done = warmup(runner, n)
            if not done:
                return
            dist.all_reduce(x)


        def other_callee_other_arm(runner, x, n):
            done = True
            if dist.get_rank() == 0:
                done = warmup(runner, n)
            else:
                done = tune(runner, n)
            if not done:
                return
            dist.all_reduce(x)                               # reported


        def other_condition_other_arm(runner, x, n, m):
            done = True
            if dist.get_rank() == 0:
                if n > 4:
                    done = warmup(runner, n)
            else:
                if m > 4:
                    done = warmup(runner, n)
            if not done:
                return
            dist.all_reduce(x)                               # reported


        def elif_without_else(x, n, m):
            runner = ElifArm()
            if dist.get_rank() == 0:
                runner.dummy_run(n)
            elif m > 4:
                runner.dummy_run(n)
            runner.step(x)


        def other_argument_other_arm(runner, x, n):
            if dist.get_rank() == 0:
                done = warmup(runner, n + 1)
            else:
                done = warmup(runner, n)
            if not done:
                return
            dist.all_reduce(x)                               # reported
    """) == [24, 35, 87, 100, 119]



def test_a_rank_finding_its_own_part_of_a_partition_writes_on_every_rank():
    # `if rank in ranks:` in a loop over the parts: every rank takes it once,
    # so what it writes there is there on every rank (only not the same);
    # which part it found, and a membership outside such a loop, still differ.
    assert _lines("""
        import torch.distributed as dist


        def make_group(ranks):
            return tuple(ranks)


        class Grid:
            def __init__(self, groups, writers):
                self.rank = dist.get_rank()
                self.group = None
                self.index = -1
                self.writer = None
                for index, ranks in enumerate(groups):
                    group = dist.new_group(sorted(ranks))
                    if self.rank in ranks:
                        self.group = group
                        self.index = index
                if self.rank in writers:
                    self.writer = object()

            def reduce_if_grouped(self, t):
                if self.group is not None:
                    dist.all_reduce(t)

            def reduce_on_first_part(self, t):
                if self.index == 0:
                    dist.all_reduce(t)                                     # reported

            def reduce_if_writer(self, t):
                if self.writer is not None:
                    dist.all_reduce(t)                                     # reported


        class Tables:
            def __init__(self, parts):
                rank = dist.get_rank()
                self.mine = None
                for part in parts:
                    if rank in part:
                        self.mine = make_group(part)

            def reduce_if_placed(self, t):
                if self.mine is not None:
                    dist.all_reduce(t)

            def reduce_on_own_table(self, t):
                if self.mine == (0, 1):
                    dist.all_reduce(t)                                     # reported


        class Skipper:
            def __init__(self, parts):
                rank = dist.get_rank()
                self.mine = None
                for part in parts:
                    if rank not in part:
                        continue
                    self.mine = list(part)

            def reduce_if_placed(self, t):
                if self.mine is not None:
                    dist.all_reduce(t)
    """) == [29, 33, 50]


def test_an_instance_made_by_dunder_new_or_cls_is_of_that_class():
    # ``Queue.__new__(Queue)`` (an alternative constructor that skips
    # ``__init__``) and ``cls()`` in a classmethod make a Queue: its fields
    # hold what Queue's methods put there (a zmq socket), not whatever
    # method of that name the tree has
    lines = _lines("""
        import zmq
        import torch.distributed as dist

        class Peers:
            def connect(self, t):
                dist.all_reduce(t)

        class Queue:
            def __init__(self):
                self.sock = zmq.Context().socket(zmq.PUB)
                self.peers = Peers()

            @staticmethod
            def attach(addr):
                self = Queue.__new__(Queue)
                self.sock = zmq.Context().socket(zmq.SUB)
                self.sock.connect(addr)
                return self

            @classmethod
            def attach_peers(cls, t):
                queue = object.__new__(cls)
                queue.peers = Peers()
                queue.peers.connect(t)

            @classmethod
            def reopen(cls, addr):
                queue = cls()
                queue.sock.connect(addr)

        def open_queue(addr, t):
            if dist.get_rank() == 0:
                Queue.attach(addr)                 # a socket's connect, no collective
            if dist.get_rank() == 0:
                Queue.attach_peers(t)              # reported, a field holding Peers
            if dist.get_rank() == 0:
                Queue.reopen(addr)                 # cls() is a Queue: a socket's connect
    """)
    assert lines == [36]



# -- (g) random draws: numbers, or arrays of the size they are asked for ---------------------


def test_a_random_draw_differs_in_value_not_in_size():
    lines = _lines("""
        import random
        import numpy as np
        import torch.distributed as dist

        def profile(n, x):
            batches = []
            for i in range(n):
                batches.append(np.random.randint(0, 100, size=8))
            for batch in batches:
                dist.all_reduce(batch)             # as many batches on every rank
            tags = {}
            tags[random.getrandbits(32)] = x
            if tags:
                dist.barrier()                     # one entry whatever its key
            if random.random() < 0.5:
                dist.barrier()                     # reported, a random test
            for _ in range(random.randint(1, 3)):
                dist.barrier()                     # reported, a random count
    """)
    assert lines == [17, 19]


# -- (h) a helper that agrees its argument in place -------------------------------------------


def test_a_helper_that_reduces_its_argument_in_place_agrees_the_callers_object():
    lines = _lines("""
        import torch
        import torch.distributed as dist

        def reduce_max(t, group=None):
            if dist.get_world_size(group) == 1:
                return
            with torch.no_grad():
                dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)

        def outer(t):
            reduce_max(t)

        def reduce_copy(t):
            t = t.clone()
            dist.all_reduce(t)
            return t

        def reduce_some(t, flag):
            if flag:
                dist.all_reduce(t)

        def reduce_late(t, skip):
            if skip:
                return
            dist.all_reduce(t)

        class Counter:
            def _sync(self, data):
                dist.all_reduce(data)

            def step(self, rank):
                t = torch.tensor([rank])
                self._sync(t)
                if t.item() > 0:
                    dist.barrier()                 # agreed by the helper
                u = torch.tensor([rank])
                reduce_max(group=None, t=u)
                if u.item() > 0:
                    dist.barrier()                 # agreed, passed by keyword
                v = torch.tensor([rank])
                outer(v)
                if v.item() > 0:
                    dist.barrier()                 # agreed through two helpers
                w = torch.tensor([rank])
                reduce_copy(w)
                if w.item() > 0:
                    dist.barrier()                 # reported: the helper reduced a copy
                x = torch.tensor([rank])
                reduce_some(x, self.enabled)
                if x.item() > 0:
                    dist.barrier()                 # reported: reduced on one path only
                y = torch.tensor([rank])
                reduce_late(y, False)
                if y.item() > 0:
                    dist.barrier()                 # reported: it may return first
    """)
    assert lines == [48, 52, 56]




def test_the_way_past_a_collective_that_only_a_group_of_one_rank_skips_agrees_within_that_group():
    lines = _lines("""
        import torch.distributed as dist
        from mylib import get_tp_group, get_tp_size, get_ring_size

        def share(x):
            box = [x]
            dist.broadcast_object_list(box, src=0, group=get_tp_group())
            return box[0]

        def step(reqs, flag):
            if dist.get_rank() == 0:
                reqs = list(reqs)
            else:
                reqs = None
            mine = ours = reqs
            if get_tp_size() != 1:
                reqs = share(reqs)
            if not reqs:
                return
            dist.barrier(group=get_tp_group())     # agreed, or a TP group of one rank
            if flag:
                mine = share(mine)
            if not mine:
                return
            dist.barrier(group=get_tp_group())     # reported: any test may skip the share
            if get_ring_size() > 1:
                ours = share(ours)
            if not ours:
                return
            dist.barrier(group=get_tp_group())     # reported: a ring of one rank says nothing of TP
    """)
    assert lines == [25, 27, 30]


def test_a_loop_binds_its_target_anew_for_each_iteration():
    lines = _lines("""
        import time
        import torch.distributed as dist

        def ready(queue, group):
            done = set()
            start = time.perf_counter()
            while time.perf_counter() - start < 0.1:
                for i in queue:
                    done.add(i)
            gathered = [None] * dist.get_world_size(group)
            dist.all_gather_object(gathered, done, group=group)
            agreed = set.intersection(*gathered)
            picked = []
            for i in agreed:                       # `i` is an element of the agreed set, not the loop's above
                picked.append(queue[i])
            return picked

        def local_pick(queue, group):
            done = set()
            start = time.perf_counter()
            while time.perf_counter() - start < 0.1:
                for i in queue:
                    done.add(i)
            picked = []
            for i in done:
                picked.append(queue[i])
            return picked

        def after_no_trip(items, group):
            i = dist.get_rank(group)
            for i in items:
                pass
            return i

        def step(queue, items, group):
            if ready(queue, group):
                dist.barrier(group=group)          # agreed
            if local_pick(queue, group):
                dist.barrier(group=group)          # reported: picked from this rank's own set
            if after_no_trip(items, group):
                dist.barrier(group=group)          # reported: with no trip `i` is still the rank
    """)
    assert lines == [40, 42]


def test_a_field_set_to_a_groups_size_is_that_size():
    lines = _lines("""
        import time
        import torch.distributed as dist

        class Gate:
            def __init__(self, owner):
                self.sync_group = owner.dp_tp_cpu_group
                self.sync_size = owner.dp_tp_group.world_size
                self.batch_size = owner.dp_tp_group.world_size

            def resize(self, items):
                self.batch_size = len(items)

            def agreed(self):
                local = time.perf_counter() > 1.0
                if self.sync_size == 1:
                    flag = local                   # a group of one rank agrees with itself
                else:
                    out = [None] * self.sync_size
                    dist.all_gather_object(out, local, group=self.sync_group)
                    flag = all(out)
                if flag:
                    dist.barrier(group=self.sync_group)

            def mixed(self):
                local = time.perf_counter() > 1.0
                if self.batch_size == 1:
                    flag = local
                else:
                    out = [None] * self.batch_size
                    dist.all_gather_object(out, local, group=self.sync_group)
                    flag = all(out)
                if flag:
                    dist.barrier(group=self.sync_group)    # reported: also set from a list's length
    """)
    assert lines == [34]


def test_a_list_handed_back_where_it_is_empty_or_its_group_has_one_rank_holds_no_element():
    lines = _lines("""
        import random
        from typing import List
        import torch
        import torch.distributed as dist

        def reduce_flags(flags: List[int], group) -> List[int]:
            if not flags or dist.get_world_size(group) == 1:
                return flags                       # nothing to disagree on
            t = torch.tensor(flags)
            dist.all_reduce(t, group=group)
            return t.tolist()

        def reduce_unless(flags: List[int], group, skip) -> List[int]:
            if not flags or skip:
                return flags
            t = torch.tensor(flags)
            dist.all_reduce(t, group=group)
            return t.tolist()

        def reduce_batch(batch, group):
            if not batch:
                return batch                       # an object's truth may be its own
            t = torch.tensor(batch.flags)
            dist.all_reduce(t, group=group)        # reported: the batch's truth reads what it holds
            return t.tolist()

        def step(pollers, group, skip):
            polls = [0 if random.random() < 0.1 else 1 for p in pollers]
            if reduce_flags(polls, group)[0] == 1:
                dist.barrier(group=group)          # agreed
            if reduce_unless(polls, group, skip)[0] == 1:
                dist.barrier(group=group)          # reported: skipped with its elements
            batch = Batch(polls)
            if reduce_batch(batch, group)[0] == 1:
                dist.barrier(group=group)          # reported
    """)
    assert lines == [25, 33, 36]


def test_a_conditional_between_scalars_of_one_type_decides_only_their_contents():
    lines = _lines("""
        import random
        import torch.distributed as dist

        def polled(pollers, group):
            polls = [int(0) if random.random() < 0.1 else int(p.poll()) for p in pollers]
            if not polls:
                return                             # a list of ints either way
            dist.barrier(group=group)

        def mixed(pollers, group):
            polls = [None if random.random() < 0.1 else int(p.poll()) for p in pollers]
            if polls[0] is None:
                return
            dist.barrier(group=group)              # reported: None or a number

        def counted(pollers, group):
            polls = [int(0) if random.random() < 0.1 else int(p.poll()) for p in pollers]
            if polls[0] == 0:
                return
            dist.barrier(group=group)              # reported: the number itself
    """)
    assert lines == [15, 21]
# -- (i) what only the ranks of one arm read (issue 15, the field's negatives) ----------------


def test_what_an_arm_binds_for_its_own_reads_does_not_differ_by_its_test():
    # A sender arm that returns: every rank reading what it binds took it (one source rank), so the
    # test does not make the skip of an empty tensor differ; the receivers' loop is over what they
    # received.  A name the arm binds and only the arm reads, under a test of membership in the
    # collective's own group, is read by members alone.  A name read after the arms merge, or a
    # test inside a loop, still differs.
    assert _lines("""
        import torch
        import torch.distributed as dist

        class Coordinator:
            def __init__(self, group, rank_in_group):
                self.device_group = group
                self.rank_in_group = rank_in_group

            def broadcast_tensors(self, tensors=None, src=0):
                if self.rank_in_group == src:
                    dist.broadcast_object_list([[t.shape for t in tensors]], src=src, group=self.device_group)
                    for tensor in tensors:
                        if tensor.numel() == 0:
                            continue
                        dist.broadcast(tensor, src=src, group=self.device_group)
                    return tensors
                box = [None]
                dist.broadcast_object_list(box, src=src, group=self.device_group)
                received = []
                for shape in box[0]:
                    tensor = torch.empty(shape)
                    received.append(tensor)
                    if tensor.numel() == 0:
                        continue
                    dist.broadcast(tensor, src=src, group=self.device_group)
                return received

        def members_only(chunks, group):
            if dist.get_world_size(group) > 1 and dist.get_rank() in dist.get_process_group_ranks(group):
                grad = chunks[0].main_grad
                if grad is None:
                    return
                dist.all_reduce(grad, group=group)

        def read_after_the_arm(chunks, group):
            grad = None
            if dist.get_rank() == 0:
                grad = chunks[0].main_grad
            if grad is None:
                return
            dist.all_reduce(grad, group=group)                    # reported

        def other_group(chunks, group, world):
            if dist.get_rank() in dist.get_process_group_ranks(group):
                grad = chunks[0].main_grad
                if grad is None:
                    return
                dist.all_reduce(grad, group=world)                # reported

        def in_a_loop(chunks, group):
            for chunk in chunks:
                if dist.get_rank() == 0:
                    grad = chunk.main_grad
                    if grad is None:
                        continue
                    dist.all_reduce(grad, group=group)            # reported
    """) == [42, 49, 57]


def test_every_arm_of_a_chain_picking_an_element_of_one_container_assigns_alike():
    # Every arm of an if/elif/else chain assigns the same name an element of the same container at a
    # fixed position: every rank binds it, so the tests pick only which element (the dataflow's values
    # do not tell elements apart).  A chain without an else, or an arm assigning from another
    # container, still differs.
    assert _lines("""
        import torch.distributed as dist
        from megatron.core import parallel_state

        def every_arm(chunks, group):
            if parallel_state.is_pipeline_first_stage():
                module = chunks[0]
            elif parallel_state.is_pipeline_last_stage():
                module = chunks[-1]
            else:
                module = chunks[0]
            if module.main_grad is None:
                return
            dist.all_reduce(module.main_grad, group=group)

        def no_else(chunks, group):
            module = None
            if parallel_state.is_pipeline_first_stage():
                module = chunks[0]
            elif parallel_state.is_pipeline_last_stage():
                module = chunks[-1]
            if module is None:
                return
            dist.all_reduce(module.main_grad, group=group)        # reported

        def other_container(chunks, spare, group):
            if parallel_state.is_pipeline_first_stage():
                module = chunks[0]
            else:
                module = spare[0]
            if module is None:
                return
            dist.all_reduce(module.main_grad, group=group)        # reported
    """) == [24, 33]


def test_a_store_into_a_loops_element_is_not_what_the_next_iteration_reads():
    # each iteration of ``for group in groups`` reads its own element: the
    # partition a rank stored into the previous group is not in this one's
    # parameters (the summary walk of a function that reaches no collective)
    lines = _lines("""
        import torch
        import torch.distributed as dist

        class Partitioned:
            def __init__(self, optimizer, group):
                self.group = group
                self.groups = []
                self.mine = []
                for i, param_group in enumerate(optimizer.param_groups):
                    rank = dist.get_rank(group=group)
                    trainable = []
                    for p in param_group["params"]:
                        trainable.append(p)
                    self.groups.append(trainable)
                    size = sum(p.numel() for p in trainable) // dist.get_world_size(group=group)
                    self.mine.append(torch.cat([p.view(-1) for p in trainable]).narrow(0, rank * size, size))
                    param_group["params"] = [self.mine[i]]

            def step(self):
                for params in self.groups:
                    if params:
                        dist.all_reduce(params[0], group=self.group)      # agreed

        class Marked:
            def __init__(self, items, group):
                self.group = group
                for item in items:
                    item["owner"] = dist.get_rank(group=group)
                self.last = item["owner"]
                before = dist.get_rank(group=group)
                for before in items:
                    pass
                self.before = before

            def step(self):
                if self.last:
                    dist.barrier(group=self.group)        # reported: the last element holds the rank
                if self.before:
                    dist.barrier(group=self.group)        # reported: with no trip it is still the rank
    """)
    assert lines == [38, 40]


def test_a_keys_membership_in_a_mapping_reads_its_keys_not_its_values():
    # ``name in state`` of a parameter annotated as a mapping asks whether the
    # key is there: a rank's own slice stored under a key it already has
    # changes no key
    lines = _lines("""
        from typing import Dict, List
        import torch.distributed as dist

        NAMES = ["embedding", "head", "norm"]

        def keep_shard(state: Dict[str, object], group):
            for name in NAMES:
                if name not in state:
                    continue
                state[name] = dist.get_rank(group)
                dist.barrier(group)                      # agreed: the key set is the caller's

        def rank_key(state: dict, group):
            if dist.get_rank(group) in state:
                dist.barrier(group)                      # reported: the key is the rank

        def rank_keys(state: dict, group):
            if dist.get_rank(group) == 0:
                state["extra"] = 1
            if "extra" in state:
                dist.barrier(group)                      # reported: one rank added the key

        def in_list(items: List[int], group):
            for i in range(3):
                if 0 not in items:
                    continue
                items[i] = dist.get_rank(group)
                dist.barrier(group)                      # reported: a list's `in` compares its elements
    """)
    assert lines == [16, 22, 29]


def test_a_loop_elements_store_read_after_the_loop_in_the_dataflow():
    # the CFG dataflow of a function that issues collectives: past the loop
    # the target holds its last element, stored into by the body; the way
    # out of the header reads what reached the header, which changes after
    # the header's own result (the next element, bound anew) stops changing
    lines = _lines("""
        import torch.distributed as dist

        def last_owner(items, group):
            for x in items:
                x["v"] = dist.get_rank()
            if x["v"]:
                dist.barrier(group=group)        # reported: the last element holds the rank

        def keyed_alike(items, group):
            for x in items:
                x["v"] = dist.get_world_size(group)
            if x["v"]:
                dist.barrier(group=group)        # agreed: every rank stores the group's size
    """)
    assert lines == [8]


def test_a_partial_application_is_there_on_every_rank_whatever_it_binds():
    # VALID at the first setup call: each rank binds its own workspace, which
    # it may have failed to allocate, but `partial` makes an object either way,
    # so whether the field is still None agrees; INVALID where the field holds
    # the workspace itself
    source = """
        from functools import partial

        import torch
        import torch.distributed as dist


        def fused_all_reduce(x, workspace=None):
            return run_fused(x, workspace)


        def allocated(size, group):
            workspace = None
            try:
                workspace = allocate_workspace(size)
            except RuntimeError:
                workspace = None
            ready = torch.tensor([int(workspace is not None)])
            dist.all_reduce(ready, op=dist.ReduceOp.MIN, group=group)
            return workspace


        class Fused:
            def __init__(self, group):
                self.group = group
                self._fused = None

            def _setup(self, size):
                workspace = allocated(size, self.group)
                self._fused = partial(fused_all_reduce, workspace=workspace)

            def fused_for(self, x):
                if self._fused is None:
                    self._setup(x.shape[1])                # agreed: a partial object on every rank
                return self._fused


        class Raw:
            def __init__(self, group):
                self.group = group
                self._raw = None

            def _setup(self, size):
                self._raw = allocated(size, self.group)

            def raw_for(self, x):
                if self._raw is None:
                    self._setup(x.shape[1])                # reported: the workspace as it is
                return self._raw
    """
    lines = _lines(source)
    marked = [i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in line]
    assert lines == marked
