"""cslint: collective-safety analysis for SPMD Python executor code."""

__version__ = "0.1.0"
