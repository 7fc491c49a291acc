"""Replica package (see examples/trtllm_replica/NOTES.md)."""
