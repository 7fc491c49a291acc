"""A dispatching loader that builds its source iterator on process 0 only.

Upstream: huggingface/accelerate, fix commit 7d7851732f88bcfa58476c445d25c1f1feaba7e4
          (PR #1709, "DataLoaderDispatcher gets stuck ... when the dataset is an IterDataPipe").
Group: world (the default group torch's DataLoader uses for its shared seed).
Why ranks diverge: for a DataPipe dataset, `DataLoader.__iter__` agrees on a
shared shuffling seed with a broadcast over the default group.  Only process
0 creates the iterator, so process 0 waits in that broadcast while the other
processes wait in the batch-info broadcast below.
Variant: buggy -- the iterator (and its hidden broadcast) is built under a
process-index test.
"""

from torch.utils.data import DataLoader

from accelerate.state import AcceleratorState
from accelerate.utils import broadcast_object_list


class ProcessZeroDispatcher(DataLoader):
    def __iter__(self):
        state = AcceleratorState()
        source = None
        if state.process_index == 0:
            source = super().__iter__()  # expect: CSL101
        finished = False
        while not finished:
            info = [None, True]
            if source is not None:
                try:
                    info = [next(source), False]
                except StopIteration:
                    info = [None, True]
            broadcast_object_list(info)
            finished = info[1]
            if not finished:
                yield info[0]
