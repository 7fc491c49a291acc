"""Source encodings: what Python accepts, `check` and `fix` accept too.

A PEP 263 coding declaration and a UTF-8 byte order mark are read by one
decoder (:mod:`cslint.decoding`) in `check` (positions of findings, their
texts, suppressions) and in `fix` (which writes the file back in its own
encoding).  A file that is not UTF-8 and declares nothing else is CSL001 in
`check`, and `fix` leaves it alone.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from cslint.api import check_paths
from cslint.decoding import NOT_UTF8, SourceDecodeError, decode_source, utf8_source

BODY = textwrap.dedent("""\
    import torch.distributed as dist


    def step(t):
        label = "caf\u00e9"
        if dist.get_rank() == 0:
            mark = "\u00e9t\u00e9"; dist.all_reduce(t)  # r\u00e9duction
        return label
    """)
#: 1-based character column of `dist.all_reduce` on its line
CALL_COLUMN = len('        mark = "\u00e9t\u00e9"; ') + 1


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _declared(tmp_path, name="declared.py"):
    return _write(tmp_path / name, ("# -*- coding: latin-1 -*-\n" + BODY).encode("latin-1"))


def _with_bom(tmp_path, name="bom.py"):
    return _write(tmp_path / name, b"\xef\xbb\xbf" + BODY.encode("utf-8"))


def _cslint(cwd, *args, stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cslint", *args], cwd=str(cwd), input=stdin, capture_output=True,
                          timeout=120)


@pytest.mark.parametrize("make, line", [(_declared, 8), (_with_bom, 7)])
def test_check_reads_declared_encodings_and_byte_order_marks(tmp_path, make, line):
    path = make(tmp_path)
    result = check_paths([str(path)], cache=False)
    assert [(f.code, f.line) for f in result.findings] == [("CSL101", line)]
    finding = result.findings[0]
    # columns count characters of the decoded line, not bytes of the file
    assert finding.column == CALL_COLUMN
    assert finding.end_column == CALL_COLUMN + len("dist.all_reduce(t)")


@pytest.mark.parametrize("make, encoding", [(_declared, "latin-1"), (_with_bom, "utf-8-sig")])
def test_fix_writes_the_file_back_in_its_own_encoding(tmp_path, make, encoding):
    path = make(tmp_path)
    done = _cslint(tmp_path, "fix", "--write", "--unsafe-fixes", path.name)
    assert b"1 fixed" in done.stderr, done.stderr.decode(errors="replace")
    data = path.read_bytes()
    text = data.decode(encoding)  # still valid in its own encoding (a byte order mark kept)
    assert data.startswith(b"\xef\xbb\xbf") == (encoding == "utf-8-sig")
    assert "caf\u00e9" in text and "r\u00e9duction" in text
    ast.parse(data)
    assert check_paths([str(path)], cache=False).findings == []


def test_fix_from_stdin_answers_in_the_input_encoding(tmp_path):
    data = ("# -*- coding: latin-1 -*-\n" + BODY).encode("latin-1")
    done = _cslint(tmp_path, "fix", "--unsafe-fixes", "--stdin-filename", "step.py", "-", stdin=data)
    assert done.stdout != data and done.stdout.startswith(b"# -*- coding: latin-1 -*-\n")
    assert "caf\u00e9".encode("latin-1") in done.stdout
    ast.parse(done.stdout)


def test_undeclared_latin1_is_csl001_and_fix_leaves_it(tmp_path):
    path = _write(tmp_path / "undeclared.py", BODY.encode("latin-1"))
    result = check_paths([str(tmp_path)], cache=False)
    assert [(f.code, f.path) for f in result.findings] == [("CSL001", str(path))]
    assert NOT_UTF8 in result.findings[0].message and "line 5" in result.findings[0].message
    before = path.read_bytes()
    done = _cslint(tmp_path, "fix", "--write", "--unsafe-fixes", "undeclared.py")
    assert done.returncode in (0, 1), done.stderr
    assert path.read_bytes() == before


def test_decoder_follows_pep_263():
    assert decode_source(b"x = 1\n").text == "x = 1\n"
    declared = decode_source("# vim: set fileencoding=latin-1 :\ns = '\u00e9'\r\n".encode("latin-1"))
    assert declared.text.endswith("s = '\u00e9'\r\n") and declared.encoding == "iso-8859-1"
    assert declared.encode(declared.text) == "# vim: set fileencoding=latin-1 :\ns = '\u00e9'\r\n".encode("latin-1")
    bom = decode_source(b"\xef\xbb\xbfs = '\xc3\xa9'\n")
    assert bom.text == "s = '\u00e9'\n" and bom.encode(bom.text).startswith(b"\xef\xbb\xbf")
    with pytest.raises(SourceDecodeError, match=NOT_UTF8):
        decode_source(b"s = '\xe9'\n")
    with pytest.raises(SourceDecodeError, match="coding declaration says"):
        decode_source(b"# coding: utf-8\ns = '\xe9'\n")
    with pytest.raises(SourceDecodeError):
        decode_source(b"# coding: no-such-codec\ns = 1\n")
    # what ast counts columns in: UTF-8 of the decoded text, without the mark
    assert utf8_source("# coding: latin-1\ns = '\u00e9'\n".encode("latin-1")) == \
        "# coding: latin-1\ns = '\u00e9'\n".encode("utf-8")
    assert utf8_source(b"\xef\xbb\xbfs = 1\n") == b"s = 1\n"
