"""Collectives reached through another file's class whose public method
sends through a helper of its own file.

Functions that issue a collective themselves spread to other files as
wrapper names (``engine/gather.py``, ``wrapper_names``); spreading every
method that reaches one further down by name alone took the eight real trees
from 492 to 622 findings.  A method that hands its work to a method of its
own class that issues a collective spreads as a typed wrapper instead
(``typed_wrapper_names``, ``analysis/typedcalls.py``): a caller in another
file that a round parses for collectives of its own is analysed in depth
only where the receiver is an instance of that class as the caller's file
shows it (a class named through a package that re-exports it, ``from
..comm import Broadcaster``, as the one of that name under the package).  A
typed wrapper is no needle, so a caller whose file holds no
collective of its own is not looked at.  TensorRT-LLM's executor has this shape:
``_fetch_and_enqueue_requests`` returns before
``self.request_broadcaster.broadcast()`` while a control request is parked,
and whether one is parked depends on this rank's own requests (under
attention-DP each rank waits for its own requests to drain).
(The fixture's method has a name of its own: ``broadcast`` is an ambiguous
name under the torch presets and never spreads by name.)
"""

from __future__ import annotations

import textwrap

import pytest

from cslint.api import check_paths

BROADCASTER = """
    import torch.distributed as dist


    class Broadcaster:
        def share_requests(self, items):
            if dist.get_rank() == 0:
                _ = self._send(items)
            else:
                items = self._send(items)
            return items

        def _send(self, items):
            box = [items]
            dist.broadcast_object_list(box, src=0)
            return box[0]
"""

EXECUTOR = """
    import torch.distributed as dist

    from broadcaster import Broadcaster


    class Executor:
        def __init__(self):
            self.broadcaster = Broadcaster()

        def fetch(self):
            if dist.get_rank() == 1:
                return None
            return self.broadcaster.share_requests([])
"""


OWN_BARRIER = "\n    def sync(self):\n        dist.barrier()\n"


def _findings(tmp_path, executor_file: str) -> list:
    (tmp_path / "broadcaster.py").write_text(textwrap.dedent(BROADCASTER))
    (tmp_path / executor_file).write_text(textwrap.dedent(EXECUTOR))
    result = check_paths([str(tmp_path)])
    return sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in result.findings)


def test_an_early_exit_before_a_same_file_class_with_a_sending_helper_is_reported(tmp_path):
    # the same classes in one file: the chain is followed within the file
    (tmp_path / "together.py").write_text(textwrap.dedent(BROADCASTER) + textwrap.dedent(EXECUTOR).replace(
        "from broadcaster import Broadcaster\n", ""))
    result = check_paths([str(tmp_path / "together.py")])
    assert [(f.code, f.line) for f in result.findings] == [("CSL102", 29)]


def test_an_early_exit_before_another_files_class_with_a_sending_helper_is_reported(tmp_path):
    # the executor's file holds a collective of its own, so a round parses it
    (tmp_path / "broadcaster.py").write_text(textwrap.dedent(BROADCASTER))
    (tmp_path / "executor.py").write_text(textwrap.dedent(EXECUTOR) + OWN_BARRIER)
    result = check_paths([str(tmp_path)])
    assert sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in result.findings) == \
        [("executor.py", "CSL102", 14)]


def test_an_argument_free_call_of_a_typed_wrapper_is_reached(tmp_path):
    # the function scan keeps the calls without arguments apart from the
    # others; ``self.broadcaster.share_requests()`` calls the typed wrapper
    # as surely as ``share_requests([])`` does
    (tmp_path / "broadcaster.py").write_text(textwrap.dedent(BROADCASTER).replace(
        "def share_requests(self, items):", "def share_requests(self, items=None):"))
    (tmp_path / "executor.py").write_text(textwrap.dedent(EXECUTOR).replace(
        "share_requests([])", "share_requests()") + OWN_BARRIER)
    result = check_paths([str(tmp_path)])
    assert sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in result.findings) == \
        [("executor.py", "CSL102", 14)]


@pytest.mark.xfail(strict=True, reason="a typed wrapper is no needle: a caller whose file holds no collective "
                                       "of its own is never parsed (engine/gather.py)")
def test_a_caller_file_without_collectives_of_its_own_is_looked_at(tmp_path):
    assert _findings(tmp_path, "executor.py") == [("executor.py", "CSL102", 14)]


def test_a_receiver_of_another_class_with_a_method_of_that_name_is_not_followed(tmp_path):
    # INVALID for the spread: the field holds a class of the executor's own
    # file whose share_requests sends nothing, so the early exit skips nothing
    (tmp_path / "broadcaster.py").write_text(textwrap.dedent(BROADCASTER))
    executor = textwrap.dedent(EXECUTOR).replace("from broadcaster import Broadcaster\n", "").replace(
        "self.broadcaster = Broadcaster()", "self.broadcaster = Mailbox()") + textwrap.dedent("""

        class Mailbox:
            def share_requests(self, items):
                return list(items)
    """)
    (tmp_path / "executor.py").write_text(executor)
    result = check_paths([str(tmp_path)])
    assert [f for f in result.findings if f.path.endswith("executor.py")] == []
    assert _fetch_is_deep(tmp_path / "executor.py", executor) is False
    assert _fetch_is_deep(tmp_path / "executor.py", textwrap.dedent(EXECUTOR)) is True


def _fetch_is_deep(path, source: str) -> bool:
    from cslint.analysis.facts import extract_file_facts
    from cslint.config import Settings
    from cslint.presets import load_presets

    path.write_text(source)
    facts = extract_file_facts(str(path), source.encode(), Settings(), load_presets(["torch_distributed"]),
                               module="executor", deep_names={"broadcaster:Broadcaster.share_requests"})
    return next((fn.deep for fn in facts.functions if fn.qualname == "Executor.fetch"), False)


def test_a_public_method_issuing_itself_is_not_a_typed_wrapper(tmp_path):
    # the direct wrapper spreads by name already; the typed entry is only for
    # a method reaching its collective through its own class's helper
    from cslint.analysis.facts import extract_file_facts
    from cslint.config import Settings
    from cslint.engine.gather import typed_wrapper_names, wrapper_names
    from cslint.presets import load_presets

    path = tmp_path / "broadcaster.py"
    path.write_text(textwrap.dedent(BROADCASTER))
    facts = extract_file_facts(str(path), path.read_bytes(), Settings(), load_presets(["torch_distributed"]),
                               module="broadcaster")
    assert typed_wrapper_names(facts) == {"broadcaster:Broadcaster.share_requests"}
    assert "share_requests" not in wrapper_names(facts)


def test_a_summarised_caller_of_a_wrapper_needs_a_deeper_look(tmp_path):
    # a typed wrapper counts where the file's bytes name its class at all (a
    # receiver can be typed as the class only then), a plain wrapper name
    # wherever a summarised function calls it; the names split once per round
    from cslint.analysis.facts import extract_file_facts
    from cslint.config import Settings
    from cslint.engine.gather import KnownWrappers, needs_deeper_look
    from cslint.presets import load_presets

    for own in ("", OWN_BARRIER):  # a file with nothing deep keeps only its called names
        source = textwrap.dedent(EXECUTOR).replace("from broadcaster import Broadcaster\n", "") + own
        path = tmp_path / "executor.py"
        path.write_text(source)
        data = source.encode()
        facts = extract_file_facts(str(path), data, Settings(), load_presets(["torch_distributed"]),
                                   module="executor")
        assert facts.skipped is not bool(own)
        typed = {"broadcaster:Broadcaster.share_requests"}
        other_class = {"broadcaster:Mailbox.share_requests"}
        for names in (typed, KnownWrappers(typed)):
            assert needs_deeper_look(facts, names, data) is True
            assert needs_deeper_look(facts, names, None) is True
        for names in (other_class, KnownWrappers(other_class)):
            assert needs_deeper_look(facts, names, data) is False  # the bytes never name Mailbox
        assert needs_deeper_look(facts, {"share_requests"}, data) is True
        assert needs_deeper_look(facts, {"fetch_all_things"}, data) is False
        assert needs_deeper_look(facts, KnownWrappers(set()), data) is False


def _package_findings(tmp_path, files: dict, caller_import: str) -> list:
    # (a package of our own: the executor in one subpackage, the broadcaster
    # in another whose ``__init__.py`` re-exports it)
    from package_findings import package_findings, write_files

    executor = textwrap.dedent(EXECUTOR).replace("from broadcaster import Broadcaster", caller_import) + OWN_BARRIER
    write_files(tmp_path, {"pkg/__init__.py": "", "pkg/exe/__init__.py": "", "pkg/exe/executor.py": executor,
                           **files})
    return sorted((f.path.rsplit("/", 1)[-1], f.code, f.line) for f in package_findings(tmp_path))


RE_EXPORTING = {"pkg/comm/__init__.py": "from .broadcaster import Broadcaster\n",
                "pkg/comm/broadcaster.py": BROADCASTER}


@pytest.mark.parametrize("caller_import", ["from ..comm import Broadcaster", "from pkg.comm import Broadcaster"])
def test_a_typed_wrapper_re_exported_by_its_package_is_reached(tmp_path, caller_import):
    # the caller names the class through the package (``pkg.comm.Broadcaster``),
    # the typed entry through the module defining it (``pkg.comm.broadcaster``)
    assert _package_findings(tmp_path, RE_EXPORTING, caller_import) == [("executor.py", "CSL102", 14)]


def test_a_class_of_that_name_under_another_package_is_not_the_typed_wrapper(tmp_path):
    # INVALID for the spread: ``pkg.local`` re-exports a Broadcaster of its own
    # whose share_requests sends nothing; the one that sends lives under ``pkg.comm``
    mailbox = """
        class Broadcaster:
            def share_requests(self, items):
                return self._keep(items)

            def _keep(self, items):
                return list(items)
    """
    files = {**RE_EXPORTING, "pkg/local/__init__.py": "from .mailbox import Broadcaster\n",
             "pkg/local/mailbox.py": mailbox}
    assert _package_findings(tmp_path, files, "from ..local import Broadcaster") == []
    assert _package_findings(tmp_path, files, "from ..comm import Broadcaster") == [("executor.py", "CSL102", 14)]
