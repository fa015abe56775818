"""A failing cudaMemset under `tlpsim exec` is reported as cudaMemset (and its async
and 2D forms as themselves), not as the cudaMemset2D that implements them."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = r"""
#include <cstdio>
#include <cuda_runtime.h>
int main() {
    char *p;
    cudaMalloc(&p, 64);
    cudaError_t a = cudaMemset(p, 0, 100);
    cudaError_t b = cudaMemsetAsync(p + 32, 0, 64, 0);
    cudaError_t c = cudaMemset2D(p, 16, 0, 16, 5);
    printf("%d %d %d %d\n", (int)a, (int)b, (int)c, (int)cudaMemset(p, 1, 64));
    return 0;
}
"""


def test_each_memset_is_reported_under_its_own_name(tmp_path):
    src = tmp_path / "memset.cu"
    src.write_text(PROGRAM)
    proc = subprocess.run([sys.executable, "-m", "tlpsim.cli", "exec", str(src)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, check=False)
    err = proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "1 1 1 0", (proc.stdout, err)  # cudaErrorInvalidValue x 3
    for call, nbytes in (("cudaMemset", 100), ("cudaMemsetAsync", 64), ("cudaMemset2D", 80)):
        assert f"{call}: the destination of {nbytes} bytes at" in err, err
    diagnostics = [line for line in err.splitlines() if line.startswith("tlpsim: cudaMemset")]
    assert [d.split(":")[1].strip() for d in diagnostics] == ["cudaMemset", "cudaMemsetAsync", "cudaMemset2D"], err
    assert ("failing runtime calls: cudaMemset -> cudaErrorInvalidValue (1x), cudaMemsetAsync -> "
            "cudaErrorInvalidValue (1x), cudaMemset2D -> cudaErrorInvalidValue (1x)") in err
