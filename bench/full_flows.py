"""Every link of the flows behind a tree's findings, for a developer asking
which step made a value rank-local.

An explanation shows the first ``divergence.MAX_VIA`` links of a flow (a
longer one carries the "flow-cut" doubt); the whole-tree pass keeps up to
``divergence.MAX_KEPT_VIA``.  This script raises what an explanation shows
to what the pass keeps, for its own run only (never part of cslint's output),
and prints each finding whose flow is longer than ``--longer-than`` links
(default: what an explanation shows), with the source line of every link,
from the source onwards::

    PYTHONPATH=. .venv/bin/python bench/full_flows.py --config bench/realtree/cslint.toml PATH...

With more links shown, a finding's other doubts (``constructed``: a
constructor on the shown links) are read over the whole flow, so they may
differ from an ordinary run's.
"""

from __future__ import annotations

import argparse
import linecache
import os
import sys

from cslint.analysis import divergence
from cslint.api import check_paths
from cslint.config import load_settings


def flow_links(finding) -> list:
    """The links of ``finding``'s flow, from its source to the condition."""
    return [link for link in reversed(finding.chain) if link.kind in ("flow", "source")]


def describe(finding, root: str) -> list:
    """Lines telling ``finding`` and every link of its flow with its source line."""
    lines = [f"{finding.path}:{finding.line} {finding.code} when `{finding.condition}`"]
    for link in flow_links(finding):
        path = link.path if os.path.isabs(link.path) else os.path.join(root, link.path)
        code = linecache.getline(path, link.line).strip()
        lines.append(f"    {link.path}:{link.line}: {code[:120]}")
        lines.append(f"        {link.note}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--config", help="a cslint configuration file (default: discovered per path)")
    parser.add_argument("--longer-than", type=int, default=divergence.MAX_VIA,
                        help="print findings whose flow has more links than this (default: %(default)s)")
    args = parser.parse_args(argv)
    shown = divergence.MAX_VIA
    divergence.MAX_VIA = divergence.MAX_KEPT_VIA  # this run's explanations show every link kept
    try:
        settings = load_settings(config_file=args.config) if args.config else None
        result = check_paths(args.paths, settings=settings, jobs=1)
    finally:
        divergence.MAX_VIA = shown
    root = os.getcwd()
    for finding in result.findings:
        if len(flow_links(finding)) > args.longer_than:
            print("\n".join(describe(finding, root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
