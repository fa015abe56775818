"""The bad-input corpus: every case must end in a clear error that names what is
wrong (file, line, kernel, argument or key), with exit status 2 for a CLI user
error, no traceback, no hang and no silently wrong result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def blocker(tmp_path) -> Path:
    """A regular file: any path under it cannot be created, whoever runs the test
    (permission bits would not stop root, which CI runs as)."""
    f = tmp_path / "a-file"
    f.write_text("not a directory\n")
    return f
