"""On-disk cache of per-file facts in ``.cslint_cache/``.

Key: content hash + settings fingerprint + loaded presets + cslint version, so
a changed file, configuration or analyser never reuses stale facts.  A cache
that cannot be read or written is ignored silently: it only saves time.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from typing import Optional

from .. import __version__

CACHE_DIR = ".cslint_cache"
_FORMAT = "2"


class FactCache:
    def __init__(self, root: Optional[str]):
        self.directory = os.path.join(root or os.getcwd(), CACHE_DIR)
        self._ready = False

    def key(self, data: bytes, fingerprint: str, presets: tuple, path: str) -> str:
        digest = hashlib.sha256()
        for part in (_FORMAT, __version__, fingerprint, ",".join(presets), os.path.abspath(path)):
            digest.update(part.encode())
            digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".pickle")

    def get(self, key: str):
        try:
            with open(self._file(key), "rb") as handle:
                return pickle.load(handle)
        except Exception:
            return None

    def put(self, key: str, value) -> None:
        target = self._file(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not self._ready:
                tag = os.path.join(self.directory, "CACHEDIR.TAG")
                if not os.path.exists(tag):
                    with open(tag, "w") as handle:
                        handle.write("Signature: 8a477f597d28d172789f06886806bc55\n# cslint fact cache\n")
                self._ready = True
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target))
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except Exception:
            pass
