#!/usr/bin/env bash
# Compile every tests/corpus/*.cu to PTX with the pinned nvcc wheel and
# report failures.
#   - every file is compiled with -arch=sm_80
#   - files without a "// arch: sm_80" header line are also compiled with
#     -arch=sm_75
#   - each produced PTX file is then assembled with ptxas (same arch) to check
#     that it is valid PTX (inline asm is only checked at this stage);
#     set NO_PTXAS=1 to skip that step
# Usage: check_compile.sh [OUTDIR]
#   OUTDIR (optional) keeps the produced PTX (<name>.sm_80.ptx, <name>.sm_75.ptx);
#   without it a temporary directory is used and removed on exit.
# Env: NVCC overrides the compiler path; NVCC_FLAGS adds extra nvcc flags
#      (e.g. NVCC_FLAGS=-I<cccl include dir> to build 05_half.cu against the
#      real cuda_fp16.h when the nvidia-cuda-cccl wheel is not installed).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NVCC="${NVCC:-$ROOT/.venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc}"
if [ ! -x "$NVCC" ]; then
    echo "nvcc not found at $NVCC (set NVCC=...)" >&2
    exit 2
fi
PTXAS="$(dirname "$NVCC")/ptxas"
[ -x "$PTXAS" ] || PTXAS=""
[ -n "${NO_PTXAS:-}" ] && PTXAS=""
if [ $# -ge 1 ]; then
    OUT="$1"; mkdir -p "$OUT"
else
    OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
fi

fail=0; ok=0; skipped=0
for src in "$HERE"/*.cu; do
    name="$(basename "$src" .cu)"
    archs="sm_80"
    if ! grep -qE '^// *arch: *sm_8' "$src"; then
        archs="sm_80 sm_75"
    else
        skipped=$((skipped + 1))
    fi
    for arch in $archs; do
        log="$OUT/$name.$arch.log"
        ptx="$OUT/$name.$arch.ptx"
        if "$NVCC" -ptx -arch="$arch" -O3 ${NVCC_FLAGS:-} "$src" -o "$ptx" >"$log" 2>&1 &&
           { [ -z "$PTXAS" ] || "$PTXAS" -arch="$arch" "$ptx" -o /dev/null >>"$log" 2>&1; }; then
            ok=$((ok + 1))
        else
            fail=$((fail + 1))
            echo "FAIL: $name ($arch)"
            sed 's/^/    /' "$log"
        fi
    done
done
echo "compiled OK: $ok, failed: $fail, sm_80-only files (sm_75 skipped): $skipped," \
     "ptxas check: $([ -n "$PTXAS" ] && echo on || echo off)"
[ "$fail" -eq 0 ]
