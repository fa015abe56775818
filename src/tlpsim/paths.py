"""Whether a directory can take new files: probed by writing, since permission bits
do not tell (root ignores them; read-only mounts and paths under a regular file do
not show in them)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["writable_dir"]


def writable_dir(path: str | os.PathLike) -> str | None:
    """None when files can be created in `path` (created if missing), else why not."""
    d = Path(path)
    if d.exists() and not d.is_dir():
        return "it is not a directory"
    try:
        d.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=d, prefix=".tlpsim-probe-"):
            pass
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None
