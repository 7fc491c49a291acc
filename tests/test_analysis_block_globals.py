"""A name a module binds inside one of its own blocks (``try``/``except``,
``if``/``else``, ``with``) is a module-level variable like one bound at the top
(issue 14; a recall gap of the value model).

A training script decides once, at import, whether a checkpoint directory
exists on this node's disk, inside a ``try`` that falls back to False, and a
step all-reduces only when it does.  Before, only names assigned by the
module's top-level statements were its variables: the name bound in the
``try`` read as nothing at all (a builtin), so the rank-local test was
missed, while the same assignment outside the ``try`` was flagged."""

from cslint.api import check_source

_SCRIPT = """\
import os

import torch.distributed as dist

{binding}


def step(t):
    if HAVE_CKPT:
        dist.all_reduce(t)
"""

_IN_TRY = """\
try:
    HAVE_CKPT = os.path.exists("/ckpt/latest")
except OSError:
    HAVE_CKPT = False"""

_IN_IF = """\
if os.environ.get("CKPT_DIR"):
    HAVE_CKPT = os.path.exists(os.environ["CKPT_DIR"])
else:
    HAVE_CKPT = False"""


def _findings(binding):
    return [(f.code, f.line) for f in check_source(_SCRIPT.format(binding=binding), report="per-site").findings]


def test_a_name_bound_in_a_module_level_try_is_a_module_variable():
    assert _findings(_IN_TRY) == [("CSL101", 13)]


def test_a_name_bound_in_a_module_level_if_is_a_module_variable():
    assert _findings(_IN_IF) == [("CSL101", 13)]


def test_the_same_assignment_at_the_top_reads_alike():
    assert _findings('HAVE_CKPT = os.path.exists("/ckpt/latest")') == [("CSL101", 10)]


def test_a_name_every_block_binds_to_a_setting_stays_uniform():
    binding = 'try:\n    HAVE_CKPT = bool(int(os.environ["USE_CKPT"]))\nexcept KeyError:\n    HAVE_CKPT = False'
    assert _findings(binding) == []
