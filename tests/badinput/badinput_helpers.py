"""Helpers of the bad-input corpus."""

from __future__ import annotations

from click.testing import CliRunner

from tlpsim.cli import main


def cli(*args: str):
    """`tlpsim ARGS` in this process (stderr included in `.output`)."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def assert_user_error(res, *needles: str) -> str:
    """Exit status 2, one clear message naming every needle, no traceback."""
    out = res.output
    assert res.exit_code == 2, f"exit {res.exit_code}: {out}"
    assert "Traceback" not in out and "internal error" not in out, out
    for n in needles:
        assert n in out, f"{n!r} not in: {out}"
    return out
