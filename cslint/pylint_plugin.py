"""pylint plugin: report cslint findings as pylint messages.

    pylint --load-plugins cslint.pylint_plugin src/

For teams whose gate is pylint.  Each rule is one message, named after the
rule (``W91NN`` ``csl-<rule name>`` for CSL1NN, as ``cslint rules`` lists
them); ``# pylint: disable=csl-...`` works like any pylint pragma, and
``# cslint: ignore[...]`` keeps working too.

The findings are interprocedural, so the plugin does not re-derive them from
astroid's per-module trees: on the first module of a project it runs the cslint
analysis (``cslint.api.check_paths``) over the whole project once and then
emits, for every module pylint visits, the findings located in that file.  The
project is the directory of the nearest ``pyproject.toml`` with a
``[tool.cslint]`` table, else the directory above the module's top-level
package; ``--cslint-context DIR`` names it explicitly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

from pylint.checkers import BaseChecker

from .model import Finding
from .paths import under_root

if TYPE_CHECKING:  # pragma: no cover
    from astroid import nodes
    from pylint.lint import PyLinter



def message_id(code: str) -> str:
    """The pylint message id of a cslint code: CSL1NN -> W91NN, CSL0NN -> W91(50+NN)."""
    number = int(code[3:])
    if 100 <= number < 150:
        return f"W91{number - 100:02d}"
    if 0 <= number < 50:
        return f"W91{50 + number:02d}"
    raise ValueError(f"no pylint message id for {code}")


def _rule_table() -> dict[str, tuple[str, str]]:
    """code -> (symbol, description), read from the rules (``csl-<NAME>``)."""
    from .rules import all_rules

    table = {}
    for rule in all_rules():
        try:
            message_id(rule.CODE)
        except ValueError:
            continue
        table[rule.CODE] = (f"csl-{rule.NAME}", f"cslint {rule.CODE}: {rule.SUMMARY} See `cslint explain {rule.CODE}`.")
    return table


RULES = _rule_table()
CODE_BY_MSGID = {message_id(code): code for code in RULES}
SYMBOL_BY_CODE = {code: symbol for code, (symbol, _) in RULES.items()}


def _project_root(module_path: str) -> str:
    """The directory whose whole tree gives the interprocedural facts for `module_path`."""
    from .config import ConfigError, find_config_file

    try:
        config = find_config_file(module_path)
    except ConfigError:
        config = None
    if config is not None:
        return str(config.parent)
    directory = os.path.dirname(os.path.abspath(module_path))
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


class CollectiveSafetyChecker(BaseChecker):
    """Emit cslint's findings for each module pylint checks."""

    name = "cslint"
    msgs = {
        message_id(code): (
            "%s (" + code + ")",
            symbol,
            description,
        )
        for code, (symbol, description) in RULES.items()
    }
    msgs["W9199"] = (
        "cslint could not analyse the project: %s",
        "csl-analysis-error",
        "The cslint analysis failed; run `cslint check` on the project to see why.",
    )
    options = (
        (
            "cslint-context",
            {
                "default": "",
                "type": "string",
                "metavar": "<dir>",
                "help": "Project directory whose files give cslint's interprocedural facts "
                "(default: the [tool.cslint] project, else the top-level package's parent).",
            },
        ),
    )

    def __init__(self, linter: "PyLinter") -> None:
        super().__init__(linter)
        self._by_root: dict[str, dict[str, list[Finding]]] = {}
        self._failures: dict[str, str] = {}

    def open(self) -> None:
        self._by_root.clear()
        self._failures.clear()

    def _findings_by_file(self, root: str) -> Optional[dict[str, list[Finding]]]:
        if root in self._by_root:
            return self._by_root[root]
        if root in self._failures:
            return None
        from .api import check_paths

        try:
            result = check_paths([root], cache=True)
        except Exception as exc:
            self._failures[root] = f"{type(exc).__name__}: {exc}"
            return None
        by_file: dict[str, list[Finding]] = {}
        for finding in result.findings:
            by_file.setdefault(os.path.realpath(finding.path), []).append(finding)
        self._by_root[root] = by_file
        return by_file

    def visit_module(self, node: "nodes.Module") -> None:
        path = node.file
        if not path or not path.endswith(".py") or not os.path.isfile(path):
            return
        configured = self.linter.config.cslint_context
        root = os.path.abspath(configured) if configured else ""
        if not root or under_root(path, root) is None:
            root = _project_root(path)  # the module lies outside the named context
        by_file = self._findings_by_file(root)
        if by_file is None:
            self.add_message("csl-analysis-error", line=1, node=node, args=(self._failures[root],))
            return
        for finding in sorted(by_file.get(os.path.realpath(path), []), key=Finding.sort_key):
            symbol = SYMBOL_BY_CODE.get(finding.code)
            if symbol is None:
                continue
            self.add_message(
                symbol,
                line=finding.line,
                node=node,
                args=(finding.message,),
                col_offset=max(finding.column - 1, 0),
                end_lineno=finding.end_line,
                end_col_offset=max(finding.end_column - 1, 0),
            )


def register(linter: "PyLinter") -> None:
    """pylint's plugin entry point."""
    linter.register_checker(CollectiveSafetyChecker(linter))
