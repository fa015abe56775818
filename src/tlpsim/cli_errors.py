"""How every `tlpsim` command reports failures: a user error (TlpsimError) is one
clear line on stderr and exit status 2, never a traceback; a warning of tlpsim's
own (a skipped unreadable results row, an unusable cache) is one `warning:` line."""

from __future__ import annotations

import functools
import os
import sys
import warnings

import click

from tlpsim.errors import TlpsimError

__all__ = ["friendly"]


def friendly(fn):
    """Turn TlpsimError into a message (no traceback); other exceptions too, unless
    TLPSIM_DEBUG is set."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _warning_printer(warnings.showwarning)
                return fn(*args, **kwargs)
        except TlpsimError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except BrokenPipeError:  # output piped into `head` and the like
            sys.stderr.close()
            sys.exit(0)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as exc:
            if os.environ.get("TLPSIM_DEBUG"):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc}\n"
                       "(set TLPSIM_DEBUG=1 to see the traceback, and please report it)", err=True)
            sys.exit(3)

    return wrapper


def _warning_printer(show):
    """tlpsim's warnings as `warning: MESSAGE` (the source line Python adds means
    nothing to a user); other libraries' keep `show`, Python's format."""

    def printer(message, category, filename, lineno, file=None, line=None) -> None:
        if category.__module__.startswith("tlpsim."):
            click.echo(f"warning: {message}", err=True)
        else:
            show(message, category, filename, lineno, file, line)

    return printer
