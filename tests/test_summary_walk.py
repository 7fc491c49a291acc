"""The summary walk leaves out the second walk of an outermost loop where the
first read nothing that changed after the read: the facts are the same as
with both walks."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cslint.analysis import summary
from cslint.analysis.evaluator import ReadWatch
from cslint.analysis.facts import extract_file_facts
from cslint.config import Settings
from cslint.presets import load_presets

TESTS = Path(__file__).parent
KNOWLEDGE = load_presets(["torch_distributed", "mpi4py", "vllm", "sglang", "tensorrt_llm", "megatron", "deepspeed"])
SOURCES = sorted([*(TESTS / "corpus" / "real_shapes").rglob("*.py"), *(TESTS / "field").rglob("*.py")])

#: loops of helpers that reach no collective (summary walk), some reading a
#: variable that a later statement of the loop changes, some not
LOOPS = textwrap.dedent("""
    import torch.distributed as dist

    class Feeder:
        def collect(self, items):
            out = []
            for item in items:
                out.append(self.convert(item))
            self.collected = out

        def refresh(self):
            value = 0
            for _ in range(3):
                self.ready = passthrough(value)
                value = dist.get_rank()

        def count(self, items):
            seen = 0
            for item in items:
                if item.owner == dist.get_rank():
                    seen += 1
            self.seen = seen
            return seen

        def poll(self, queue):
            done = False
            while not done:
                done = queue.empty() or self.stopped
                self.last = queue.get()

        def scan(self, rows):
            best = None
            for row in rows:
                for cell in row:
                    self.cells = best
                best = max(row)
            return best

        def convert(self, item):
            return item.value

        def step(self, t):
            if self.ready or self.seen or self.last or self.cells:
                dist.all_reduce(t)

    def passthrough(v):
        return v
""").encode()


def _facts_by_file() -> dict:
    facts = extract_file_facts("pkg/feeder.py", LOOPS, Settings(), KNOWLEDGE, module="pkg.feeder")
    out = {"pkg/feeder.py": ([(f.key, f.variants) for f in facts.functions], facts.globals)}
    for path in SOURCES:
        facts = extract_file_facts(str(path), path.read_bytes(), Settings(), KNOWLEDGE)
        out[str(path)] = ([(f.key, f.variants) for f in facts.functions], facts.globals)
    return out


class _Counted(ReadWatch):
    made: list = []

    def __init__(self):
        super().__init__()
        _Counted.made.append(self)


class _ChangedFromTheStart(ReadWatch):
    """Every first walk only carries values round: both walks, always."""

    def __init__(self):
        super().__init__()
        self.changed = True


def test_a_loop_walked_once_gives_the_facts_of_two_walks(monkeypatch):
    _Counted.made = []
    monkeypatch.setattr(summary, "ReadWatch", _Counted)
    once_where_it_may = _facts_by_file()
    kept = sum(not watch.changed for watch in _Counted.made)
    walked_again = sum(watch.changed for watch in _Counted.made)
    # the corpus has loops of both kinds
    assert kept >= 2 and walked_again >= 3, (kept, walked_again)
    monkeypatch.setattr(summary, "ReadWatch", _ChangedFromTheStart)
    assert _facts_by_file() == once_where_it_may
