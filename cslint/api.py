"""The library entry point: ``check_paths``.

    from cslint.api import check_paths
    result = check_paths(["src/"])
    for finding in result.findings:
        print(finding.path, finding.line, finding.code, finding.message)

One run: discover files -> read -> byte prefilter -> parse + extract facts
(workers, cache) -> whole-tree analysis -> rules -> suppressions and
select/ignore -> :class:`~cslint.model.CheckResult`.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import os
from typing import Optional

from .config import ConfigError, Settings
from .discovery import DiscoveryOptions, discover_files, settings_resolver
from .model import CheckResult, Finding, Span
from .presets import load_presets
from .progress import MIN_FILES as PROGRESS_MIN_FILES, ProgressBar
from .rules import NotAnalysable, build_finding
from .suppressions import MARKER, apply_suppressions, find_suppressions
from .analysis import index as indexmod
from .analysis.cache import FactCache
from .analysis.facts import FileFacts, merge_partial
from .analysis.prefilter import SiteFilter, WrapperDefinitions, WrapperPrefilter, forget_import_statements
from .analysis.hazards import find_hazards
from .analysis.program import Program
from .analysis.uniformity import UniformityInfo

__all__ = ["check_paths", "check_source"]


def _default_jobs() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


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
) -> CheckResult:
    """Check files and directories for collectives whose participation
    depends on rank-local state.

    ``settings=None`` discovers ``[tool.cslint]`` per path.  ``context`` paths
    are analysed for interprocedural facts only; their findings are not
    reported.  ``select``/``ignore`` override the configured selection;
    ``discovery`` the configured force-exclude and .gitignore handling.
    Raises :class:`~cslint.config.ConfigError` for a broken configuration.
    """
    # The run allocates millions of small tuples, frozensets and AST nodes that
    # live until it ends; the cyclic collector would rescan them over and over
    # (a third of the run time on large trees) and find next to no garbage.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_paths(paths, settings=settings, select=select, ignore=ignore, jobs=jobs,
                            cache=cache, context=context, progress=progress, discovery=discovery)
    finally:
        if was_enabled:
            gc.enable()


def _check_paths(paths, *, settings, select, ignore, jobs, cache, context, progress, discovery) -> CheckResult:
    settings_for = settings_resolver(settings)
    result = CheckResult()
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
    indexmod.remember_knowledge(tuple(preset_names), knowledge)  # workers inherit it
    fact_cache = FactCache(_cache_root(settings, all_files)) if cache else None
    bar = ProgressBar() if progress and len(all_files) > PROGRESS_MIN_FILES else None
    try:
        return _analyse(result, all_files, report_files, knowledge, preset_names, settings, select, ignore,
                        jobs, fact_cache, bar)
    finally:
        if bar is not None:
            bar.close()


def _analyse(result: CheckResult, all_files: list, report_files: list, knowledge, preset_names: list,
             settings: Optional[Settings], select, ignore, jobs: int, fact_cache, bar) -> CheckResult:
    module_of = indexmod.ModuleNames()
    with indexmod.Workers(jobs, len(all_files)) as workers:
        for f in all_files:
            indexmod.read_file(f)
        found = None
        if fact_cache is not None:
            # An unchanged tree, configuration and preset list gives the
            # analysis of an earlier run without parsing anything.
            analysis_key = fact_cache.run_key(_analysis_inputs(all_files, preset_names, module_of))
            found = fact_cache.get_run(analysis_key)
        if found is None:
            facts_by_real = _gather_facts(all_files, knowledge, preset_names, workers, fact_cache, module_of, bar)
    if found is None:
        found = _analysis_findings(facts_by_real, all_files, knowledge, bar)
        if fact_cache is not None:
            fact_cache.put_run(analysis_key, found)

    # From here on, files are named as this run named them.
    spelled = {f.real: f.path for f in all_files}
    findings = [_spelled(finding, spelled) for finding in found]

    # suppressions: only files whose bytes mention the marker need a scan
    suppressions: dict = {}
    for f in report_files:
        if f.data is not None and MARKER in f.data:
            try:
                text = f.data.decode("utf-8", errors="replace")
            except Exception:  # pragma: no cover
                continue
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
        if s.code_enabled(finding.code, finding.path):
            selected.append(finding)
    result.findings = sorted(selected, key=Finding.sort_key)
    return result


def _analysis_findings(facts_by_real: dict, all_files: list, knowledge, bar) -> list:
    """The findings of the reported files (CSL001 and hazards) before
    suppressions and selection, each file named by its resolved path."""
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

    program = Program(all_facts, knowledge)
    if bar is not None:
        bar.note(f"whole-tree analysis of {len(program.funcs)} functions")
    program.solve()
    data_of = {f.real: f.data for f in all_files if f.report}
    for hazard in find_hazards(UniformityInfo(program)):
        if hazard.path not in reported:
            continue
        data = data_of.get(hazard.path)
        finding = build_finding(hazard, _text_slicer(data))
        if finding is not None:
            findings.append(_in_characters(finding, data))
    return findings


def _spelled(finding: Finding, spelled: dict) -> Finding:
    """``finding`` with its files named as this run named them."""
    chain = [link if link.path not in spelled else dataclasses.replace(link, path=spelled[link.path])
             for link in finding.chain]
    return dataclasses.replace(finding, path=spelled.get(finding.path, finding.path), chain=chain)


def _analysis_inputs(all_files: list, preset_names: list, module_of):
    """Everything the analysis of a run depends on, file by file: what
    :func:`_analysis_findings` returns is a function of these parts alone
    (see :mod:`cslint.analysis.cache`)."""
    import hashlib

    yield "presets=" + ",".join(preset_names)
    for f in sorted(all_files, key=lambda f: f.real):
        content = hashlib.sha1(f.data).hexdigest() if f.data is not None else f"problem:{f.problem}"
        yield f"{f.real}|{module_of(f.real)}|{int(f.report)}|{int(f.explicit)}|{f.settings.fingerprint()}|{content}"


def _gather_facts(all_files: list, knowledge, preset_names: list, workers, fact_cache, module_of,
                  bar) -> dict:
    """Select the read files with the byte prefilter (rounds: names of
    wrappers found in one round select the files of the next) and extract
    their facts; resolved path -> FileFacts."""
    readable = [f for f in all_files if f.data is not None]
    user_patterns = {pattern for f in all_files for pattern in f.settings.collectives}
    may_hold_site = SiteFilter(knowledge, sorted(user_patterns))
    ambiguous = knowledge.ambiguous_names
    needles: set = set()

    facts_by_path: dict = {}
    data_by_path = {f.real: f for f in readable}
    remaining = list(readable)
    known_wrappers: set = set()

    def parse_and_merge(files, earlier: dict) -> bool:
        """Extract ``files`` (those in ``earlier`` as re-analysis patches);
        False when there was nothing to extract."""
        parsed = _parse(files, knowledge, preset_names, workers, fact_cache, module_of, known_wrappers, earlier, bar)
        for facts in parsed:
            before = earlier.get(facts.path)
            facts_by_path[facts.path] = facts if before is None else merge_partial(before, facts)
        return bool(parsed)

    rounds = 0
    try:
        while remaining:
            rounds += 1
            uses_wrapper = None
            if rounds > 1:
                uses_wrapper = WrapperPrefilter(needles, WrapperDefinitions(facts_by_path.values(), known_wrappers))
            rest: list = []

            def chosen(candidates=remaining, first=rounds == 1, uses_wrapper=uses_wrapper, rest=rest):
                # a generator: the workers start on the first files while the
                # prefilter is still reading the rest
                for f in candidates:
                    if (f.explicit and f.report) or (first and may_hold_site(f.data)) \
                            or (uses_wrapper is not None and uses_wrapper.search(f.data)):
                        yield f
                    else:
                        rest.append(f)

            # Files parsed before a wrapper they call was known get a deeper
            # look in the same batch as the next round's files (one wait fewer).
            deeper = [] if rounds == 1 else _deeper_look(facts_by_path, data_by_path, known_wrappers)
            if bar is not None:
                bar.start(f"analysing, round {rounds}", 0)
            found_any = parse_and_merge(itertools.chain(deeper, chosen()), {f.real: facts_by_path[f.real] for f in deeper})
            remaining = rest
            if not found_any:
                break
            new_names = _learn_wrappers(facts_by_path, known_wrappers, ambiguous)
            # a wrapper that is itself named like a collective (a coordinator's
            # ``all_reduce``) had its callers selected in the first round
            fresh = {n.encode() for n in new_names if may_hold_site.needs_comm(n) is not False} - needles
            if not fresh:
                break
            needles |= fresh
    finally:
        forget_import_statements()
    # Files summarised before the last wrappers were known get a deeper look.
    for _round in range(3):
        again = _deeper_look(facts_by_path, data_by_path, known_wrappers)
        if not again:
            break
        if bar is not None:
            bar.start("re-analysing callers of newly found wrappers", 0)
        parse_and_merge(again, {f.real: facts_by_path[f.real] for f in again})
        if not _learn_wrappers(facts_by_path, known_wrappers, ambiguous):
            break
    return facts_by_path


def _deeper_look(facts_by_path: dict, data_by_path: dict, known_wrappers: set) -> list:
    """The read files whose facts summarised a function that calls a
    wrapper known now."""
    return [data_by_path[path] for path, facts in facts_by_path.items()
            if facts.error is None and path in data_by_path and indexmod.needs_deeper_look(facts, known_wrappers)]


def _learn_wrappers(facts_by_path: dict, known_wrappers: set, ambiguous: frozenset) -> set:
    """Add the names of functions that reach a collective to `known_wrappers`;
    return the ones not known before (the next prefilter round's needles)."""
    names = set()
    for facts in facts_by_path.values():
        names |= indexmod.wrapper_names(facts, ambiguous)
    names -= known_wrappers
    known_wrappers |= names
    return names


def check_source(source: str, *, path: str = "<snippet>.py", presets: Optional[list] = None,
                 settings: Optional[Settings] = None) -> CheckResult:
    """Check one in-memory module (rule examples, tests, editors)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cslint-") as tmp:
        target = os.path.join(tmp, os.path.basename(path))
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(source)
        s = settings or Settings()
        if presets:
            s = dataclasses.replace(s, presets=list(dict.fromkeys(list(s.presets) + list(presets))))
        result = check_paths([target], settings=s, jobs=1)
        for finding in result.findings:
            finding.path = path
            finding.chain = [dataclasses.replace(link, path=path if link.path == target else link.path)
                             for link in finding.chain]
        return result


def _cache_root(settings: Optional[Settings], files: list) -> Optional[str]:
    if settings is not None and settings.root:
        return settings.root
    for f in files:
        if f.settings.root:
            return f.settings.root
    return None


def _parse(files, knowledge, preset_names: list, workers, fact_cache, module_of, deep_names: set,
           earlier: Optional[dict] = None, bar=None) -> list:
    """Facts of ``files`` (an iterable; from the cache or extracted by
    workers).  With ``earlier`` facts of the same bytes, only functions that
    ``deep_names`` now makes deep are extracted, as patches for
    ``merge_partial``.  A file is known by its resolved path: the facts and
    their cache entry are the same whatever path the user spelled."""
    out: list = []
    deep = frozenset(deep_names)
    deep_text = ",".join(sorted(deep_names))
    presets = tuple(preset_names)

    def jobs():
        for f in files:
            already_deep = None
            before = (earlier or {}).get(f.real)
            if before is not None and not before.skipped and before.error is None:
                already_deep = frozenset(i for i, fn in enumerate(before.functions) if fn.deep)
            module = module_of(f.real)
            store = None
            if fact_cache is not None:
                # the key covers the job below, all of it
                key = fact_cache.key("facts", f.real, module, f.settings.fingerprint(), ",".join(presets),
                                     deep_text, repr(sorted(already_deep) if already_deep is not None else None),
                                     f.data)
                cached = fact_cache.get(key)
                if isinstance(cached, FileFacts):
                    out.append(cached)
                    if bar is not None:
                        bar.expect()
                        bar.advance()
                    continue
                store = fact_cache.file_for(key)
            yield (f.real, f.data, f.settings, presets, module, deep, already_deep, store)

    if fact_cache is not None:
        fact_cache.prepare()
    return out + workers.map(jobs(), bar)


def _in_characters(finding: Finding, data: Optional[bytes]) -> Finding:
    """``ast`` columns count UTF-8 bytes; findings count characters (as ruff,
    editors, SARIF viewers and libcst do).  Only lines with non-ASCII bytes
    differ."""
    if not data or data.isascii():
        return finding
    lines = data.split(b"\n")

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


def _text_slicer(data: Optional[bytes]):
    """``text_of(span)`` over a file's bytes, for spans in ``ast``'s byte columns."""
    lines = data.split(b"\n") if data else []

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
