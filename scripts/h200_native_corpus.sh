#!/usr/bin/env bash
# Build and run CUDA programs natively on a real GPU (the reference for what `tlpsim exec`
# must reproduce): every *.cu under the directories given (one program per file; a
# subdirectory named `separate` is one program of all its files), nvcc -O2 -arch=sm_90,
# each run under a 60 s timeout with unbuffered output. Writes OUT/<name>.txt (stdout,
# stderr, exit status) and OUT/summary.tsv. A program that dies is re-run under gdb
# (if present) to name the call that crashed.
#   bash scripts/h200_native_corpus.sh OUT DIR...
set -u
out=$1; shift
bindir=${BINDIR:-$out/bin}
mkdir -p "$out" "$bindir"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; "$nvcc" --version | tail -2; } > "$out/host.txt" 2>&1
printf 'program\tbuild\texit\n' > "$out/summary.tsv"
run_one() {  # name, sources...
  local name=$1; shift
  local log="$out/$name.txt" bin="$bindir/$name"
  local libs=""
  grep -q "curand" "$@" && libs="-lcurand"
  if ! "$nvcc" -O2 -arch=sm_90 -lineinfo -I"$(dirname "$1")" -o "$bin" "$@" $libs > "$out/$name.build.txt" 2>&1; then
    printf '%s\tFAIL\t-\n' "$name" >> "$out/summary.tsv"; return
  fi
  local args=""
  [ -f "${1%.cu}.args" ] && args=$(cat "${1%.cu}.args")
  (cd "$out" && timeout 60 stdbuf -o0 -e0 "$bin" $args > "$log.stdout" 2> "$log.stderr"; echo $? > "$log.rc")
  local rc; rc=$(cat "$log.rc")
  { echo "== stdout"; cat "$log.stdout"; echo "== stderr"; cat "$log.stderr"; echo "== exit $rc"; } > "$log"
  rm -f "$log.stdout" "$log.stderr" "$log.rc"
  if [ "$rc" -ge 128 ] && command -v gdb > /dev/null; then
    (cd "$out" && timeout 60 gdb -batch -ex run -ex bt --args "$bin" $args) >> "$log" 2>&1
  fi
  printf '%s\tok\t%s\n' "$name" "$rc" >> "$out/summary.tsv"
}
export out nvcc bindir
export -f run_one
# programs build and run 8 at a time (correctness, not timing, is what is recorded)
for d in "$@"; do
  for f in "$d"/*.cu; do [ -f "$f" ] && printf '%s %s\n' "$(basename "${f%.cu}")" "$f"; done
  [ -d "$d/separate" ] && printf 'separate %s\n' "$(echo "$d"/separate/*.cu)"
done | xargs -P 8 -L 1 bash -c 'run_one "$@"' _
sort "$out/summary.tsv"
