"""Scoring of the field corpus: hangs fixed in real projects, and safe look-alikes.

Every case is a folder of ``tests/field`` listed in ``MANIFEST.tsv``:

- ``kind=bug``: ``buggy.py`` (the shape before the upstream fix, the hazardous
  collective lines ending in ``# expect: CSL10x`` as in the real_shapes
  corpus) and ``fixed.py`` (the shape of the fix);
- ``kind=negative``: ``negative.py``, real code that looks divergent but is safe.

Any other ``.py`` file of the folder is a support module the variant imports;
it is analysed together with the variant.  Each variant is analysed on its
own (the buggy and fixed variants define the same names, and a linter that
resolves calls by name would otherwise mix them up).

Verdicts, per case:

- buggy *flagged*: a CSL1xx finding on a marked line;
- fixed *clean*: no CSL1xx finding in fixed.py or its support modules;
- negative *clean*: no CSL1xx finding in negative.py or its support modules.

Findings on unmarked lines of a buggy variant are kept as *extra* findings
(reported, but they neither make nor break the case).

Used by ``tests/test_field_corpus.py`` and ``bench/accuracy.py``.
"""

from __future__ import annotations

import ast
import json
import pickle
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from cslint.boundedruns import kill_session, start_bounded

FIELD = Path(__file__).resolve().parent
MANIFEST = FIELD / "MANIFEST.tsv"
#: The knowledge packs the corpus is analysed with: every pack.
PRESETS = ["torch_distributed", "mpi4py", "tensorrt_llm", "vllm", "sglang", "deepspeed", "megatron", "accelerate",
           "lightning"]
FAMILY = "CSL1"
MARKER = re.compile(r"#\s*expect:\s*(CSL\d{3})")
COLUMNS = ("id", "kind", "project", "category", "group", "expected", "reference")
#: issue 15 part 2's list of what the field needs, plus "other".
BUG_CATEGORIES = (
    "library-collectives", "per-rank-data", "per-rank-loaders", "lazy-registries", "local-queues",
    "background-thread", "local-fs-exceptions", "cross-module-early-return", "other",
)
VARIANT_FILES = {"bug": ("buggy", "fixed"), "negative": ("negative",)}
RULE_CODE = re.compile(r"CSL10[1-4]$")


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    project: str
    category: str
    group: str
    expected: str
    reference: str
    folder: Path

    @property
    def variants(self) -> tuple:
        return VARIANT_FILES.get(self.kind, ())

    def variant_file(self, variant: str) -> Path:
        return self.folder / f"{variant}.py"

    def support_modules(self) -> list:
        """The folder's other Python files (imported by the variants)."""
        variant_names = {f"{v}.py" for kinds in VARIANT_FILES.values() for v in kinds}
        return sorted(p for p in self.folder.glob("*.py") if p.name not in variant_names)

    def files(self, variant: str) -> list:
        return [self.variant_file(variant)] + self.support_modules()


@dataclass
class Finding:
    path: str  # relative to the case folder
    line: int
    code: str
    message: str


@dataclass
class VariantResult:
    case: str
    variant: str
    findings: list = field(default_factory=list)  # CSL1xx findings
    errors: list = field(default_factory=list)  # CSL001 and file errors
    marked: dict = field(default_factory=dict)  # {(path, line): expected code}

    @property
    def clean(self) -> bool:
        return not self.findings

    @property
    def hits(self) -> list:
        """Findings on marked lines."""
        return [f for f in self.findings if (f.path, f.line) in self.marked]

    @property
    def flagged(self) -> bool:
        return bool(self.hits)

    @property
    def extra(self) -> list:
        """Findings on unmarked lines."""
        return [f for f in self.findings if (f.path, f.line) not in self.marked]


@dataclass
class FieldScore:
    cases: list
    results: dict  # {case id: {variant: VariantResult}}

    def _bugs(self):
        return [c for c in self.cases if c.kind == "bug"]

    def _negatives(self):
        return [c for c in self.cases if c.kind == "negative"]

    @property
    def buggy_flagged(self) -> list:
        return [c for c in self._bugs() if self.results[c.id]["buggy"].flagged]

    @property
    def buggy_missed(self) -> list:
        return [c for c in self._bugs() if not self.results[c.id]["buggy"].flagged]

    @property
    def fixed_clean(self) -> list:
        return [c for c in self._bugs() if self.results[c.id]["fixed"].clean]

    @property
    def fixed_flagged(self) -> list:
        return [c for c in self._bugs() if not self.results[c.id]["fixed"].clean]

    @property
    def negatives_clean(self) -> list:
        return [c for c in self._negatives() if self.results[c.id]["negative"].clean]

    @property
    def negatives_flagged(self) -> list:
        return [c for c in self._negatives() if not self.results[c.id]["negative"].clean]

    @property
    def errors(self) -> list:
        return [f"{case}/{variant}: {error}" for case, variants in sorted(self.results.items())
                for variant, result in sorted(variants.items()) for error in result.errors]

    def by_category(self) -> dict:
        """{category: [flagged, bugs, fixed clean]} over the bug cases."""
        table: dict = defaultdict(lambda: [0, 0, 0])
        for case in self._bugs():
            row = table[case.category]
            row[0] += self.results[case.id]["buggy"].flagged
            row[1] += 1
            row[2] += self.results[case.id]["fixed"].clean
        return dict(sorted(table.items()))


# -- the manifest ---------------------------------------------------------------------


def load_manifest(path: Path = MANIFEST) -> list:
    """The cases listed in the manifest (comment lines start with '#')."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    header = tuple(lines[0].split("\t"))
    if header != COLUMNS:
        raise ValueError(f"{path}: header is {header}, expected {COLUMNS}")
    cases = []
    for number, line in enumerate(lines[1:], start=2):
        values = line.split("\t")
        if len(values) != len(COLUMNS):
            raise ValueError(f"{path}: row {number} has {len(values)} columns, expected {len(COLUMNS)}")
        row = dict(zip(COLUMNS, values))
        cases.append(Case(folder=path.parent / row["id"], **row))
    return cases


def markers(path: Path) -> dict:
    """{line: expected code} of the `# expect:` markers in a file."""
    found = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARKER.search(text)
        if match:
            found[number] = match.group(1)
    return found


def problems(cases: Iterable, root: Path = FIELD) -> list:
    """Everything that makes the corpus malformed, as readable sentences."""
    cases = list(cases)
    out = []
    ids = [c.id for c in cases]
    for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
        out.append(f"{duplicate}: listed more than once")
    folders = {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    for unlisted in sorted(folders - set(ids)):
        out.append(f"{unlisted}: folder not in the manifest")
    for case in cases:
        out.extend(f"{case.id}: {problem}" for problem in _case_problems(case))
    return out


def _case_problems(case: Case) -> list:
    out = []
    if case.kind not in VARIANT_FILES:
        return [f"kind {case.kind!r} is neither 'bug' nor 'negative'"]
    if not case.folder.is_dir():
        return ["no folder"]
    if not case.reference.strip() or case.reference.strip() == "-":
        out.append("no upstream reference")
    if case.kind == "bug":
        if case.category not in BUG_CATEGORIES:
            out.append(f"category {case.category!r} is not one of {', '.join(BUG_CATEGORIES)}")
        if not RULE_CODE.match(case.expected):
            out.append(f"expected rule {case.expected!r} is not a CSL101-CSL104 code")
    other_kind = [v for kind, variants in VARIANT_FILES.items() if kind != case.kind for v in variants]
    for variant in other_kind:
        if case.variant_file(variant).exists():
            out.append(f"{variant}.py does not belong to a {case.kind} case")
    for variant in case.variants:
        path = case.variant_file(variant)
        if not path.exists():
            out.append(f"{variant}.py is missing")
            continue
        if "Upstream:" not in _docstring(path):
            out.append(f"{variant}.py has no header docstring with an 'Upstream:' reference")
        marked = markers(path)
        if variant == "buggy":
            if not marked:
                out.append("buggy.py marks no collective line with '# expect: CSL10x'")
            wrong = sorted({code for code in marked.values() if code != case.expected})
            if wrong:
                out.append(f"buggy.py marks {', '.join(wrong)} but the manifest expects {case.expected}")
        elif marked:
            out.append(f"{variant}.py carries '# expect:' markers (only buggy.py may)")
    for path in sorted(case.folder.glob("*.py")):
        try:
            ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as exc:
            out.append(f"{path.name} does not parse: {exc.msg} (line {exc.lineno})")
    return out


def _docstring(path: Path) -> str:
    try:
        return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except SyntaxError:
        return ""


# -- analysis -------------------------------------------------------------------------


#: Projects where an exception that leaves one rank strands the others
#: (``unhandled-exceptions = "hang"``): TensorRT-LLM's MPI-launched executors
#: (the tensorrt_llm preset's choice), and Megatron-LM, whose own fix for a
#: source-rank failure (2985de84) says the peers hang until the NCCL timeout
#: (srun does not end the other tasks by default).  The others run under
#: launchers that tear the job down (torchrun, the DeepSpeed launcher): ``crash``.
HANG_PROJECTS = frozenset({"TensorRT-LLM", "Megatron-LM"})


def cslint_check(paths: list, unhandled_exceptions: str = "crash"):
    """`cslint.api.check_paths` with the corpus presets and no cache."""
    from cslint.api import check_paths
    from cslint.config import Settings

    settings = Settings(presets=list(PRESETS), unhandled_exceptions=unhandled_exceptions)
    return check_paths([str(p) for p in paths], settings=settings, cache=False)


def analyse_variant(case: Case, variant: str, check: Callable = cslint_check) -> VariantResult:
    """Run `check` over one variant and its support modules and sort the findings."""
    files = case.files(variant)
    result = VariantResult(case.id, variant)
    for path in files:
        for line, code in markers(path).items():
            result.marked[(path.name, line)] = code
    if check is cslint_check:
        outcome = check(files, "hang" if case.project in HANG_PROJECTS else "crash")
    else:
        outcome = check(files)
    folder = case.folder.resolve()
    for finding in outcome.findings:
        where = Path(finding.path).resolve()
        name = where.name if where.parent == folder else str(where)
        if finding.code.startswith(FAMILY):
            # a finding reported by root cause stands for every site its guard decides
            for line in dict.fromkeys([finding.line] + [site.line for site in getattr(finding, "sites", ())]):
                result.findings.append(Finding(name, line, finding.code, finding.message))
        else:
            result.errors.append(f"{name}:{finding.line}: {finding.code} {finding.message}")
    for error in outcome.errors:
        result.errors.append(f"{error.path}: {error.message}")
    result.findings.sort(key=lambda f: (f.path, f.line, f.code))
    return result


def score_cases(cases: Iterable, check: Callable = cslint_check) -> FieldScore:
    cases = list(cases)
    results = {case.id: {variant: analyse_variant(case, variant, check) for variant in case.variants}
               for case in cases}
    return FieldScore(cases, results)


def score_field() -> FieldScore:
    return score_cases(load_manifest())


class AnalysisTimeout(RuntimeError):
    """The analysis of the field corpus did not finish in time."""


def score_field_in_subprocess(timeout: float) -> FieldScore:
    """`score_field()` in a child process killed after `timeout` seconds."""
    code = ("import pickle, sys; sys.path.insert(0, sys.argv[1]); import field_scoring; "
            "sys.stdout.buffer.write(pickle.dumps(field_scoring.score_field()))")
    process = start_bounded([sys.executable, "-c", code, str(FIELD)], timeout, cwd=str(FIELD.parent.parent),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_session(process)
        process.communicate()
        raise AnalysisTimeout(f"cslint did not finish analysing the field corpus within {timeout:.0f}s") from None
    if process.returncode != 0:
        raise RuntimeError(f"field scoring failed:\n{stderr.decode(errors='replace')[-2000:]}")
    return pickle.loads(stdout)


# -- reports --------------------------------------------------------------------------


def _ratio(part: list, whole: int) -> str:
    return f"{len(part)}/{whole}" + (f" ({len(part) / whole:.2f})" if whole else "")


def summary_lines(score: FieldScore) -> list:
    bugs = sum(c.kind == "bug" for c in score.cases)
    negatives = sum(c.kind == "negative" for c in score.cases)
    return [
        f"field corpus (tests/field): {bugs} fixed hangs from "
        f"{len({c.project for c in score.cases if c.kind == 'bug'})} projects, {negatives} negatives",
        f"  buggy flagged at the marked line  {_ratio(score.buggy_flagged, bugs)}",
        f"  fixed variant clean               {_ratio(score.fixed_clean, bugs)}",
        f"  negatives clean                   {_ratio(score.negatives_clean, negatives)}",
    ]


def format_report(score: FieldScore) -> str:
    """Summary, per-category table, then every miss and false alarm."""
    out = summary_lines(score)
    out.append("")
    header = f"  {'category':28} {'flagged':>8} {'fixed clean':>12}"
    out.append(header)
    for category, (flagged, total, clean) in score.by_category().items():
        out.append(f"  {category:28} {flagged:>3}/{total:<4} {clean:>7}/{total:<4}")
    out.append("")
    out.append(f"  missed ({len(score.buggy_missed)}): buggy variant with no finding on a marked line")
    for case in score.buggy_missed:
        result = score.results[case.id]["buggy"]
        elsewhere = ", ".join(f"{f.path}:{f.line} {f.code}" for f in result.findings)
        out.append(f"    {case.id}" + (f"  [findings elsewhere: {elsewhere}]" if elsewhere else ""))
    for label, flagged, variant in (("fixed variants flagged", score.fixed_flagged, "fixed"),
                                    ("negatives flagged", score.negatives_flagged, "negative")):
        out.append(f"  {label} ({len(flagged)}):")
        for case in flagged:
            for f in score.results[case.id][variant].findings:
                out.append(f"    {case.id}/{f.path}:{f.line} {f.code}  {f.message[:110]}")
    if score.errors:
        out.append(f"  analysis errors ({len(score.errors)}):")
        out.extend(f"    {error}" for error in score.errors)
    return "\n".join(out)


def to_json(score: FieldScore) -> dict:
    def findings(result):
        return [f"{f.path}:{f.line} {f.code}" for f in result.findings]

    return {
        "bugs": sum(c.kind == "bug" for c in score.cases),
        "negatives": sum(c.kind == "negative" for c in score.cases),
        "buggy_flagged": len(score.buggy_flagged),
        "fixed_clean": len(score.fixed_clean),
        "negatives_clean": len(score.negatives_clean),
        "by_category": {k: {"flagged": v[0], "bugs": v[1], "fixed_clean": v[2]}
                        for k, v in score.by_category().items()},
        "cases": {
            case.id: {variant: {"flagged": result.flagged, "clean": result.clean, "findings": findings(result)}
                      for variant, result in score.results[case.id].items()}
            for case in score.cases},
        "errors": score.errors,
    }


if __name__ == "__main__":
    print(json.dumps(to_json(score_field()), indent=1) if "--json" in sys.argv else format_report(score_field()))
