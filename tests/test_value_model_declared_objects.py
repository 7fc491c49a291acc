"""A name declared to hold one object of one class (a local annotated with
the class, or handed back as it is by a function whose return annotation
names the class) and bound only from calls holds an object on every rank:
a test choosing which call binds it (the writer builds the queue, the
readers attach to the handle it broadcast) tells which object, its
contents, never its None-ness or kind (``receivers.declared_object_names``).
Each valid shape is paired with one where a rank really may hold None,
which must still be reported."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_QUEUE = '''
    from typing import Optional

    import torch.distributed as dist


    class Channel:
        def __init__(self, readers, capacity):
            self.readers = readers
            self.capacity = capacity
            self.token = (readers, capacity)

        @staticmethod
        def attach(token, rank) -> "Channel":
            channel = Channel(token[0], token[1])
            channel.rank = rank
            return channel

        @staticmethod
        def open_on(group, capacity, writer=0){returns}:
            me = dist.get_rank(group)
            {declare}
            if me == writer:
                channel = Channel(readers=dist.get_world_size(group) - 1, capacity=capacity)
                dist.broadcast_object_list([channel.token], src=writer, group=group)
            else:
                box = [None]
                dist.broadcast_object_list(box, src=writer, group=group)
                channel = {reader}
            return channel

        def send(self, obj):
            return obj


    class Hub:
        def __init__(self, group, shared):
            self.group = group
            self.channel = None
            if shared:
                self.channel = Channel.open_on(group, 1 << 20)

        def share(self, obj):
            if self.channel is not None:
                return self.channel.send(obj)
            dist.broadcast_object_list([obj], src=0, group=self.group)
            return obj
'''


def _hub(returns=' -> "Channel"', declare="", reader="Channel.attach(box[0], me)"):
    return _QUEUE.replace("{returns}", returns).replace("{declare}", declare).replace("{reader}", reader)


# -- valid: every binding is an object of the declared class ---------------------------


def test_factory_declaring_its_class_hands_back_an_object_on_every_rank():
    assert _codes(_hub()) == []


def test_local_annotated_with_its_class_holds_an_object_on_every_rank():
    assert _codes(_hub(returns="", declare="channel: Channel")) == []


# -- invalid: a rank may really hold None ---------------------------------------------


def test_an_optional_return_annotation_declares_no_one_object():
    assert _codes(_hub(returns=' -> Optional["Channel"]')) == [("CSL102", 46)]


def test_no_declaration_keeps_the_choice_whole():
    assert _codes(_hub(returns="")) == [("CSL102", 46)]


def test_a_reader_arm_binding_none_still_differs():
    assert _codes(_hub(reader="None")) == [("CSL102", 46)]


def test_a_local_bound_from_an_element_is_not_declared_by_its_annotation():
    assert _codes(_hub(returns="", declare="channel: Channel", reader="box[0]")) == [("CSL102", 46)]
