"""One run of ``cslint check``, start to end::

    discover -> read -> [whole-run cache] -> gather facts (prefilter rounds,
    workers, fact cache) -> whole-tree analysis -> hazards -> rules ->
    findings (resolved paths) -> [whole-run cache] -> the run's own spelling
    of paths -> suppressions -> select/ignore -> CheckResult

The whole-run cache keeps what the analysis found for a set of inputs
(:mod:`.cache`); everything after it depends on how this run named its
files and what it selected, so it is redone every run.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

from ..analysis.hazards import find_hazards
from ..analysis.program import Program
from ..analysis.stepreads import stepped
from ..analysis.uniformity import UniformityInfo
from ..config import ConfigError, Settings
from ..decoding import SourceDecodeError, decode_source, utf8_source
from ..model import CheckResult, Finding, Span
from ..presets import load_presets
from ..progress import MIN_FILES as PROGRESS_MIN_FILES, ProgressBar
from ..rules.rootcause import ROOT_CAUSE, group_by_root_cause
from ..rules import NotAnalysable, build_finding
from ..suppressions import MARKER, apply_suppressions, find_suppressions
from .cache import FactCache
from .discovery import ModuleNames, discover_files, read_file, settings_resolver
from .gather import FactGatherer
from ..analysis.groupgetters import learned_spans
from .ordering import OrdersAhead
from . import timeline
from .workers import RunContext, Workers


def _default_jobs() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def run_check(paths, *, settings, select, ignore, jobs, cache, context, progress, discovery,
              report=None, min_confidence=None) -> CheckResult:
    """One run of ``cslint check`` (see :func:`cslint.api.check_paths`)."""
    settings_for = settings_resolver(settings)
    result = CheckResult()
    with timeline.span("discovery"):
        discovered = discover_files(list(paths), settings_for, discovery)
    result.errors.extend(discovered.errors)
    report_files = discovered.files
    context_files: list = []
    if context:
        ctx_found = discover_files(list(context), settings_for, discovery)
        reported = {f.real for f in report_files}
        for f in ctx_found.files:
            if f.real not in reported:
                f.report = False
                context_files.append(f)
    all_files = report_files + context_files
    result.files = len(report_files)

    preset_names: list = []
    for f in all_files:
        for name in f.settings.presets:
            if name not in preset_names:
                preset_names.append(name)
    if not preset_names:
        preset_names = list((settings or Settings()).presets)
    try:
        knowledge = load_presets(preset_names)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc

    jobs = _default_jobs() if jobs is None else max(1, int(jobs))
    fact_cache = FactCache(_cache_root(settings, all_files)) if cache else None
    bar = ProgressBar() if progress and len(all_files) > PROGRESS_MIN_FILES else None
    try:
        return _analyse(result, all_files, report_files, knowledge, preset_names, settings, select, ignore,
                        jobs, fact_cache, bar, report, min_confidence)
    finally:
        if bar is not None:
            bar.close()


def _analyse(result: CheckResult, all_files: list, report_files: list, knowledge, preset_names: list,
             settings: Optional[Settings], select, ignore, jobs: int, fact_cache, bar,
             report: Optional[str] = None, min_confidence: Optional[str] = None) -> CheckResult:
    module_of = ModuleNames()
    module_of.settle(f.real for f in all_files)
    with timeline.span("workers forked"):
        workers = Workers(jobs, len(all_files), RunContext(tuple(preset_names), knowledge))
    with workers:
        found = None
        if fact_cache is not None:
            for f in all_files:
                if f.data is None and f.problem is None:
                    read_file(f)
            # An unchanged tree, configuration and preset list gives the
            # analysis of an earlier run without parsing anything.
            analysis_key = fact_cache.run_key(_analysis_inputs(all_files, preset_names, module_of))
            found = fact_cache.get_run(analysis_key)
            if found is None:
                # every cached fact's key holds what the tree's own group
                # getters define: known before the first job
                workers.learn_spans(learned_spans(f.data for f in all_files))
        if found is None:
            # (files not read yet are read by the first prefilter round, as
            # it goes: the workers start on the first ones meanwhile, and
            # it learns what the getters define as it goes)
            gatherer = FactGatherer(workers.context.knowledge, preset_names, workers, fact_cache, module_of, bar)
            with timeline.span("gather"):
                facts_by_real = gatherer.gather(all_files)
            # (the workers stay up through the pass: they work out the
            # summaries left pending that the pass reads)
            with timeline.span("whole-tree pass"):
                found = _analysis_findings(facts_by_real, all_files, gatherer.knowledge, bar,
                                           workers.pool is not None, gatherer.callee_facts, module_of)
            if fact_cache is not None:
                fact_cache.put_run(analysis_key, found)
    timeline.mark("workers closed")

    # From here on, files are named as this run named them.
    spelled = {f.real: f.path for f in all_files}
    findings = [_spelled(finding, spelled) for finding in found]

    # suppressions: only files whose bytes mention the marker need a scan
    suppressions: dict = {}
    for f in report_files:
        if f.data is not None and MARKER in f.data:
            try:
                text = decode_source(f.data).text
            except SourceDecodeError:
                text = f.data.decode("utf-8", errors="replace")
            found_here = find_suppressions(text)
            if found_here:
                suppressions[f.path] = found_here
    kept, unused = apply_suppressions(findings, suppressions)
    findings = kept + unused

    settings_of = {f.path: f.settings for f in all_files}
    selected = []
    for finding in findings:
        s = settings_of.get(finding.path) or settings or Settings()
        if select is not None or ignore is not None:
            s = dataclasses.replace(s, select=list(select) if select is not None else s.select,
                                    ignore=list(s.ignore) + list(ignore or []))
        if not s.code_enabled(finding.code, finding.path):
            continue
        # Below the confidence asked for, a finding is counted, not shown: the
        # analysis has a strong reason to doubt it (see Rule.confidence).
        if finding.confidence is not None and not finding.confidence.at_least(min_confidence or s.min_confidence):
            result.below_confidence += 1
            continue
        selected.append(finding)
    # one finding per guard where the caller or the file's settings ask for it
    by_guard = [f for f in selected
                if (report or (settings_of.get(f.path) or settings or Settings()).report) == ROOT_CAUSE]
    if by_guard:
        grouped = {id(f) for f in by_guard}
        selected = group_by_root_cause(by_guard) + [f for f in selected if id(f) not in grouped]
    result.findings = sorted(selected, key=Finding.sort_key)
    return result


def _analysis_findings(facts_by_real: dict, all_files: list, knowledge, bar, parallel: bool = False,
                       callee_facts: Optional[dict] = None, module_of: Optional[ModuleNames] = None) -> list:
    """The findings of the reported files (CSL001 and hazards) before
    suppressions and selection, each file named by its resolved path.
    ``parallel``: the run had worker processes (whose cores are free now);
    ``callee_facts``: the facts of files read only for what their functions
    raise (:attr:`~cslint.analysis.program.Program.callees`).  The analysis
    also knows which module files of the run exist beside those it analysed:
    their names, as the run names them (``module_of``, the run's
    ``ModuleNames`` settled over the same files, part of the run's cache
    key; made here where the caller has none)."""
    reported = {f.real for f in all_files if f.report}
    findings: list = []
    for f in all_files:
        if f.report and f.problem is not None:
            findings.append(NotAnalysable.finding(f.real, f.problem))
    # The whole-tree analysis visits functions in the order of its input;
    # path order makes that independent of which files came from the cache,
    # of the prefilter round that selected them and of the worker that
    # parsed them.
    all_facts = [facts_by_real[real] for real in sorted(facts_by_real)]
    for facts in all_facts:
        if facts.error is not None and facts.path in reported:
            findings.append(NotAnalysable.finding(facts.path, facts.error, facts.error_line, facts.error_column))

    callees = [callee_facts[real] for real in sorted(callee_facts or {})]
    if module_of is None:
        module_of = ModuleNames()
        module_of.settle(f.real for f in all_files)
    discovered = frozenset(module_of(f.real) for f in all_files if f.problem is None)
    with timeline.span("Program built"):
        program = Program(all_facts, knowledge, callees, discovered)
    if bar is not None:
        bar.note(f"whole-tree analysis of {len(program.funcs)} functions")
    # the cores the workers used would sit idle: one orders atom sets ahead
    with timeline.span("demand"):
        stepped(program)
    with timeline.span("helper forked"):
        program.orders_ahead = OrdersAhead.start(program) if parallel else None
    try:
        with timeline.span("fixpoint"):
            program.solve()
        with timeline.span("hazards"):
            hazards = find_hazards(UniformityInfo(program))
    finally:
        if program.orders_ahead is not None:
            program.orders_ahead.close()
            program.orders_ahead = None
    with timeline.span("findings built"):
        _build_findings(hazards, all_files, reported, findings)
    return findings


def _build_findings(hazards: list, all_files: list, reported: set, findings: list) -> None:
    """Add the finding of each hazard in a reported file to ``findings``."""
    data_of = {f.real: f.data for f in all_files if f.report}
    lines_of: dict = {}  # resolved path -> its lines as ast counted columns, split once per file
    for hazard in hazards:
        if hazard.path not in reported:
            continue
        if hazard.path not in lines_of:
            lines_of[hazard.path] = _source_lines(data_of.get(hazard.path))
        lines = lines_of[hazard.path]
        finding = build_finding(hazard, _text_slicer(lines))
        if finding is not None:
            findings.append(_in_characters(finding, lines))


def _source_lines(data: Optional[bytes]) -> tuple:
    """(lines, all ASCII) of a file's source as ``ast`` counts its columns:
    UTF-8 of the decoded text, whatever the file's encoding
    (:func:`~cslint.decoding.utf8_source`)."""
    if not data:
        return [], True
    data = utf8_source(data)
    return data.split(b"\n"), data.isascii()


def _spelled(finding: Finding, spelled: dict) -> Finding:
    """``finding`` with its files named as this run named them."""
    chain = [link if link.path not in spelled else dataclasses.replace(link, path=spelled[link.path])
             for link in finding.chain]
    upstream = finding.upstream
    if upstream is not None and upstream.path in spelled:
        upstream = dataclasses.replace(upstream, path=spelled[upstream.path])
    return dataclasses.replace(finding, path=spelled.get(finding.path, finding.path), chain=chain, upstream=upstream)


def _analysis_inputs(all_files: list, preset_names: list, module_of):
    """Everything the analysis of a run depends on, file by file: what
    :func:`_analysis_findings` returns is a function of these parts alone
    (see :mod:`cslint.analysis.cache`)."""
    import hashlib

    yield "presets=" + ",".join(preset_names)
    for f in sorted(all_files, key=lambda f: f.real):
        content = hashlib.sha1(f.data).hexdigest() if f.data is not None else f"problem:{f.problem}"
        yield f"{f.real}|{module_of(f.real)}|{int(f.report)}|{int(f.explicit)}|{f.settings.fingerprint()}|{content}"


def _cache_root(settings: Optional[Settings], files: list) -> Optional[str]:
    if settings is not None and settings.root:
        return settings.root
    for f in files:
        if f.settings.root:
            return f.settings.root
    return None


def _in_characters(finding: Finding, source: tuple) -> Finding:
    """``ast`` columns count UTF-8 bytes; findings count characters (as ruff,
    editors, SARIF viewers and libcst do).  Only lines with non-ASCII bytes
    differ.  ``source``: :func:`_source_lines` of the file."""
    lines, ascii_only = source
    if ascii_only:
        return finding

    def column(line: int, byte_column: int) -> int:
        if not 1 <= line <= len(lines) or lines[line - 1].isascii():
            return byte_column
        return len(lines[line - 1][: byte_column - 1].decode("utf-8", "replace")) + 1

    def span(value: Optional[Span]) -> Optional[Span]:
        if value is None:
            return None
        return Span(value.line, column(value.line, value.column), value.end_line,
                    column(value.end_line, value.end_column))

    facts = finding.fix_facts
    if facts is not None and facts.payload is not None:
        facts = dataclasses.replace(facts, payload=dataclasses.replace(facts.payload, span=span(facts.payload.span)))
    return dataclasses.replace(
        finding, column=column(finding.line, finding.column),
        end_column=column(finding.end_line, finding.end_column), guard=span(finding.guard), fix_facts=facts)


def _text_slicer(source: tuple):
    """``text_of(span)`` over a file's :func:`_source_lines`, for spans in
    ``ast``'s byte columns."""
    lines = source[0]

    def text_of(span: Span) -> str:
        if not 1 <= span.line <= span.end_line <= len(lines):
            return ""
        if span.line == span.end_line:
            piece = lines[span.line - 1][span.column - 1:span.end_column - 1]
        else:
            piece = b"\n".join([lines[span.line - 1][span.column - 1:]] + lines[span.line:span.end_line - 1]
                               + [lines[span.end_line - 1][:span.end_column - 1]])
        return piece.decode("utf-8", "replace").replace("\r", "")

    return text_of
