"""Logging unexpected errors without the data they may quote.

Exception messages quote values: ``int("4242 4242 4242 4242")`` says ``invalid literal for
int() with base 10: '4242 4242 4242 4242'``, a KeyError names the key, and a database
error quotes the SQL with its literal parameters (``LINE 1: ... VALUES ('RAW', '[{"request":
...``; Django's psycopg backend binds parameters client-side). Where we log an error we did
not expect — and so cannot know what its message holds — we log its type and stack trace
(file, line, function: code, not data) and withhold the message and its chained causes.
"""
from __future__ import annotations

from types import TracebackType


class WithheldError(Exception):
    """Stands for a logged exception whose message (and chained causes) were withheld."""


def error_name(exc: BaseException) -> str:
    """``module.QualName`` of an exception's type (builtins without the module)."""
    kind = type(exc)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def withheld(exc: BaseException) -> tuple[type[WithheldError], WithheldError, TracebackType | None]:
    """An ``exc_info`` for ``logger.error(..., exc_info=withheld(exc))``: the original stack, a message
    naming only the exception's type."""
    stand_in = WithheldError(f"{error_name(exc)} (message withheld: it may quote request data)")
    stand_in.__suppress_context__ = True
    return WithheldError, stand_in.with_traceback(exc.__traceback__), exc.__traceback__


def error_where(exc: BaseException) -> str:
    """``Type at file:line in function`` of the innermost frame: what failed and where, never the message."""
    frame = None
    tb = exc.__traceback__
    while tb is not None:
        frame, tb = tb, tb.tb_next
    if frame is None:
        return error_name(exc)
    code = frame.tb_frame.f_code
    return f"{error_name(exc)} at {code.co_filename.rsplit('/', 1)[-1]}:{frame.tb_lineno} in {code.co_name}"
