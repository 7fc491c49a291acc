"""A call of a local bound to a class the function chooses builds an object of
one of those classes (issue 14; ``analysis/classargs.py``,
``callrefs.ChosenClassRef``).

``W = CpuWorker if use_cpu() else Worker; w = W(local_rank=rank)`` ran nothing
the analysis knew: the object's fields held nothing, so a rank stored into
``w.idx`` and tested later went unreported.  Read as a construction of each
candidate, what a constructor stores from its parameters reaches the field
from this call's arguments: the rank's field differs, a constant's field
stays alike.  A local that may hold a class of no analysed code (a library
class) keeps the old reading: nothing is claimed of its fields."""

from package_findings import package_findings, write_package

WORKERS = """
    import os
    import signal
    import threading

    import torch.distributed as dist


    def use_cpu():
        return os.environ.get("USE_CPU") == "1"


    class Worker:
        def __init__(self, local_rank, name):
            self.idx = local_rank
            self.name = name


    class CpuWorker:
        def __init__(self, local_rank, name):
            self.idx = local_rank
            self.name = name


    class Runner:
        def __init__(self, group):
            self.group = group
            W = CpuWorker if use_cpu() else Worker
            w = W(local_rank=dist.get_rank(), name="w")
            self.x = w.idx
            self.n = w.name

        def step(self):
            if self.x == 0:                                    # INVALID: the rank, stored by either class
                dist.barrier(group=self.group)
            if self.n == "w":                                  # VALID: a constant, stored by either class
                dist.barrier(group=self.group)


    def with_alarm(work, on_alarm):
        previous = signal.signal(signal.SIGALRM, on_alarm)
        try:
            return work()
        finally:
            signal.signal(signal.SIGALRM, previous)            # a local handed to a call, noted while scanning


    class Alone:
        def __init__(self, group):
            self.group = group
            W = Worker
            w = W(dist.get_rank(), "w")
            self.x = w.idx

        def step(self):
            if self.x == 0:                                    # INVALID: one class, bound by position
                dist.barrier(group=self.group)
"""


def _findings(tmp_path, workers=WORKERS):
    package = write_package(tmp_path, "app", {"workers.py": workers})
    return sorted((f.function or f.code, f.condition) for f in package_findings(package))


def test_a_local_bound_to_chosen_classes_builds_one_of_them(tmp_path):
    assert _findings(tmp_path) == [
        ("Alone.step", "self.x == 0"),
        ("Runner.step", "self.x == 0"),
    ]


def test_a_library_candidate_keeps_the_old_reading(tmp_path):
    # one candidate is no class of the tree: the call stays unresolved, nothing
    # is claimed of either class's fields (no new finding, none lost)
    workers = WORKERS.replace("W = CpuWorker if use_cpu() else Worker", "W = threading.Thread if use_cpu() else Worker")
    assert _findings(tmp_path, workers) == [("Alone.step", "self.x == 0")]


# -- the test that chose the class reaches the object (analysis/evaluator.py) ----------------

ROLES = """
    import os

    import torch.distributed as dist


    def from_env():
        return os.environ.get("ROLE") == "primary"


    class Primary:
        primary = True

        def __init__(self, group):
            self.group = group
            self.role = "primary"

        def is_primary(self):
            return True


    class Replica:
        primary = False

        def __init__(self, group):
            self.group = group
            self.role = "replica"

        def is_primary(self):
            return False


    def by_field(g):
        R = Primary if dist.get_rank() == 0 else Replica
        r = R(g)
        if r.primary:                                          # INVALID: a class constant, the class per rank
            dist.barrier(group=g)


    def by_text(g):
        R = Primary if dist.get_rank() == 0 else Replica
        r = R(g)
        if r.role == "primary":                                # INVALID: a constant each constructor stores
            dist.barrier(group=g)


    def by_method(g):
        R = Primary if dist.get_rank() == 0 else Replica
        r = R(g)
        if r.is_primary():                                     # INVALID: what each class's method returns
            dist.barrier(group=g)


    def by_type(g):
        R = Primary if dist.get_rank() == 0 else Replica
        r = R(g)
        if isinstance(r, Primary):                             # INVALID: the type itself
            dist.barrier(group=g)


    def by_arms(g):
        if dist.get_rank() == 0:
            R = Primary
        else:
            R = Replica
        r = R(g)
        if r.primary:                                          # INVALID: the arms of an `if` bind the class
            dist.barrier(group=g)


    def written_out(g):
        r = Primary(g) if dist.get_rank() == 0 else Replica(g)
        if r.primary:                                          # INVALID: the choice written at the call
            dist.barrier(group=g)


    def by_setting(g):
        R = Primary if from_env() else Replica
        r = R(g)
        if r.primary:                                          # VALID: a setting every rank reads alike
            dist.barrier(group=g)
        if isinstance(r, Primary):                             # VALID: likewise
            dist.barrier(group=g)


    class Holder:
        def __init__(self, g):
            self.g = g
            R = Primary if dist.get_rank() == 0 else Replica
            self.r = R(g)

        def step(self):
            if self.r.primary:                                 # INVALID: the object stored in a field
                dist.barrier(group=self.g)
"""


def test_the_test_that_chose_the_class_reaches_the_object(tmp_path):
    package = write_package(tmp_path, "app", {"roles.py": ROLES})
    assert sorted((f.function, f.condition) for f in package_findings(package)) == [
        ("Holder.step", "self.r.primary"),
        ("by_arms", "r.primary"),
        ("by_field", "r.primary"),
        ("by_method", "r.is_primary()"),
        ("by_text", "r.role == 'primary'"),
        ("by_type", "isinstance(r, Primary)"),
        ("written_out", "r.primary"),
    ]
