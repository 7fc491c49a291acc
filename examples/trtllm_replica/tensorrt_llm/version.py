"""The replica's package version (TensorRT-LLM keeps its own in this file)."""

__version__ = "0.0.0+replica"
