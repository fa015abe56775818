#!/bin/bash
# toolkit.sh DIR: a CUDA 11.8 toolkit directory for building and running GPGPU-Sim 4.2,
# made from the CUDA 11.8 wheels in tlpsim's .venv and the system's CUDA 13 nvcc
# (GPGPU-Sim reads the CUDA version from `nvcc --version`, compiles against the 11.8
# runtime headers, runs ptxas for register counts and cuobjdump for the PTX).
set -euo pipefail
dst=$1; here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
nv=$(ls -d "$root"/.venv/lib/python3*/site-packages/nvidia)
mkdir -p "$dst/bin" "$dst/include" "$dst/lib64"
cat > "$dst/bin/nvcc" <<'NVCC'
#!/bin/bash
for a in "$@"; do
  if [ "$a" = "--version" ] || [ "$a" = "-V" ]; then
    echo "Cuda compilation tools, release 11.8, V11.8.89"; exit 0
  fi
done
exec /usr/local/cuda/bin/nvcc "$@"
NVCC
chmod +x "$dst/bin/nvcc"
ln -sf "$nv/cuda_nvcc/bin/ptxas" "$dst/bin/ptxas"
cp "$here/cuobjdump" "$dst/bin/cuobjdump"
for f in "$nv"/cuda_runtime/include/*; do ln -sf "$f" "$dst/include/"; done
[ -d "$nv/cuda_nvcc/include/crt" ] && ln -sfn "$nv/cuda_nvcc/include/crt" "$dst/include/crt"
for f in cudaProfiler.h cuda_profiler_api.h; do
  [ -e "$dst/include/$f" ] || ln -sf "/usr/local/cuda/include/$f" "$dst/include/$f"
done
for f in "$nv"/cuda_runtime/lib/libcudart.so*; do ln -sf "$f" "$dst/lib64/"; done
[ -e "$dst/lib64/libcudart.so" ] || ln -sf "$(ls "$dst"/lib64/libcudart.so.11* | head -1)" "$dst/lib64/libcudart.so"
echo "$dst"
