"""A rank that picks a group's rank list by its membership in that list
(issue 14, group membership): ``if rank in ranks: group_ranks = [ranks]``
outside a loop over parts hands on the list itself, which every member of a
group built from it holds alike (cslint/analysis/membership.py)."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def test_an_arm_that_hands_on_the_tested_rank_list_writes_on_every_member():
    assert _lines("""
        import torch.distributed as dist


        class Coordinator:
            def __init__(self, group_ranks):
                self.cpu_group = None
                for ranks in group_ranks:
                    self.cpu_group = dist.new_group(ranks)

            def sync(self, t):
                if self.device_group is not None:
                    dist.all_reduce(t, group=self.cpu_group)


        def world_from_listed_ranks(size, offset):
            rank = offset * size + dist.get_rank()
            all_ranks = list(range(size))
            group_ranks = [[r] for r in all_ranks]
            if rank in all_ranks:
                group_ranks = [all_ranks]
            return Coordinator(group_ranks)


        def world_with_else(size):
            rank = dist.get_rank()
            all_ranks = list(range(size))
            if rank in all_ranks:
                chosen = [all_ranks]
            else:
                chosen = [[rank]]
            if len(chosen) > 1:
                dist.barrier()
    """) == []


def test_membership_that_leaves_a_name_unset_or_reads_the_rank_still_differs():
    assert _lines("""
        import torch.distributed as dist


        def own_entry_of_table(table, t):
            rank = dist.get_rank()
            entry = [0]
            if rank in table:
                entry = table[rank]
            if len(entry) > 1:
                dist.all_reduce(t)                                         # reported


        def absent_unless_listed(writers, t):
            rank = dist.get_rank()
            mine = None
            if rank in writers:
                mine = writers
            if mine is not None:
                dist.all_reduce(t)                                         # reported


        def built_from_something_else(writers, t):
            rank = dist.get_rank()
            mine = [0]
            if rank in writers:
                mine = [0, 1]
            if len(mine) > 1:
                dist.all_reduce(t)                                         # reported


        def listed_with_loop_trip(writers, t):
            rank = dist.get_rank()
            all_ranks = list(writers)
            group_ranks = [[r] for r in all_ranks]
            if rank in all_ranks:
                group_ranks = [all_ranks]
                dist.barrier()                                             # reported
    """) == [11, 20, 29, 38]


def test_a_group_made_by_a_rendezvous_is_alike_on_every_member_whatever_each_rank_passed():
    # the vLLM preset names its TCP rendezvous; the rank that listens and
    # the ranks that connect pass different sockets but meet in one group
    assert _lines("""
        import torch.distributed as dist
        from serving.distributed.utils import stateless_init_torch_distributed_process_group


        def open_socket(host, port):
            return object()


        class Coordinator:
            def __init__(self, ranks, host, port):
                self.rank = dist.get_rank()
                self.rank_in_group = ranks.index(self.rank)
                if self.rank_in_group == 0:
                    socks = [open_socket(host, port)]
                else:
                    socks = []
                self.cpu_group = stateless_init_torch_distributed_process_group(
                    host, port, self.rank_in_group, len(ranks), listen_socket=socks[0] if socks else None)
                self.device_group = stateless_init_torch_distributed_process_group(
                    host, port + 1, self.rank_in_group, len(ranks), listen_socket=socks[0] if socks else None)
                self.side = socks[0] if socks else None

            def sync(self, t):
                if self.device_group is not None:
                    dist.all_reduce(t, group=self.cpu_group)

            def sync_listener(self, t):
                if self.side is not None:
                    dist.all_reduce(t, group=self.cpu_group)               # reported
    """) == [30]


def test_an_equality_with_a_one_rank_list_of_a_loop_over_every_rank_writes_on_every_member():
    # membership in a group of one rank, spelt as an equality: every rank
    # takes the arm in its own pass of the loop over the group's size
    assert _lines("""
        import torch.distributed as dist


        class Grid:
            def __init__(self, world_size):
                self.global_rank = dist.get_rank()
                self.own_group = None
                for group_rank in range(world_size):
                    group_rank = [group_rank]
                    group = dist.new_group(ranks=group_rank)
                    if group_rank[0] == self.global_rank:
                        self.own_ranks = group_rank
                        self.own_group = group

            def sync(self, t):
                if self.own_group is not None:
                    dist.all_reduce(t)
                for r in self.own_ranks:
                    dist.barrier()


        def by_index(world_size, t):
            rank = dist.get_rank()
            mine = None
            for i in range(world_size):
                group = dist.new_group(ranks=[i])
                if rank == i:
                    mine = group
            if mine is not None:
                dist.all_reduce(t)
    """) == []


def test_an_equality_that_is_not_this_ranks_own_pass_still_differs():
    assert _lines("""
        import torch.distributed as dist


        def first_of_a_longer_list(groups, t):
            rank = dist.get_rank()
            mine = None
            for ranks in groups:
                group = dist.new_group(ranks=ranks)
                if ranks[0] == rank:
                    mine = group
            if mine is not None:
                dist.all_reduce(t)                                         # reported


        def over_fewer_than_every_rank(count, t):
            rank = dist.get_rank()
            mine = None
            for i in range(count):
                pair = [i]
                if pair[0] == rank:
                    mine = pair
            if mine is not None:
                dist.all_reduce(t)                                         # reported


        def index_moved_in_the_loop(world_size, t):
            rank = dist.get_rank()
            mine = None
            for i in range(world_size):
                i = i + 1
                if i == rank:
                    mine = [i]
            if mine is not None:
                dist.all_reduce(t)                                         # reported


        def list_of_something_else(world_size, peers, t):
            rank = dist.get_rank()
            mine = None
            for i in range(world_size):
                ranks = [peers[i]]
                if ranks[0] == rank:
                    mine = ranks
            if mine is not None:
                dist.all_reduce(t)                                         # reported


        def collective_in_the_own_pass(world_size, t):
            rank = dist.get_rank()
            for i in range(world_size):
                if i == rank:
                    dist.barrier()                                         # reported
    """) == [13, 24, 35, 46, 53]


def test_membership_in_any_list_a_group_is_made_from_when_the_group_name_is_rebound():
    # one local holds the groups of two partitions in turn: the row loop's
    # test asks about the first list, which the name no longer holds at the end
    assert _lines("""
        import torch.distributed as dist


        class Mesh:
            def __init__(self, rows, width):
                self.rank = dist.get_rank()
                self.row_group = None
                for row in range(rows):
                    ranks = list(range(row * width, (row + 1) * width))
                    made = dist.new_group(ranks=ranks)
                    if self.rank in ranks:
                        self.row_group = made
                for col in range(width):
                    column = list(range(col, rows * width, width))
                    made = dist.new_group(ranks=column)
                    if self.rank in column:
                        self.col_group = made

            def get_row_group(self):
                return self.row_group


        class Reducer:
            def __init__(self, mesh):
                self.row_group = mesh.get_row_group()

            def reduce(self, t):
                first = dist.get_global_rank(self.row_group, 0)
                if first % 2 == 0:
                    dist.all_reduce(t, group=self.row_group)
                return t


        def build(rows, width):
            return Reducer(Mesh(rows, width))


        def listed_apart_from_any_group(writers, t):
            if dist.get_rank() in writers:
                dist.all_reduce(t)                                         # reported
    """) == [41]


def test_membership_of_a_group_decides_collectives_over_other_groups():
    # membership in a group's own list is alike on the group's members only:
    # a collective over that group under it is not reported, one over the
    # world or over a group made from another list still is (the test parts
    # their ranks), whole or as an operand of an ``and``, as an exit too
    assert _lines("""
        import torch.distributed as dist


        def reduce_in_pair(t, flag):
            rank = dist.get_rank()
            ranks = [0, 1]
            pair = dist.new_group(ranks)
            others = [2, 3]
            rest = dist.new_group(others)
            if rank in ranks:
                dist.all_reduce(t, group=pair)
                dist.all_reduce(t)                                         # reported
                dist.all_reduce(t, group=rest)                             # reported
            if rank in ranks and flag:
                dist.all_reduce(t, group=pair)
                dist.barrier()                                             # reported
            if rank not in ranks:
                return t
            dist.broadcast(t, src=0, group=pair)
            dist.broadcast(t, src=0)                                       # reported
            return t
    """) == [13, 14, 17, 21]


def test_a_rank_below_n_that_is_stored_or_shifted_still_differs_over_the_world():
    # A comparison `rank < n` is not read as membership of the group of the
    # first n ranks: stored in a name or a conditional count it guards world
    # collectives too, and a rank shifted before the test is not the world rank
    # the group's list names (a reverted step, fd184f0, hid all three).
    assert _lines("""
        import torch
        import torch.distributed as dist


        def stored_test():
            rank = dist.get_rank()
            pair = dist.new_group([0, 1])
            first = rank < 2
            if first:
                dist.barrier()
            return pair


        def picked_count():
            rank = dist.get_rank()
            pair = dist.new_group([0, 1])
            rounds = 1 if rank < 2 else 0
            for _ in range(rounds):
                dist.barrier()
            return pair


        def shifted_rank():
            rank = (dist.get_rank() + 1) % dist.get_world_size()
            pair = dist.new_group([0, 1])
            x = torch.ones(1)
            if rank < 2:
                dist.all_reduce(x, group=pair)
    """) == [11, 20, 29]


def test_membership_is_read_of_the_world_rank_alone():
    # new_group and get_process_group_ranks list world ranks: a node's or a group's rank found in the list
    # is no membership (world rank 9 has local rank 1 on a node of 8; world rank 1 passes for it)
    assert _lines("""
        import os
        import torch
        import torch.distributed as dist


        def by_local_rank():
            local_rank = int(os.environ["LOCAL_RANK"])
            ranks = [0, 9]
            g = dist.new_group(ranks)
            x = torch.ones(1)
            if local_rank in ranks:
                dist.all_reduce(x, group=g)
    """) == [13]
    assert _lines("""
        import torch
        import torch.distributed as dist


        def by_group_rank(tp_group):
            pair = dist.new_group([0, 9])
            x = torch.ones(1)
            if dist.get_rank(tp_group) in dist.get_process_group_ranks(pair):
                dist.all_reduce(x, group=pair)
    """) == [10]


def test_membership_of_the_world_rank_stays_dropped():
    assert _lines("""
        import torch
        import torch.distributed as dist


        class Member:
            def __init__(self, rank):
                self.global_rank = rank

            def run(self, x):
                ranks = [0, 9]
                g = dist.new_group(ranks)
                if self.global_rank in ranks:
                    dist.all_reduce(x, group=g)
                if dist.get_rank() not in ranks:
                    return
                dist.all_reduce(x, group=g)
                if dist.get_rank() in dist.get_process_group_ranks(g):
                    dist.all_reduce(x, group=g)
                self.current_rank = dist.get_rank()
                if self.current_rank in ranks:
                    dist.all_reduce(x, group=g)
    """) == []


def test_membership_held_in_a_value_decides_collectives_over_other_groups():
    # as a value, ``rank in ranks`` is alike on the members of the group made
    # from ``ranks`` only: a flag or a count taken from it still parts the
    # ranks of the world and of a group made from another list (whatever
    # reads it: a branch, a loop's trip count, an exit); a collective over the
    # group made from that very list under it stays unreported
    assert _lines("""
        import torch
        import torch.distributed as dist


        def stored_flag(ranks, others):
            rank = dist.get_rank()
            pair = dist.new_group(ranks)
            rest = dist.new_group(others)
            x = torch.ones(1)
            member = rank in ranks
            if member:
                dist.all_reduce(x, group=pair)
                dist.all_reduce(x)                                         # reported
                dist.all_reduce(x, group=rest)                             # reported


        def counted(ranks):
            rank = dist.get_rank()
            pair = dist.new_group(ranks)
            n = 0
            if rank in ranks:
                n = 1
            for _ in range(n):
                dist.barrier(group=pair)
            for _ in range(n):
                dist.barrier()                                             # reported


        def leaving(ranks):
            rank = dist.get_rank()
            pair = dist.new_group(ranks)
            outside = rank not in ranks
            if outside:
                return
            dist.barrier(group=pair)
            dist.barrier()                                                 # reported
    """) == [14, 15, 27, 37]


def test_membership_of_a_node_rank_held_in_a_value_differs_over_the_own_group_too():
    # a node's rank found in a list of world ranks is no membership (world
    # rank 9 is local rank 1 on a node of 8): held in a flag, it parts even
    # the group made from the list
    assert _lines("""
        import os
        import torch
        import torch.distributed as dist


        def by_local_rank():
            local_rank = int(os.environ["LOCAL_RANK"])
            ranks = [0, 9]
            g = dist.new_group(ranks)
            x = torch.ones(1)
            listed = local_rank in ranks
            if listed:
                dist.all_reduce(x, group=g)                                # reported
    """) == [14]
