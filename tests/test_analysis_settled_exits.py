"""A test one arm of which leaves the function while every path of the other
enters a collective is settled by that collective (cslint/analysis/settled.py):
the ranks that stay wait there for those that left, so in a run that goes on
the group took one arm.  The collective the test skips is still reported;
what the function hands on past the test (a flag cleared after the exchange,
what it returns) no longer makes each later reader a finding of its own."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _pool(constructor: str, extra: str = "") -> str:
    return textwrap.dedent("""
        import torch.distributed as dist


        def peers_reachable(rank, size):
            for peer in range(size):
                if peer != rank and not probe_link(rank, peer):
                    return False
            return True


        class SharedPool:
    """) + textwrap.indent(textwrap.dedent(constructor) + textwrap.dedent("""
        def publish(self, group):
            handles = [None] * dist.get_world_size(group=group)
            dist.all_gather_object(handles, export_handle(), group=group)
            return handles

        def reduce(self, t):
            if self.off:
                return None
            dist.barrier(group=self.group)
            return t
    """) + textwrap.dedent(extra), "    ")


def test_a_flag_cleared_after_the_exchange_the_exit_skips_is_agreed():
    # VALID past the constructor: a rank whose peer check failed left before
    # publish(), so its peers would wait in the all-gather; the exit is reported
    # there, and reduce() reading `off` is not reported again
    assert _codes(_pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            self.handles = self.publish(group)
            self.off = False
    """)) == [("CSL102", 19)]


def test_the_flag_stays_rank_local_where_a_path_past_the_exit_enters_no_collective():
    # INVALID: with `shared` false the ranks that stayed publish nothing, so no
    # collective tells a rank that left from one that stayed
    source = _pool("""
        def __init__(self, group, shared):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            if shared:
                self.handles = self.publish(group)
            self.off = False
    """)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_the_flag_stays_rank_local_where_the_leaving_arm_enters_a_collective_too():
    # INVALID: the ranks that leave all-gather too, so the collectives can pair
    # up and the run goes on with the ranks split
    source = _pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                dist.all_gather_object([None], None, group=group)
                return
            self.handles = self.publish(group)
            self.off = False
    """)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_a_collective_under_a_conditional_expression_settles_nothing():
    # INVALID: with `shared` false the exchange is not made
    source = _pool("""
        def __init__(self, group, shared):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            self.handles = self.publish(group) if shared else None
            self.off = False
    """)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_what_a_function_returns_on_either_side_of_a_settled_exit_is_agreed():
    # VALID past the call: None comes back on every rank or on none
    assert _codes("""
        import torch.distributed as dist


        def open_pool(group, rank):
            if not probe_link(rank):
                return None
            handles = [None] * dist.get_world_size(group=group)
            dist.all_gather_object(handles, export_handle(), group=group)
            return handles


        def step(group, t):
            pool = open_pool(group, dist.get_rank(group=group))
            if pool is None:
                return
            dist.all_reduce(t, group=group)
    """) == [("CSL102", 9)]


def test_a_collective_over_one_parallel_group_settles_the_exit_within_that_group_only():
    # INVALID for the world barrier: the tensor-parallel gather keeps the
    # ranks of one tensor-parallel group together, not those of different ones
    found = _codes("""
        import torch.distributed as dist
        from vllm.distributed import tensor_model_parallel_all_gather


        class Pool:
            def __init__(self, t):
                self.off = True
                if not probe_link(dist.get_rank()):
                    return
                self.rows = tensor_model_parallel_all_gather(t)
                self.off = False

            def reduce(self):
                if self.off:
                    return
                dist.barrier()
    """)
    assert ("CSL102", 11) in found and ("CSL102", 17) in found


def test_a_broadcast_from_each_member_in_turn_settles_the_exit_too():
    # VALID past the constructor: both arms of the platform test exchange over the group, one
    # all-gathering, the other broadcasting from each member of the group's rank list in turn
    # (never empty: the group holds this rank)
    source = _pool("""
        def __init__(self, group, legacy):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            if legacy:
                self.handles = self.relay([export_handle()])
            else:
                self.handles = self.publish(group)
            self.off = False

        def relay(self, mine):
            ranks = dist.get_process_group_ranks(group=self.group)
            ranks.sort()
            for i, rank in enumerate(ranks):
                dist.broadcast_object_list(mine, src=rank, group=self.group)
            return mine
    """)
    assert ("CSL102", _line_of(source, "dist.barrier(")) not in _codes(source)


def test_a_loop_over_a_list_that_may_be_empty_settles_nothing():
    # INVALID: with no peers listed the legacy arm exchanges nothing
    source = _pool("""
        def __init__(self, group, legacy, peers):
            self.off = True
            self.group = group
            self.peers = peers
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            if legacy:
                self.handles = self.relay([export_handle()])
            else:
                self.handles = self.publish(group)
            self.off = False

        def relay(self, mine):
            for rank in self.peers:
                dist.broadcast_object_list(mine, src=rank, group=self.group)
            return mine
    """)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


_AGREEING = """
    def all_ready(self, local):
        flag = torch.tensor([int(local)])
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=self.group)
        return bool(flag.item())
"""


def test_a_flag_written_from_a_collective_its_own_statement_enters_is_agreed():
    # VALID past the constructor: with `fused` false no collective follows the
    # peer exit, but `off` is written only by the statement that all-reduces
    # the readiness over the group: a rank that wrote it entered that
    # all-reduce, which the ranks that left never enter; the exit is reported
    # at the all-reduce it skips, and reduce() reading `off` is not reported
    source = _pool("""
        def __init__(self, group, fused):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            if fused:
                self.off = not self.all_ready(probe_fabric())
    """, _AGREEING)
    assert _codes(source) == [("CSL102", _line_of(source, "self.off = not self.all_ready("))]


def test_a_flag_written_past_the_exit_without_a_collective_stays_rank_local():
    # INVALID: `off` is written by a statement that enters no collective, so
    # the ranks that left keep it set and the others clear it
    source = _pool("""
        def __init__(self, group, fused):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            if fused:
                ready = self.all_ready(probe_fabric())
                self.off = False
    """, _AGREEING)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_a_flag_written_from_a_collective_stays_rank_local_where_the_leaving_arm_enters_one_too():
    # INVALID: the ranks that leave all-reduce too, so the two all-reduces can
    # pair up and the run goes on with `off` set on some ranks only
    source = _pool("""
        def __init__(self, group, fused):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                self.all_ready(False)
                return
            if fused:
                self.off = not self.all_ready(probe_fabric())
    """, _AGREEING)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_a_flag_written_from_a_collective_under_a_conditional_expression_stays_rank_local():
    # INVALID: with `fused` false the statement writes without all-reducing
    source = _pool("""
        def __init__(self, group, fused):
            self.off = True
            self.group = group
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            self.off = not self.all_ready(probe_fabric()) if fused else False
    """, _AGREEING)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_a_path_only_ranks_with_an_agreed_part_of_the_test_the_other_way_take_settles_nothing_against():
    # VALID past the constructor: the peer exit is taken only where `shared`
    # holds, and `shared` is all-reduced over the group, so where any rank
    # left, every rank has `shared` and the ones that stayed publish; the
    # arm without an exchange is taken only where no rank left
    source = _pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            shared = bool(self.all_ready(on_one_host()))
            if shared and not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            self.off = False
            if shared:
                self.handles = self.publish(group)
            else:
                self.handles = [local_handle()]
    """, _AGREEING)
    assert _codes(source) == [("CSL102", _line_of(source, "self.handles = self.publish(group)"))]


def test_the_flag_stays_rank_local_where_the_part_of_the_test_it_takes_as_agreed_differs():
    # INVALID: `shared` holds on the first ranks only, so a rank without it
    # stays and publishes nothing while a rank with it may leave
    source = _pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            shared = dist.get_rank(group=group) < 4
            if shared and not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            self.off = False
            if shared:
                self.handles = self.publish(group)
            else:
                self.handles = [local_handle()]
    """, _AGREEING)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_the_flag_stays_rank_local_where_the_name_the_test_reads_is_bound_again_before_the_exchange():
    # INVALID: the second `if shared:` reads a rank's own probe, not the
    # agreed value the exit read
    source = _pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            shared = bool(self.all_ready(on_one_host()))
            if shared and not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            shared = probe_fabric()
            self.off = False
            if shared:
                self.handles = self.publish(group)
            else:
                self.handles = [local_handle()]
    """, _AGREEING)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_what_a_method_called_past_a_settled_exit_writes_is_agreed():
    # VALID past the constructor: attach() runs on the ranks that stayed, and
    # in a run that goes on every member stayed (they all published), so the
    # fabric address it writes, and `off` set from it, are not decided by the
    # peer check again
    source = _pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            self.fabric = 0
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            self.handles = self.publish(group)
            self.off = False
            self.attach()
            if not self.fabric:
                self.off = True

        def attach(self):
            self.fabric = fabric_address()
    """)
    assert _codes(source) == [("CSL102", _line_of(source, "self.handles = self.publish(group)"))]


def test_what_a_method_called_past_an_exit_no_collective_settles_writes_stays_rank_local():
    # INVALID: with `shared` false nothing tells a rank that left from one
    # that stayed and attached
    source = _pool("""
        def __init__(self, group, shared):
            self.off = True
            self.group = group
            self.fabric = 0
            if not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            if shared:
                self.handles = self.publish(group)
            self.attach()
            if self.fabric:
                self.off = False

        def attach(self):
            self.fabric = fabric_address()
    """)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)


def test_the_flag_stays_rank_local_where_the_part_of_the_test_is_a_list_emptied_before_the_exchange():
    # INVALID: `peers` is the same list on every rank at the exit, but the
    # ranks that stayed empty it, so the second test reads it the other way
    source = _pool("""
        def __init__(self, group):
            self.off = True
            self.group = group
            peers = self.listed_peers()
            if peers and not peers_reachable(dist.get_rank(group=group), dist.get_world_size(group=group)):
                return
            peers.clear()
            self.off = False
            if peers:
                self.handles = self.publish(group)
            else:
                self.handles = [local_handle()]

        def listed_peers(self):
            hosts = [None] * dist.get_world_size(group=self.group)
            dist.all_gather_object(hosts, host_name(), group=self.group)
            return hosts
    """, _AGREEING)
    assert ("CSL102", _line_of(source, "dist.barrier(")) in _codes(source)
