"""`--format sarif`: SARIF 2.1.0 for code-scanning services (GitHub, Azure DevOps, IDEs).

One run; ``tool.driver.rules`` lists every rule (id, name, descriptions, help
from the rule docs); each result carries its location, the enclosing function
as a logical location, every chain link as a related location, the chain as a
code flow (rank-local source first, collective last) and the baseline
fingerprint as a partial fingerprint, so results keep their identity across
edits that shift lines.

Paths under ``root`` are relative URIs against the ``%SRCROOT%`` base (what
GitHub code scanning expects); others are absolute ``file:`` URIs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional
from urllib.parse import quote

from .. import __version__
from ..baseline import fingerprints
from ..model import ChainLink, CheckResult, Finding
from .common import first_paragraph, level_of, relative_uri_path, rule_catalog

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "cslintFingerprint/v1"
INFORMATION_URI = "https://pypi.org/project/cslint/"

def _artifact_location(path: str, root: Optional[str]) -> dict:
    relative = relative_uri_path(path, root)
    if relative is not None:
        return {"uri": quote(relative), "uriBaseId": SRCROOT}
    return {"uri": Path(os.path.abspath(path)).as_uri()}


def _rule_descriptor(code: str, catalog: dict) -> dict:
    """The descriptor of a rule, from the rule class alone (its name, summary and docs)."""
    rule = catalog.get(code)
    if rule is None:  # a code no rule defines: say only what is known
        return {"id": code, "defaultConfiguration": {"level": level_of(code)}}
    doc = rule.DOC.strip()
    descriptor = {
        "id": code,
        "name": rule.NAME,
        "shortDescription": {"text": rule.SUMMARY},
        "fullDescription": {"text": first_paragraph(doc) or rule.SUMMARY},
        "defaultConfiguration": {"level": level_of(code)},
    }
    if doc:
        descriptor["help"] = {"text": doc, "markdown": doc}
    return descriptor


def _region(line: int, column: int = 0, end_line: int = 0, end_column: int = 0) -> dict:
    region: dict = {"startLine": max(line, 1)}
    if column >= 1:
        region["startColumn"] = column
    if end_line >= line and end_line >= 1:
        region["endLine"] = end_line
        if end_column >= 1 and (end_line > line or end_column >= column):
            region["endColumn"] = end_column
    return region


def _link_location(link: ChainLink, index: int, root: Optional[str]) -> dict:
    return {
        "id": index,
        "physicalLocation": {"artifactLocation": _artifact_location(link.path, root), "region": _region(link.line)},
        "message": {"text": link.note or link.kind},
    }


def _code_flow(finding: Finding, root: Optional[str]) -> dict:
    # Execution order: from the rank-local source down to the collective.
    steps = []
    for link in reversed(finding.chain):
        steps.append(
            {
                "location": {
                    "physicalLocation": {"artifactLocation": _artifact_location(link.path, root), "region": _region(link.line)},
                    "message": {"text": link.note or link.kind},
                },
                "kinds": [link.kind],
            }
        )
    return {"message": {"text": finding.message}, "threadFlows": [{"locations": steps}]}


def _result(finding: Finding, fingerprint: str, rule_index: int, root: Optional[str]) -> dict:
    location: dict = {
        "physicalLocation": {
            "artifactLocation": _artifact_location(finding.path, root),
            "region": _region(finding.line, finding.column, finding.end_line, finding.end_column),
        }
    }
    if finding.function:
        location["logicalLocations"] = [{"fullyQualifiedName": finding.function, "kind": "function"}]
    result: dict = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": level_of(finding.code),
        "message": {"text": finding.message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }
    if finding.chain:
        result["relatedLocations"] = [_link_location(link, i, root) for i, link in enumerate(finding.chain, start=1)]
        result["codeFlows"] = [_code_flow(finding, root)]
    properties: dict = {}
    for key in ("collective", "group", "condition", "guard_kind", "api"):
        value = getattr(finding, key, "")
        if value:
            properties[key] = value
    if finding.fix is not None:
        properties["fix"] = {"strategy": finding.fix.strategy, "safe": finding.fix.safe}
    if properties:
        result["properties"] = properties
    return result


def sarif_log(result: CheckResult, root: Optional[str] = None) -> dict:
    """The SARIF log as a dict (``render_sarif`` serialises it)."""
    if root is None:
        root = os.getcwd()
    catalog = rule_catalog()
    codes = sorted(set(catalog) | {f.code for f in result.findings})
    rules = [_rule_descriptor(code, catalog) for code in codes]
    index_of = {code: i for i, code in enumerate(codes)}
    results = [_result(f, fp, index_of[f.code], root) for f, fp in fingerprints(result.findings, root)]
    notifications = [
        {
            "level": "error",
            "message": {"text": error.message},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact_location(error.path, root)}}],
        }
        for error in result.errors
    ]
    run = {
        "tool": {
            "driver": {
                "name": "cslint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(os.path.abspath(root)).as_uri().rstrip("/") + "/"}},
        "invocations": [{"executionSuccessful": not result.errors, "toolExecutionNotifications": notifications}],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"filesChecked": result.files},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(result: CheckResult, root: Optional[str] = None) -> str:
    """The SARIF 2.1.0 log, indented JSON with a trailing newline."""
    return json.dumps(sarif_log(result, root), indent=2, ensure_ascii=False) + "\n"
