"""A dispatching loader that builds its source iterator on process 0 only.

Upstream: huggingface/accelerate, fix commit 7d7851732f88bcfa58476c445d25c1f1feaba7e4
          (PR #1709, "DataLoaderDispatcher gets stuck ... when the dataset is an IterDataPipe").
Group: world (the default group torch's DataLoader uses for its shared seed).
Why ranks diverge: see buggy.py.
Variant: fixed -- every process creates the iterator (so every process joins
the seed broadcast); only process 0 draws batches from it.
"""

from torch.utils.data import DataLoader

from accelerate.state import AcceleratorState
from accelerate.utils import broadcast_object_list


class ProcessZeroDispatcher(DataLoader):
    def __iter__(self):
        state = AcceleratorState()
        source = super().__iter__()
        finished = False
        while not finished:
            info = [None, True]
            if state.process_index == 0:
                try:
                    info = [next(source), False]
                except StopIteration:
                    info = [None, True]
            broadcast_object_list(info)
            finished = info[1]
            if not finished:
                yield info[0]
