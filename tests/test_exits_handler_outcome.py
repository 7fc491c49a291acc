"""exits.handler_outcome: what a handler does with what it caught, worked
out once per handler (the CFG builder asked handler_swallows and then
raises_only, which read the same three tests again)."""

import ast
import textwrap

from cslint.analysis.exits import ENDS, RAISES_ONLY, SWALLOWS, ParentNames, handler_outcome, handler_swallows

SOURCE = """
def f():
    parent = psutil.Process().parent()
    try:
        work()
    except ValueError:
        log()
    except KeyError:
        raise
    except OSError as e:
        if e.errno:
            raise RuntimeError() from e
        else:
            raise
    except TypeError:
        parent.send_signal(signal.SIGTERM)
        raise
    except IndexError:
        cleanup()
        os._exit(1)
    except SystemError:
        raise SystemExit(0)
"""


def test_each_handler_swallows_raises_only_or_ends_the_job():
    func = ast.parse(textwrap.dedent(SOURCE)).body[0]
    handlers = func.body[1].handlers
    parents = ParentNames(func)
    outcomes = [handler_outcome(handler, parents) for handler in handlers]
    # (a handler is read with no exit exceptions: ``raise SystemExit(0)`` raises like any other)
    assert outcomes == [SWALLOWS, RAISES_ONLY, RAISES_ONLY, ENDS, ENDS, RAISES_ONLY]
    assert [handler_swallows(handler, parents) for handler in handlers] == [o == SWALLOWS for o in outcomes]
    assert parents() == {"parent"}
