"""The session's shared sweep: the SPEC swept once on 2 local workers."""

from __future__ import annotations

import pytest
from sweep_helpers import SMALL_SPEC, cli


@pytest.fixture(scope="session")
def local_sweep(tmp_path_factory):
    """The SMALL_SPEC swept once on 2 local workers: (directory, DB path, CLI output)."""
    d = tmp_path_factory.mktemp("local_sweep")
    (d / "spec.toml").write_text(SMALL_SPEC)
    proc = cli("sweep", "spec.toml", "--workers", "2", "--db", "local.db", cwd=d)
    return d, d / "local.db", proc.stdout
