#!/bin/bash
# run.sh PROGRAM.cu PTXFILE OUTDIR [GPGPU-Sim options...]
# Runs a CUDA program under a local GPGPU-Sim 4.2 build (README.md) with the GTX480
# configuration of ../shared/reference (power model off), simulating PTXFILE: the
# host side is compiled by the system's nvcc 13 against the CUDA 11.8 runtime, whose
# calls GPGPU-Sim's libcudart serves. Needs GSIM_ROOT (the built gpgpu-sim_distribution)
# and GSIM_TOOLKIT (made by toolkit.sh). Extra options are appended to the config
# (e.g. -gpgpu_shader_cta 2). Leaves OUTDIR/gpgpusim.log; prints the cycle counts.
set -u
[ $# -ge 3 ] || { echo "usage: $0 PROGRAM.cu PTXFILE OUTDIR [options...]" >&2; exit 2; }
: "${GSIM_ROOT:?set GSIM_ROOT to the built gpgpu-sim_distribution}" "${GSIM_TOOLKIT:?set GSIM_TOOLKIT (toolkit.sh)}"
here=$(cd "$(dirname "$0")" && pwd)
src=$(readlink -f "$1"); ptx=$(readlink -f "$2"); out=$3; shift 3
cfg=${GSIM_CONFIG_DIR:-$here/../../../shared/reference/gpgpusim-configs/SM2_GTX480}
for f in "$src" "$ptx" "$cfg/gpgpusim.config"; do [ -f "$f" ] || { echo "no such file: $f" >&2; exit 2; }; done
mkdir -p "$out"; out=$(readlink -f "$out"); name=$(basename "$src" .cu)
# __NV_LEGACY_LAUNCH: nvcc 13's launch stubs then call cudaLaunchKernel (GPGPU-Sim has it);
# nvcc does not pass -D to the final host compile, hence -Xcompiler too. Linked against the
# 11.8 runtime: GPGPU-Sim checks the program's libcudart major against its own.
/usr/local/cuda/bin/nvcc -O3 -arch=sm_75 -D__NV_LEGACY_LAUNCH -Xcompiler -D__NV_LEGACY_LAUNCH \
    -cudart none -o "$out/$name" "$src" -L"$GSIM_TOOLKIT/lib64" -lcudart > "$out/compile.log" 2>&1 \
    || { cat "$out/compile.log" >&2; exit 3; }
cp "$cfg"/*.icnt "$out/"
sed -e 's/^-power_simulation_enabled 1/-power_simulation_enabled 0/' -e 's/^-gpuwattch_xml_file/#-gpuwattch_xml_file/' \
    "$cfg/gpgpusim.config" > "$out/gpgpusim.config"
[ $# -gt 0 ] && printf '\n%s\n' "$*" >> "$out/gpgpusim.config"
export CUDA_INSTALL_PATH=$GSIM_TOOLKIT PTXAS_CUDA_INSTALL_PATH=$GSIM_TOOLKIT GPGPUSIM_ROOT=$GSIM_ROOT GSIM_PTX=$ptx
export LD_LIBRARY_PATH=$(dirname "$(ls "$GSIM_ROOT"/lib/*/*/release/libcudart.so | head -1)")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PTX_SIM_USE_PTX_FILE=1.ptx PTX_SIM_KERNELFILE=_1.ptx CUOBJDUMP_SIM_FILE=jj   # as setup_environment sets them
cd "$out" && "./$name" > gpgpusim.log 2>&1; rc=$?
grep -E "^kernel_name|^gpu_sim_cycle" gpgpusim.log
exit $rc
