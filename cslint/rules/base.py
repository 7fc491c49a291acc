"""The rule base class: a rule is one small class with its docs and examples.

Rules do not analyse anything: they select the analysis hazards of one kind
and phrase them.  ``VALID`` snippets must produce no finding of the rule's
code, each ``INVALID`` snippet at least one (``tests/test_rules.py`` runs them
through the whole engine).
"""

from __future__ import annotations

from typing import ClassVar, Optional


class Rule:
    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    DOC: ClassVar[str] = ""
    KIND: ClassVar[Optional[str]] = None  # the hazard kind this rule reports
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []
    #: extra [tool.cslint] presets the examples need (added to the defaults)
    EXAMPLE_PRESETS: ClassVar[list] = []

    @classmethod
    def message(cls, hazard) -> str:  # pragma: no cover - overridden
        raise NotImplementedError
