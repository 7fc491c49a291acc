"""Which source or chain a finding cites must not depend on where the tree
lives: atoms that tie in rank are ordered by a digest of their structure, and
atoms name the absolute path of their file.  The digest reads such a path
below the directory Python imports the file from (issue 12)."""

from cslint.analysis.divergence import structure_digest


def _tree(root, *files):
    for relative in files:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


def test_a_moved_tree_gives_its_atoms_the_same_digests(tmp_path):
    files = ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "script.py")
    here = _tree(tmp_path / "here" / "deeper", *files)
    there = _tree(tmp_path / "there", *files)
    for relative in files:
        atom_here = ("S", "call", "f()", str(here / relative), 3)
        atom_there = ("S", "call", "f()", str(there / relative), 3)
        assert structure_digest(atom_here, {}) == structure_digest(atom_there, {}), relative
        # nested inside a set of parts too
        assert structure_digest(frozenset({atom_here, ("x",)}), {}) == \
            structure_digest(frozenset({atom_there, ("x",)}), {})


def test_different_files_of_one_tree_keep_different_digests(tmp_path):
    root = _tree(tmp_path, "pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/sub/__init__.py")
    digests = {structure_digest(("S", str(root / name)), {})
               for name in ("pkg/a.py", "pkg/b.py", "pkg/__init__.py", "pkg/sub/__init__.py")}
    assert len(digests) == 4


def test_other_texts_are_digested_as_they_are():
    assert structure_digest("rank", {}) != structure_digest("world", {})
    assert structure_digest("/not/python.txt", {}) != structure_digest("/elsewhere/python.txt", {})
