"""Run every benchmark script in bench/ in turn (``make bench``).

Each script prints its own table with a baseline measured in the same run;
this runner only sequences them and reports which ones failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["lint_speed.py", "codemod_speed.py", "sanitizer.py", "accuracy.py", "integrations.py"]


def main() -> int:
    failed = []
    for name in SCRIPTS:
        script = HERE / name
        if not script.exists():
            print(f"== {name}: missing, skipped")
            continue
        print(f"\n== {name}", flush=True)
        started = time.perf_counter()
        code = subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode
        print(f"== {name}: exit {code} in {time.perf_counter() - started:.1f} s", flush=True)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
