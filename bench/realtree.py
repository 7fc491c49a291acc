"""Precision of `cslint check` on real trees, measured against hand labels.

Each tree is a pinned release of a real project, downloaded from PyPI by this
script (``pip download --no-deps NAME==VERSION``; only the ``.py`` sources of
the wheel or sdist are unpacked) into a cache folder outside the repository,
or a local directory named by an environment variable or ``--tree-dir``.
Every tree is linted with ``cslint check --no-cache --format json`` and its
findings are joined with ``bench/realtree/labels.tsv`` by
(tree@version, path relative to the tree root, line, code).

Printed per tree: findings by code, labelled / unlabelled counts, TP / FP /
UNCLEAR, and precision TP / (TP + FP) per rule; then per rule over all trees
the precision weighted by finding counts (each tree's labelled sample stands
for all of that tree's findings of the rule), overall figures, and the false
positives' root-cause histogram. ``--unlabelled`` lists the findings that no
label covers; ``--sample N --seed S`` draws a stratified random sample of
them (by tree and rule) and appends it to the labels file as rows to triage.

    .venv/bin/python bench/realtree.py [--trees vllm,sglang] [--unlabelled]
    .venv/bin/python bench/realtree.py --sample 40 --seed 14
    .venv/bin/python bench/realtree.py --tree-dir vllm=/path/to/unpacked/vllm

How to label, the columns and the categories: bench/realtree/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "realtree"
DEFAULT_LABELS = DATA / "labels.tsv"
# Settings for trees without their own: an empty [tool.cslint] table, passed
# with --config so that no pyproject.toml above the cache folder is used.
DEFAULT_CONFIG = DATA / "cslint.toml"
COLUMNS = ("tree@version", "path", "line", "code", "verdict", "category", "reason")
VERDICTS = ("TP", "FP", "UNCLEAR")
RULES = ("CSL101", "CSL102", "CSL103", "CSL104")


@dataclass(frozen=True)
class Tree:
    """One pinned tree.

    ``package``: the PyPI distribution to download (None: local directory
    only). ``parts``: folders of the unpacked tree to keep and lint (empty:
    all of it). ``env``: environment variable that may name a local copy.
    ``installed``: an import name whose installed copy is used instead of a
    download when its version is the pinned one (torch: the local CPU wheel).
    ``config``: settings file under bench/realtree/ (default: cslint.toml).
    """

    name: str
    version: str
    package: Optional[str] = None
    parts: tuple = ()
    env: Optional[str] = None
    installed: Optional[str] = None
    config: Optional[str] = None
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


TREES = (
    Tree("vllm", "0.33.0", package="vllm", env="CSLINT_REALTREE_VLLM"),
    Tree("sglang", "0.5.23", package="sglang", env="CSLINT_REALTREE_SGLANG"),
    Tree("megatron-core", "0.16.1", package="megatron-core", env="CSLINT_REALTREE_MEGATRON_CORE"),
    Tree("deepspeed", "0.19.8", package="deepspeed", env="CSLINT_REALTREE_DEEPSPEED"),
    Tree("torch", "2.13.0", package="torch", parts=("torch/distributed", "torch/nn/parallel"),
         env="CSLINT_REALTREE_TORCH", installed="torch"),
    Tree("accelerate", "1.16.0", package="accelerate", env="CSLINT_REALTREE_ACCELERATE"),
    Tree("lightning", "2.6.6", package="lightning", env="CSLINT_REALTREE_LIGHTNING"),
    # The TensorRT-LLM executor files, read from the public repository at pinned
    # commits and assembled outside this repository by bench/realtree/fetch_trtllm.py
    # (its DEST/tree/); linted with the tensorrt_llm preset as the patcher does.
    Tree("trtllm", "0004396720054fd8e205cbf616f21f0b57c6b412", env="CSLINT_REALTREE_TRTLLM",
         config="trtllm_cslint.toml"),
)


class BenchError(Exception):
    """A problem the user can fix (bad labels file, failed download): printed, exit 2."""


# ---------------------------------------------------------------------------
# Getting the trees


def default_cache() -> Path:
    if os.environ.get("CSLINT_REALTREE_CACHE"):
        return Path(os.environ["CSLINT_REALTREE_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cslint-realtree"


def _keep_member(name: str, parts: tuple) -> Optional[str]:
    """The relative path to unpack an archive member to, or None to skip it.
    Only Python sources; never an absolute path or one that climbs out."""
    path = PurePosixPath(name)
    if not name.endswith(".py") or path.is_absolute() or ".." in path.parts:
        return None
    relative = path.as_posix()
    if parts and not any(relative == p or relative.startswith(p.rstrip("/") + "/") for p in parts):
        return None
    return relative


def _archive_members(archive: Path) -> Iterable[tuple]:
    """(member name, reader) for every regular file of a wheel, zip or tarball;
    an sdist's single top-level folder is stripped (paths start at the project root)."""
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zipped:
            names = [i.filename for i in zipped.infolist() if not i.is_dir()]
            strip = archive.name.endswith(".zip") and _single_top(names)
            for name in names:
                yield (name.split("/", 1)[1] if strip else name), (lambda n=name: zipped.read(n))
    elif archive.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as tarred:
            members = [m for m in tarred.getmembers() if m.isfile()]
            strip = _single_top([m.name for m in members])
            for member in members:
                name = member.name.split("/", 1)[1] if strip else member.name
                yield name, (lambda m=member: tarred.extractfile(m).read())
    else:
        raise BenchError(f"{archive.name}: not a wheel, zip or tarball")


def _single_top(names: list) -> bool:
    tops = {n.split("/", 1)[0] for n in names}
    return len(tops) == 1 and all("/" in n for n in names)


def unpack_sources(archive: Path, destination: Path, parts: tuple = ()) -> int:
    """Unpack the .py files of ``archive`` (under ``parts`` when given) into
    ``destination``; returns how many."""
    count = 0
    for name, read in _archive_members(archive):
        relative = _keep_member(name, parts)
        if relative is None:
            continue
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read())
        count += 1
    return count


def copy_sources(source_root: Path, destination: Path, parts: tuple) -> int:
    """Copy the .py files of an installed package's folders (``parts`` are
    relative to the folder holding the package)."""
    count = 0
    for part in parts:
        for directory, dirs, files in os.walk(source_root / part):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = Path(directory) / name
                relative = _keep_member(path.relative_to(source_root).as_posix(), parts)
                if relative is None:
                    continue
                target = destination / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                count += 1
    return count


def installed_copy(tree: Tree) -> Optional[Path]:
    """The folder holding ``tree.installed`` when the installed distribution has
    the pinned version (a local build such as ``2.13.0+cpu`` counts), without importing it."""
    if not tree.installed:
        return None
    from importlib import metadata

    try:
        distribution = metadata.distribution(tree.package or tree.installed)
    except metadata.PackageNotFoundError:
        return None
    if distribution.version.split("+", 1)[0] != tree.version:
        return None
    package = Path(str(distribution.locate_file(tree.installed)))
    return package.parent if package.is_dir() else None


def download(tree: Tree, into: Path, log) -> Path:
    """``pip download --no-deps NAME==VERSION`` into ``into``; the archive's path."""
    into.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               f"{tree.package}=={tree.version}", "--dest", str(into)]
    log(f"{tree.key}: downloading ({' '.join(command[3:])})")
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    archives = sorted(p for p in into.iterdir() if p.is_file())
    if done.returncode != 0 or not archives:
        raise BenchError(f"{tree.key}: pip download failed:\n{done.stdout[-2000:]}")
    return archives[0]


def materialise(tree: Tree, cache: Path, download_missing: bool, log) -> Optional[Path]:
    """The unpacked tree in the cache, made once: unpacked into a scratch
    folder and renamed into place, so an interrupted run leaves nothing half made."""
    target = cache / f"{tree.name}-{tree.version}"
    if target.is_dir():
        return target
    if tree.package is None:
        return None
    installed = installed_copy(tree)
    if installed is None and not download_missing:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{tree.name}-", dir=cache))
    try:
        sources = scratch / "tree"
        sources.mkdir()
        if installed is not None:
            count = copy_sources(installed, sources, tree.parts)
            log(f"{tree.key}: {count} source files copied from the installed package at {installed}")
        else:
            archive = download(tree, scratch / "archive", log)
            count = unpack_sources(archive, sources, tree.parts)
            log(f"{tree.key}: {count} source files unpacked from {archive.name}")
        if count == 0:
            raise BenchError(f"{tree.key}: no Python sources found")
        os.replace(sources, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def locate(tree: Tree, cache: Path, overrides: dict, download_missing: bool, log) -> tuple:
    """(root folder or None, note): an explicit --tree-dir, then the
    environment variable, then the cache (downloading when allowed)."""
    given = overrides.get(tree.name) or (os.environ.get(tree.env) if tree.env else None)
    if given:
        path = Path(given).expanduser()
        if not path.is_dir():
            return None, f"{path} is not a directory"
        return path.resolve(), f"local directory {path}"
    if tree.package is None:
        where = f"set {tree.env} or " if tree.env else ""
        return None, f"no local copy ({where}pass --tree-dir {tree.name}=PATH)"
    root = materialise(tree, cache, download_missing, log)
    if root is None:
        return None, "not in the cache and downloads are off"
    return root, f"cache {root}"


def pinned_tree(name: str, download_missing: bool = True) -> Optional[Path]:
    """The root of the pinned tree ``name`` (vllm, deepspeed, ...) for the
    other bench scripts: its environment variable's directory, else the
    cache, downloading it once when allowed; None when it cannot be had."""
    tree = next((t for t in TREES if t.name == name), None)
    if tree is None:
        raise BenchError(f"no pinned tree named {name!r}")
    try:
        root, _note = locate(tree, default_cache(), {}, download_missing, lambda message: print(message, file=sys.stderr))
    except BenchError as exc:
        print(f"{tree.key}: {exc}", file=sys.stderr)
        return None
    return root


def pinned(name: str) -> Optional[str]:
    """:func:`pinned_tree` as a string, for the bench scripts that take a
    tree's directory (they run as ``python bench/NAME.py``, so this module
    is importable as ``realtree``)."""
    root = pinned_tree(name)
    return str(root) if root is not None else None


# ---------------------------------------------------------------------------
# Running cslint


def engine_revision() -> str:
    """HEAD of this checkout and the last commit that changed the analyser
    (cslint/), which is what the findings depend on; "+changes" when cslint/
    has uncommitted edits."""

    def git(*args) -> str:
        try:
            done = subprocess.run(["git", "-C", str(ROOT), *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return ""
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    engine = git("log", "-1", "--format=%h", "--", "cslint")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "cslint")
    text = head if not engine or engine == head else f"{head} (cslint/ last changed in {engine})"
    return text + (" +changes" if dirty else "")


def run_cslint(tree: Tree, root: Path) -> tuple:
    """(report dict, seconds) of ``cslint check --no-cache --format json`` on
    the tree, run from this checkout's sources."""
    config = DATA / (tree.config or DEFAULT_CONFIG.name)
    targets = [str(root / part) for part in tree.parts if (root / part).exists()] or [str(root)]
    command = [sys.executable, "-m", "cslint.cli", "check", "--no-cache", "--format", "json",
               "--exit-zero", "--config", str(config), *targets]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(root), env=env)
    seconds = time.perf_counter() - started
    try:
        report = json.loads(done.stdout)
    except ValueError:
        raise BenchError(f"{tree.key}: cslint exited {done.returncode} without a JSON report:\n"
                         f"{done.stderr.decode(errors='replace')[-2000:]}") from None
    return report, seconds


@dataclass(frozen=True)
class Finding:
    tree: str
    path: str  # relative to the tree root, '/'-separated
    line: int
    code: str
    message: str = ""
    #: root-cause reporting: the lines of the other call sites the finding's
    #: guard decides (its ``sites``), each of which a label may name
    other_lines: tuple = ()

    @property
    def key(self) -> tuple:
        return (self.tree, self.path, self.line, self.code)

    @property
    def keys(self) -> tuple:
        """The keys of every site the finding stands for, its own first."""
        return (self.key,) + tuple((self.tree, self.path, line, self.code) for line in self.other_lines)


#: which label speaks for a finding that stands for several labelled sites:
#: a guard is a real hazard when any site it decides is one
_VERDICT_ORDER = {"TP": 0, "FP": 1, "UNCLEAR": 2, "": 3}


def label_of(finding: Finding, labels: dict):
    """The label of a finding: for a finding that stands for one site, that
    site's; for one that stands for several (root-cause reporting), the most
    telling label among them (TP, then FP, then UNCLEAR; its own site first
    among equals); None when no site is labelled."""
    if not finding.other_lines:
        return labels.get(finding.key)
    found = [labels[key] for key in finding.keys if key in labels]
    if not found:
        return None
    return min(found, key=lambda label: (_VERDICT_ORDER.get(label.verdict, 3), label.line != finding.line,
                                         label.line))


def findings_of(tree_key: str, root: Path, report: dict) -> list:
    """The report's CSL1xx findings with paths relative to the tree root."""
    out = []
    for item in report.get("findings", []):
        path = Path(item["path"])
        if not path.is_absolute():
            path = root / path
        try:
            relative = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            relative = item["path"]
        others = tuple(int(site["line"]) for site in item.get("sites", ()) if int(site["line"]) != int(item["line"]))
        out.append(Finding(tree_key, relative, int(item["line"]), item["code"], item.get("message", ""),
                           tuple(sorted(set(others)))))
    out.sort(key=lambda f: f.key)
    return out


# ---------------------------------------------------------------------------
# Labels


@dataclass
class Label:
    tree: str
    path: str
    line: int
    code: str
    verdict: str  # TP, FP, UNCLEAR, or "" for a sampled row not triaged yet
    category: str = ""
    reason: str = ""
    #: the earlier row of the same file this one corrects (a ``relabel:`` row), kept for the audit trail
    replaces: Optional["Label"] = None

    @property
    def key(self) -> tuple:
        return (self.tree, self.path, self.line, self.code)


#: how a correction row's reason starts: a later row for a key already labelled
#: in the same file replaces the earlier one only when it says why, this way
RELABEL_PREFIX = "relabel:"


def read_labels(path: Path) -> dict:
    """key -> Label. Lines starting with '#' are notes (sampling batches);
    the first other line is the header. Rows are never edited: a reading that
    was wrong is corrected by appending a row for the same key whose reason
    starts with ``relabel:`` and says what the first reading missed; it replaces
    the earlier row (kept on it as ``replaces``). Any other second row is an error."""
    if not path.exists():
        return {}
    labels = {}
    header_seen = False
    with open(path, encoding="utf-8", newline="") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip() or raw.startswith("#"):
                continue
            cells = raw.rstrip("\r\n").split("\t")
            if not header_seen:
                if tuple(cells) != COLUMNS:
                    raise BenchError(f"{path}:{number}: header must be {' | '.join(COLUMNS)}")
                header_seen = True
                continue
            if len(cells) != len(COLUMNS):
                raise BenchError(f"{path}:{number}: {len(cells)} columns, expected {len(COLUMNS)}")
            tree, file, line, code, verdict, category, reason = cells
            if not line.isdigit():
                raise BenchError(f"{path}:{number}: line `{line}` is not a number")
            if verdict and verdict not in VERDICTS:
                raise BenchError(f"{path}:{number}: verdict `{verdict}` is not one of {', '.join(VERDICTS)} (or empty)")
            if verdict and not reason:
                raise BenchError(f"{path}:{number}: a {verdict} label needs a reason")
            label = Label(tree, file, int(line), code, verdict, category, reason)
            correction = reason.startswith(RELABEL_PREFIX)
            if correction and not reason[len(RELABEL_PREFIX):].strip():
                raise BenchError(f"{path}:{number}: a relabel row must say what the earlier reading missed")
            if correction and label.key not in labels:
                raise BenchError(f"{path}:{number}: relabel row for {tree} {file}:{line} {code}, "
                                 "which no earlier row of this file labels")
            if label.key in labels and not correction:
                raise BenchError(f"{path}:{number}: a second label for {tree} {file}:{line} {code} "
                                 f"(a correction's reason starts with `{RELABEL_PREFIX}`)")
            if correction:
                label.replaces = labels[label.key]
            labels[label.key] = label
    return labels


def read_all_labels(paths: Iterable[Path]) -> dict:
    """The labels of several files; a key labelled in two files is an error."""
    merged, origin = {}, {}
    for path in paths:
        for key, label in read_labels(path).items():
            if key in merged:
                raise BenchError(f"{path}: {label.tree} {label.path}:{label.line} {label.code} "
                                 f"is labelled in {origin[key]} too")
            merged[key], origin[key] = label, path
    return merged


def default_label_files() -> list:
    """Every *labels.tsv under bench/realtree/ (this script's sample, the TensorRT-LLM triage, ...)."""
    return sorted(DATA.glob("*labels.tsv"))


def append_rows(path: Path, note: str, findings: list) -> None:
    """Append sampled findings as rows without a verdict, after a '#' note."""
    fresh = not path.exists() or path.stat().st_size == 0
    with open(path, "a", encoding="utf-8", newline="") as handle:
        if fresh:
            handle.write("# cslint real-tree labels: see bench/realtree/README.md\n")
            handle.write("\t".join(COLUMNS) + "\n")
        handle.write(f"# {note}\n")
        for f in findings:
            handle.write("\t".join((f.tree, f.path, str(f.line), f.code, "", "", "")) + "\n")


# ---------------------------------------------------------------------------
# Scoring


@dataclass
class Cell:
    """Counts for one (tree, rule) stratum, or a sum of strata."""

    findings: int = 0
    tp: int = 0
    fp: int = 0
    unclear: int = 0
    pending: int = 0  # sampled rows not triaged yet

    @property
    def decided(self) -> int:
        return self.tp + self.fp

    @property
    def labelled(self) -> int:
        return self.tp + self.fp + self.unclear

    @property
    def unlabelled(self) -> int:
        return self.findings - self.labelled

    @property
    def precision(self) -> Optional[float]:
        return self.tp / self.decided if self.decided else None

    def add(self, other: "Cell") -> None:
        self.findings += other.findings
        self.tp += other.tp
        self.fp += other.fp
        self.unclear += other.unclear
        self.pending += other.pending


def score(findings: list, labels: dict) -> dict:
    """(tree, code) -> Cell. A label covers every finding with its key."""
    cells = defaultdict(Cell)
    for f in findings:
        cell = cells[(f.tree, f.code)]
        cell.findings += 1
        label = label_of(f, labels)
        verdict = label.verdict if label else ""
        if verdict == "TP":
            cell.tp += 1
        elif verdict == "FP":
            cell.fp += 1
        elif verdict == "UNCLEAR":
            cell.unclear += 1
        elif label is not None:
            cell.pending += 1
    return dict(cells)


def weighted_precision(cells: Iterable[Cell]) -> tuple:
    """(precision, findings covered): each stratum's sample precision weighted
    by its finding count, over the strata with at least one TP/FP label.
    The sample over-draws small strata (a minimum per stratum); weighting puts
    each stratum back at its real share of the findings."""
    total = covered = 0.0
    for cell in cells:
        if cell.precision is None:
            continue
        total += cell.findings * cell.precision
        covered += cell.findings
    return (total / covered if covered else None), int(covered)


def stale_labels(findings: list, labels: dict, trees: Iterable[str]) -> list:
    """Labels of the measured trees that no current finding has (the engine
    stopped reporting it, or it moved)."""
    present = {key for f in findings for key in f.keys}
    wanted = set(trees)
    return sorted((l for l in labels.values() if l.tree in wanted and l.key not in present), key=lambda l: l.key)


# ---------------------------------------------------------------------------
# Sampling


def allocate(sizes: dict, total: int, minimum: int) -> dict:
    """Sample sizes per stratum: proportional to the stratum sizes (largest
    remainder, so they add up to ``total``), each non-empty stratum raised to
    ``minimum``, none above its size. Ties break on the stratum key."""
    population = sum(sizes.values())
    if population == 0 or total <= 0:
        return {key: 0 for key in sizes}
    total = min(total, population)
    exact = {key: total * size / population for key, size in sizes.items()}
    counts = {key: int(value) for key, value in exact.items()}
    by_remainder = sorted(sizes, key=lambda key: (-(exact[key] - counts[key]), key))
    for key in by_remainder[: total - sum(counts.values())]:
        counts[key] += 1
    return {key: min(size, max(counts[key], minimum if size else 0)) for key, size in sizes.items()}


def stratified_sample(findings: list, labels: dict, total: int, seed: int, minimum: int) -> list:
    """Unlabelled findings (one per key) drawn at random within each (tree,
    rule) stratum; the same inputs and seed always give the same sample."""
    strata = defaultdict(set)
    for f in findings:
        if label_of(f, labels) is None:
            strata[(f.tree, f.code)].add(f.key)
    counts = allocate({key: len(keys) for key, keys in strata.items()}, total, minimum)
    rng = random.Random(seed)
    chosen = []
    for stratum in sorted(strata):
        population = sorted(strata[stratum])
        chosen.extend(rng.sample(population, counts[stratum]))
    return [Finding(*key) for key in sorted(chosen)]


# ---------------------------------------------------------------------------
# Tables


def _fmt_precision(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(header: tuple, rows: list) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


COUNT_HEADER = ("code", "findings", "labelled", "TP", "FP", "UNCLEAR", "unlabelled", "precision")


def _count_row(name: str, cell: Cell, precision: Optional[float]) -> tuple:
    return (name, cell.findings, cell.labelled, cell.tp, cell.fp, cell.unclear, cell.unlabelled,
            _fmt_precision(precision))


def tree_table(tree_key: str, cells: dict) -> str:
    rows = []
    total = Cell()
    mine = {code: cell for (tree, code), cell in cells.items() if tree == tree_key}
    for code in sorted(mine):
        rows.append(_count_row(code, mine[code], mine[code].precision))
        total.add(mine[code])
    weighted, _ = weighted_precision(mine.values())
    rows.append(_count_row("all (weighted)", total, weighted))
    return table(COUNT_HEADER, rows)


def rule_table(cells: dict) -> str:
    """Per rule over all trees: precision weighted by each tree's finding count."""
    header = ("rule", "findings", "labelled", "TP", "FP", "UNCLEAR", "unlabelled", "covered", "weighted P", "raw P")
    rows = []
    overall = Cell()
    codes = sorted({code for _, code in cells})
    for code in codes:
        mine = [cell for (_, c), cell in cells.items() if c == code]
        total = Cell()
        for cell in mine:
            total.add(cell)
        weighted, covered = weighted_precision(mine)
        rows.append((code, total.findings, total.labelled, total.tp, total.fp, total.unclear, total.unlabelled,
                     f"{covered}/{total.findings}", _fmt_precision(weighted), _fmt_precision(total.precision)))
        overall.add(total)
    weighted, covered = weighted_precision(cells.values())
    rows.append(("all", overall.findings, overall.labelled, overall.tp, overall.fp, overall.unclear,
                 overall.unlabelled, f"{covered}/{overall.findings}", _fmt_precision(weighted),
                 _fmt_precision(overall.precision)))
    return table(header, rows)


def category_table(findings: list, labels: dict, verdict: str) -> str:
    """How many labelled findings of a verdict fall in each category."""
    counts = Counter()
    rules = defaultdict(Counter)
    for f in findings:
        label = label_of(f, labels)
        if label is not None and label.verdict == verdict:
            counts[label.category or "(none)"] += 1
            rules[label.category or "(none)"][f.code] += 1
    rows = [(category, count, ", ".join(f"{c} {n}" for c, n in sorted(rules[category].items())))
            for category, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    return table(("category", "findings", "by rule"), rows) if rows else "(none)"


# ---------------------------------------------------------------------------
# Main


def parse_tree_dirs(values: list) -> dict:
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise BenchError(f"--tree-dir wants NAME=PATH, got `{value}`")
        out[name] = path
    return out


def select_trees(names: Optional[str]) -> list:
    if not names:
        return list(TREES)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = {t.name: t for t in TREES}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise BenchError(f"unknown tree(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return [known[n] for n in wanted]


def measure(trees: list, args, log) -> tuple:
    """Lint every tree that can be had: (findings, measured trees, per-tree notes)."""
    cache = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache()
    overrides = parse_tree_dirs(args.tree_dir)
    findings, measured, notes = [], [], {}
    for tree in trees:
        saved = Path(args.load_json) / f"{tree.key}.json" if args.load_json else None
        if saved is not None and saved.exists():
            payload = json.loads(saved.read_text(encoding="utf-8"))
            root, report, seconds, where = Path(payload["root"]), payload["report"], None, f"saved {saved}"
        else:
            root, where = locate(tree, cache, overrides, not args.no_download, log)
            if root is None:
                notes[tree.key] = f"skipped: {where}"
                log(f"{tree.key}: skipped ({where})")
                continue
            log(f"{tree.key}: linting {root}")
            report, seconds = run_cslint(tree, root)
            if args.save_json:
                Path(args.save_json).mkdir(parents=True, exist_ok=True)
                (Path(args.save_json) / f"{tree.key}.json").write_text(
                    json.dumps({"root": str(root), "report": report}), encoding="utf-8")
        found = findings_of(tree.key, root, report)
        findings.extend(found)
        measured.append(tree.key)
        timing = f", {seconds:.1f} s" if seconds is not None else ""
        notes[tree.key] = (f"{report.get('files', '?')} files, {len(found)} findings, "
                           f"{len(report.get('errors', []))} errors{timing}; {where}")
    return findings, measured, notes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", help=f"comma-separated subset of: {', '.join(t.name for t in TREES)}")
    parser.add_argument("--labels", action="append", default=[], metavar="FILE",
                        help="labels file, repeatable (default: every bench/realtree/*labels.tsv); "
                        "--sample appends to the first one (default: bench/realtree/labels.tsv)")
    parser.add_argument("--cache-dir", help="where downloaded trees are unpacked "
                        "(default: $CSLINT_REALTREE_CACHE, else ~/.cache/cslint-realtree)")
    parser.add_argument("--tree-dir", action="append", default=[], metavar="NAME=PATH",
                        help="use a local copy of a tree (its root: the paths of the labels start there)")
    parser.add_argument("--no-download", action="store_true", help="skip trees that are not in the cache")
    parser.add_argument("--unlabelled", action="store_true", help="list the findings no label covers")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="append a stratified random sample of N unlabelled findings to the labels file")
    parser.add_argument("--seed", type=int, help="random seed of --sample (required with it)")
    parser.add_argument("--min-per-stratum", type=int, default=2,
                        help="--sample draws at least this many from every non-empty (tree, rule) stratum")
    parser.add_argument("--save-json", metavar="DIR", help="also write each tree's cslint report to DIR")
    parser.add_argument("--load-json", metavar="DIR", help="read reports saved with --save-json instead of linting")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(f"[realtree] {message}", file=sys.stderr, flush=True)

    try:
        if args.sample is not None and args.seed is None:
            raise BenchError("--sample needs --seed (the seed is recorded in the labels file)")
        trees = select_trees(args.trees)
        label_files = [Path(p) for p in args.labels] or default_label_files()
        labels_path = Path(args.labels[0]) if args.labels else DEFAULT_LABELS
        labels = read_all_labels(label_files)
        findings, measured, notes = measure(trees, args, log)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    revision = engine_revision()
    cells = score(findings, labels)
    print(f"cslint {revision} on {len(measured)} of {len(trees)} trees; labels: "
          f"{', '.join(str(p) for p in label_files)} "
          f"({sum(1 for l in labels.values() if l.verdict)} triaged, "
          f"{sum(1 for l in labels.values() if not l.verdict)} awaiting triage, "
          f"{sum(1 for l in labels.values() if l.replaces is not None)} corrected by relabel rows)")
    for tree in trees:
        print(f"\n== {tree.key}: {notes.get(tree.key, '')}")
        if tree.key in measured:
            print(tree_table(tree.key, cells))
    if measured:
        print("\n== precision per rule, all trees (weighted: each tree's sample stands for its findings of that rule)")
        print(rule_table(cells))
        print("\n== false positives by root cause")
        print(category_table(findings, labels, "FP"))
        print("\n== true positives by shape")
        print(category_table(findings, labels, "TP"))
        pending = [f for f in findings if label_of(f, labels) is not None and not label_of(f, labels).verdict]
        stale = stale_labels(findings, labels, measured)
        print(f"\nsampled rows awaiting triage: {len(pending)}; labels with no current finding: {len(stale)}")
        for label in stale:
            print(f"  no finding: {label.tree} {label.path}:{label.line} {label.code} ({label.verdict or 'untriaged'})")
    if args.unlabelled:
        missing = [f for f in findings if label_of(f, labels) is None]
        print(f"\n== findings not yet labelled ({len(missing)})")
        for f in missing:
            print(f"{f.tree}\t{f.path}:{f.line}\t{f.code}\t{f.message[:160]}")
    if args.sample is not None:
        drawn = stratified_sample(findings, labels, args.sample, args.seed, args.min_per_stratum)
        note = (f"sample of {len(drawn)}: --sample {args.sample} --seed {args.seed} --min-per-stratum "
                f"{args.min_per_stratum} over {', '.join(measured)} with cslint {revision}")
        append_rows(labels_path, note, drawn)
        print(f"\n{note}; appended to {labels_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
