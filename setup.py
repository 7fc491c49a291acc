"""Build configuration that pyproject.toml cannot express: the optional C ledger of cslint.runtime.

Everything else (metadata, dependencies, packages) lives in pyproject.toml.  The
extension is optional: where it cannot be compiled, cslint.runtime uses the
pure-Python ledger (same results, slower collectives).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("cslint.runtime._ledger", ["cslint/runtime/_ledger.c"], optional=True,
                  extra_compile_args=["-O2"]),
    ],
)
