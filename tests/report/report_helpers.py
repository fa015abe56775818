"""Helpers of the report tests."""

from __future__ import annotations

from click.testing import CliRunner

from tlpsim.cli import main


def run_cli(*args: str):
    """`tlpsim ARGS` in this process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)
