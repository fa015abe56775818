"""`tlpsim exec --save-copies DIR`: the bytes of every copy between host and device memory.

A program whose results stay in memory (it prints nothing comparable) can then be checked
against a reference computed from the very inputs it sent: DIR/NNNNNN.bin holds copy N's
bytes in call order, and DIR/copies.tsv one row per copy — its number, its direction
(H2D, D2H), its size, the device allocation it touched (start address) and the offset in
it. Copies within device memory and within host memory are not saved. A 2D or array copy
is saved row by row (one file per row), as the runtime performs it.
"""

from __future__ import annotations

from pathlib import Path

HEADER = "copy\tdirection\tbytes\tallocation\toffset\tfile\n"


class CopyLog:
    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self.index = (self.folder / "copies.tsv").open("w")
        self.index.write(HEADER)
        self.index.flush()

    def record(self, direction: str, allocation: int, offset: int, data: bytes) -> None:
        name = f"{self.count:06d}.bin"
        (self.folder / name).write_bytes(data)
        self.index.write(f"{self.count}\t{direction}\t{len(data)}\t{allocation:#x}\t{offset}\t{name}\n")
        self.index.flush()  # the program may end without tlpsim's exit handlers (exit status, signal)
        self.count += 1


def read_index(folder: Path) -> list[dict]:
    """copies.tsv as dicts (copy, bytes, offset as ints; allocation as int), for references."""
    lines = (Path(folder) / "copies.tsv").read_text().splitlines()
    keys = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        row = dict(zip(keys, line.split("\t")))
        for k in ("copy", "bytes", "offset"):
            row[k] = int(row[k])
        row["allocation"] = int(row["allocation"], 16)
        rows.append(row)
    return rows
