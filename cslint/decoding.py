"""Reading Python source: the one decoder of ``cslint check`` and ``cslint fix``.

Python decides a source file's encoding the way PEP 263 says: a UTF-8 byte
order mark, else a ``coding`` declaration in one of the first two lines,
else UTF-8.  :func:`decode_source` follows the same rule
(:func:`tokenize.detect_encoding`), so the analysis (which hands the bytes to
``ast.parse``), the positions of findings and the codemods all see the same
text, and :meth:`DecodedSource.encode` writes a fixed file back in its own
encoding, byte order mark included.

A file that is neither valid in its declared encoding nor, without a
declaration, valid UTF-8 raises :class:`SourceDecodeError`; ``check``
reports it as CSL001 and ``fix`` refuses to touch it.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass

#: What ``check`` says about a file that is not UTF-8 and declares nothing else.
NOT_UTF8 = "not valid UTF-8 and no coding declaration"


class SourceDecodeError(ValueError):
    """Source bytes that are not text in the encoding Python would use."""


@dataclass(frozen=True)
class DecodedSource:
    """A module's text and the encoding it came in.

    ``text`` has no byte order mark and keeps the file's own line endings;
    ``encoding`` is the codec name :func:`tokenize.detect_encoding` gives
    (``utf-8-sig`` for a file with a byte order mark)."""

    text: str
    encoding: str = "utf-8"

    def encode(self, text: str) -> bytes:
        """``text`` in this source's encoding (a byte order mark again if the
        file had one).  Raises :class:`UnicodeEncodeError` for characters the
        encoding cannot hold."""
        return text.encode(self.encoding)


def decode_source(data: bytes) -> DecodedSource:
    """The text of a module's bytes, decoded as Python would decode them."""
    if data.isascii() and not _declares(data):
        return DecodedSource(data.decode("ascii"))
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if _declares(data) or data.startswith(codecs.BOM_UTF8):
            # an unknown encoding, or a declaration that contradicts the byte order mark
            raise SourceDecodeError(f"cannot decode source: {exc}") from None
        encoding = "utf-8"  # no declaration, and a first line that is not UTF-8: said below, with its place
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        where = f"byte 0x{data[exc.start]:02x} on line {line}"
        if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig") and not _declares(data):
            raise SourceDecodeError(f"cannot decode source ({NOT_UTF8}): {where}") from None
        raise SourceDecodeError(f"cannot decode source as {encoding}, as its coding declaration says: {where}") \
            from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return DecodedSource(text, encoding)


def read_source(path: str) -> DecodedSource:
    """:func:`decode_source` of a file (``OSError`` when it cannot be read)."""
    with open(path, "rb") as handle:
        return decode_source(handle.read())


def utf8_source(data: bytes) -> bytes:
    """The source as ``ast`` counts columns: UTF-8 bytes of the decoded text,
    without a byte order mark.  ``data`` itself when it already is that, and
    when it cannot be decoded (``ast`` did not parse it either)."""
    if data.isascii():
        return data
    try:
        decoded = decode_source(data)
    except SourceDecodeError:
        return data
    if decoded.encoding == "utf-8":
        return data
    return decoded.text.encode("utf-8")


def _declares(data: bytes) -> bool:
    """Whether one of the first two lines holds a PEP 263 coding declaration."""
    end = data.find(b"\n")
    end = data.find(b"\n", end + 1) if end >= 0 else -1
    for line in (data if end < 0 else data[:end]).split(b"\n"):
        comment = line.lstrip(b" \t\f")
        if comment.startswith(b"#") and (b"coding:" in comment or b"coding=" in comment):
            return True
    return False
