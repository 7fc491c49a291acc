"""A question to the file system about a file of the package itself is
answered alike on every rank (issue 14 §2.1, shared-config-file-read;
``analysis/packagefiles.py``).

Whether a path exists may differ from node to node: a prompt file on one
node's disk, a checkpoint only one rank wrote.  A path under the directory of
the module asking (a tuning table shipped beside the code) is a file of the
installed package, the same on every rank, so its existence decides nothing
that differs.  Each VALID shape sits beside INVALID ones that must still be
reported: a directory this rank was handed, a name that is the package's
directory on some paths only, and a file name made from this rank's id.  A
constant path under ``/proc`` is the kernel's view: whether it is there is
alike on every node; what it lists (``os.listdir("/proc/self/fd")``, the files
this process has open) is not, and a process's entry there (``f"/proc/{pid}"``,
``/proc/1/...``, ``/proc/self/fd/7``) says whether that process is alive or
that file open."""

import textwrap

from cslint.api import check_paths

TABLES = """
    import json
    import os
    from pathlib import Path

    import torch.distributed as dist

    _CONFIG_DIR = os.path.join(os.path.dirname(__file__), "configs", "tuning")


    def _table(world_size):
        path = os.path.join(_CONFIG_DIR, f"world={world_size}.json")
        if path not in _CACHE:
            if os.path.exists(path):
                with open(path) as handle:
                    _CACHE[path] = json.load(handle)
            else:
                _CACHE[path] = None
        return _CACHE[path]


    _CACHE = {}


    def exchange(tensor, world_size):
        if _table(world_size) is not None:                # VALID: a table shipped with the package
            dist.all_reduce(tensor)


    def exchange_beside(tensor):
        if (Path(__file__).parent / "weights.bin").is_file() or os.path.isdir(
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")):   # VALID
            dist.all_reduce(tensor)


    def exchange_given(tensor, root):
        path = os.path.join(root, "table.json")
        if os.path.exists(path):                          # INVALID: a directory this rank was handed
            dist.all_reduce(tensor)


    def exchange_rebound(tensor, root):
        path = os.path.dirname(__file__)
        if root:
            path = root
        if os.path.exists(path):                          # INVALID: the package's own only on some paths
            dist.all_reduce(tensor)


    def exchange_kernel(tensor):
        if os.path.isdir("/proc/self/fd"):                # VALID: the kernel's view, the same OS on every node
            dist.all_reduce(tensor)


    def exchange_alive(tensor, pid):
        if os.path.exists(f"/proc/{pid}"):                # INVALID: whether that process is alive
            dist.all_reduce(tensor)


    def exchange_open_files(tensor):
        if len(os.listdir("/proc/self/fd")) > 8:         # INVALID: the files this process has open
            dist.all_reduce(tensor)


    def exchange_open_file(tensor):
        if os.path.exists("/proc/self/fd/7"):             # INVALID: whether this process has that file open
            dist.all_reduce(tensor)


    def exchange_first_process(tensor):
        if os.path.isdir("/proc/1/cwd"):                  # INVALID: one process's own entry
            dist.all_reduce(tensor)


    def exchange_own(tensor):
        path = os.path.join(_CONFIG_DIR, f"rank{dist.get_rank()}.json")
        if os.path.exists(path):                          # INVALID: a file name made from this rank's id
            dist.all_reduce(tensor)
"""


def test_a_file_of_the_package_itself_is_there_alike_on_every_rank(tmp_path):
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tables.py").write_text(textwrap.dedent(TABLES))
    findings = check_paths([str(package)], cache=False, jobs=1, report="per-site").findings
    assert sorted(f.function for f in findings) == ["exchange_alive", "exchange_first_process", "exchange_given",
                                                     "exchange_open_file", "exchange_open_files", "exchange_own",
                                                     "exchange_rebound"]
