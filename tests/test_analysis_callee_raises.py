"""Whether a call raises on some ranks only, when its callee lives in a file
that holds no collective (issue 14, uniform exceptions).

Such a file is never parsed for the collectives, yet a handler around a call
to one of its functions may decide whether a collective runs.  What the
callee raises is read off its summary (the tests above its ``raise``
statements, its parameters bound to what the calls pass); nothing else of
the file enters the analysis.  Each VALID shape sits beside the INVALID one
that must still be reported."""

import textwrap

from cslint.api import check_paths

LIBRARY = """
    import ctypes
    import os


    class SharedLibrary:
        def __init__(self, path):
            try:
                self.lib = ctypes.CDLL(path)
            except OSError as e:
                print("cannot load", path)
                raise e


    class ScratchFile:
        def __init__(self, path):
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            self.path = path


    def checked_size(size, limit):
        if size > limit:
            raise ValueError(size)
        return size


    def checked_index(index, limit):
        if index >= limit:
            raise IndexError(index)
        return index


    def own_disk_cache(path):
        with open(path) as handle:
            return handle.read()
"""

COMMUNICATOR = """
    import torch
    import torch.distributed as dist

    from pkg.library import SharedLibrary, ScratchFile, checked_index, checked_size, own_disk_cache


    class LibraryComm:
        def __init__(self, group, path):
            try:
                self.lib = SharedLibrary(path)
            except Exception:
                self.disabled = True
                return
            dist.barrier(group=group)                          # VALID: the library loads alike everywhere


    class ScratchComm:
        def __init__(self, group, path):
            try:
                self.scratch = ScratchFile(path)
            except Exception:
                return
            dist.barrier(group=group)                          # INVALID: this rank's own disk


    def sized_by_world(group, tensor, limit):
        size = dist.get_world_size(group)
        try:
            checked_size(size, limit)
        except Exception:
            return None
        dist.all_reduce(tensor, group=group)                   # VALID: the size is the group's
        return tensor


    def sized_by_rank(group, tensor, limit):
        rank = dist.get_rank(group)
        try:
            checked_index(rank, limit)
        except Exception:
            return None
        dist.all_reduce(tensor, group=group)                   # INVALID: the rank decides
        return tensor


    def cached(group, tensor, path):
        try:
            own_disk_cache(path)
        except Exception:
            return None
        dist.all_reduce(tensor, group=group)                   # INVALID: this rank's disk
        return tensor
"""


def _write(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "library.py").write_text(textwrap.dedent(LIBRARY))
    source = textwrap.dedent(COMMUNICATOR)
    (package / "communicator.py").write_text(source)
    return source


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_callee_outside_the_parsed_files_raises_as_its_own_tests_say(tmp_path):
    source = _write(tmp_path)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = {f.line: f for f in findings if f.path.endswith("communicator.py")}
    assert sorted(flagged) == _marked(source, "INVALID")
    assert _marked(source, "VALID")  # the shapes are there to be left alone


def test_the_source_a_raise_cites_is_what_its_callee_tests(tmp_path):
    source = _write(tmp_path)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    by_line = {f.line: f.message for f in findings if f.path.endswith("communicator.py")}
    lines = source.splitlines()
    rank_line = next(i for i, line in enumerate(lines, 1) if "INVALID: the rank decides" in line)
    assert "rank id" in by_line[rank_line]
    disk_line = next(i for i, line in enumerate(lines, 1) if "INVALID: this rank's own disk" in line)
    assert "filesystem" in by_line[disk_line] or "local" in by_line[disk_line]


def test_the_callee_file_adds_nothing_but_what_it_raises(tmp_path):
    """A callee file read for its raises contributes no finding of its own
    and leaves the same findings with one worker or two."""
    _write(tmp_path)
    one = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    two = check_paths([str(tmp_path)], cache=False, jobs=2, report="per-site").findings
    assert [(f.path, f.line, f.message) for f in one] == [(f.path, f.line, f.message) for f in two]
    assert not [f for f in one if f.path.endswith("library.py")]
