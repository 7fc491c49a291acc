"""The library entry point: ``check_paths`` and ``check_source``.

    from cslint.api import check_paths
    result = check_paths(["src/"])
    for finding in result.findings:
        print(finding.path, finding.line, finding.code, finding.message)

A run (:mod:`cslint.engine.run`): discover files -> read -> byte prefilter ->
parse + extract facts (workers, cache) -> whole-tree analysis -> rules ->
suppressions and select/ignore -> :class:`~cslint.model.CheckResult`.
"""

from __future__ import annotations

import dataclasses
import gc
import os
from typing import Optional

from .config import ConfigError, Settings
from .engine.discovery import DiscoveryOptions
from .engine.run import run_check
from .model import CONFIDENCE_LEVELS, CheckResult
from .rules.rootcause import REPORT_MODES

__all__ = ["check_paths", "check_source"]


def check_paths(
    paths: list,
    *,
    settings: Optional[Settings] = None,
    select: Optional[list] = None,
    ignore: Optional[list] = None,
    jobs: Optional[int] = None,
    cache: bool = False,
    context: Optional[list] = None,
    progress: bool = False,
    discovery: DiscoveryOptions = DiscoveryOptions(),
    report: Optional[str] = None,
    min_confidence: Optional[str] = None,
) -> CheckResult:
    """Check files and directories for collectives whose participation
    depends on rank-local state.

    ``settings=None`` discovers ``[tool.cslint]`` per path.  ``context`` paths
    are analysed for interprocedural facts only; their findings are not
    reported.  ``select``/``ignore`` override the configured selection;
    ``discovery`` the configured force-exclude and .gitignore handling.
    ``report`` (``root-cause`` or ``per-site``) overrides the configured
    reporting (:mod:`cslint.rules.rootcause`), ``min_confidence`` (``low``,
    ``medium``, ``high``) the configured ``min-confidence``.
    Raises :class:`~cslint.config.ConfigError` for a broken configuration.
    """
    if report is not None and report not in REPORT_MODES:
        raise ConfigError(f"report must be one of {', '.join(REPORT_MODES)}, not {report!r}")
    if min_confidence is not None and min_confidence not in CONFIDENCE_LEVELS:
        raise ConfigError(f"min-confidence must be one of {', '.join(CONFIDENCE_LEVELS)}, not {min_confidence!r}")
    # The run allocates millions of small tuples, frozensets and AST nodes that
    # live until it ends; the cyclic collector would rescan them over and over
    # (a third of the run time on large trees) and find next to no garbage.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return run_check(paths, settings=settings, select=select, ignore=ignore, jobs=jobs,
                         cache=cache, context=context, progress=progress, discovery=discovery, report=report,
                         min_confidence=min_confidence)
    finally:
        if was_enabled:
            gc.enable()


def check_source(source: str, *, path: str = "<snippet>.py", presets: Optional[list] = None,
                 settings: Optional[Settings] = None, report: Optional[str] = None) -> CheckResult:
    """Check one in-memory module (rule examples, tests, editors)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cslint-") as tmp:
        target = os.path.join(tmp, os.path.basename(path))
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(source)
        s = settings or Settings()
        if presets:
            s = dataclasses.replace(s, presets=list(dict.fromkeys(list(s.presets) + list(presets))))
        result = check_paths([target], settings=s, jobs=1, report=report)
        for finding in result.findings:
            finding.path = path
            finding.chain = [dataclasses.replace(link, path=path if link.path == target else link.path)
                             for link in finding.chain]
        return result
