"""CUDA graphs and stream capture (issue 28 §2): tests/cudart/programs/graphs.cu
builds a graph by hand (memcpy, memset, kernel, memcpy, host nodes) and one by
capturing a fork/join over two streams, launches each several times and checks
the results against the CPU; then the capture errors CUDA defines."""

from __future__ import annotations

import json

from .conftest import run_exec


def test_graphs_run_and_match_the_cpu(binaries):
    r = run_exec(binaries["graphs"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        # 5 nodes; copy_in and clear are roots; edges: 2 into the kernel, kernel -> copy_out -> host
        "manual graph: 5 nodes, 2 roots, 4 edges, kernel node type 0",
        # the memcpy node reads the host buffer when the graph runs; the kernel node copied its
        # arguments when it was made (a = 2, not the 100 assigned afterwards)
        "manual graph: 3 launches, host node ran 3 times",
        "capturing: 1",  # cudaStreamCaptureStatusActive
        # y=3x+1 -> {z=-y on s2, w=2y on s1} -> z=z+w -> copy out: 5 nodes, 5 edges
        "captured graph: 5 nodes, 5 edges; capturing after the end: 0",
        "synchronize while capturing: cudaErrorStreamCaptureUnsupported",
        "end of the invalidated capture: cudaErrorStreamCaptureInvalidated, graph NULL",
        "end with s2 not joined: cudaErrorStreamCaptureUnjoined",
        "PASS"]
    # 3 launches of the manual graph, 2 of the captured one (4 kernels each)
    assert "11 launch(es)" in r.stderr
    assert "tlpsim: cudaStreamEndCapture: stream 0x" in r.stderr and "was not joined back into stream" in r.stderr


def test_graph_kernels_are_timed_on_the_launch_stream(binaries, tmp_path):
    r = run_exec("--mode", "timing", "--run-dir", tmp_path / "run", "--", binaries["graphs"])
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "launches.jsonl").read_text().splitlines()]
    assert [row["kernel"] for row in rows] == ["axpb"] * 3 + ["axpb", "axpb", "axpb", "add"] * 2
    assert len({row["stream"] for row in rows}) == 1 and rows[0]["stream"] != 0
    assert all(row["stats"]["cycles"] > 0 for row in rows)
