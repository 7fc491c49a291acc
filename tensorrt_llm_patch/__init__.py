"""One-shot collective-safety patch for a TensorRT-LLM tree.

``python -m tensorrt_llm_patch apply`` lints a checkout (or the installed
package) with cslint's ``tensorrt_llm`` preset, rewrites the executor code with
the codemods and writes ``patch.diff``, ``report.md`` and ``report.json``;
``verify`` checks that the patched files compile and that re-linting no longer
reports the fixed hazards; ``validate`` runs the multi-rank validation.

The same machinery as library calls: :func:`apply_tree` and :func:`verify_tree`.
"""

from __future__ import annotations

__all__ = ["ApplyReport", "PatchError", "VerifyReport", "apply_tree", "verify_tree"]


def __getattr__(name: str):
    # Lazy: `python -m tensorrt_llm_patch validate` must not import the analysis.
    if name in ("apply_tree", "ApplyReport", "PatchError"):
        from . import apply

        return getattr(apply, name)
    if name in ("verify_tree", "VerifyReport"):
        from . import verify

        return getattr(verify, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
