#!/bin/sh
# Reproduces the GPUWattch figures of docs/energy.md ("Power split against GPUWattch"):
# builds GPUWattch's McPAT (GPGPU-Sim src/gpuwattch) and gpuwattch_coeffs.cc, then runs both
# on the GTX 480 XML.   usage: build.sh /path/to/gpgpu-sim_distribution [out-dir]
# (checked at gpgpu-sim_distribution 90ec3399; takes a few minutes)
set -e
SIM=$(cd "$1" && pwd); OUT=${2:-gpuwattch-build}; HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/obj" && cd "$OUT"
GW=$SIM/src/gpuwattch
FLAGS="-w -fpermissive -DNTHREADS=1 -I$GW/cacti -I$GW"
# the sources of GPUWattch's mcpat.mk, without the GPGPU-Sim wrapper and main
CACTI="Ucache arbiter area bank basic_circuit cacti_interface component crossbar decoder htree2 io mat nuca
       parameter router subarray technology uca wire"
MCPAT="XML_Parse array basic_components core interconnect iocontrollers logic memoryctrl noc processor
       sharedcache xmlParser"
for s in $(for f in $CACTI; do echo "$GW/cacti/$f.cc"; done) $(for f in $MCPAT; do echo "$GW/$f.cc"; done); do
    # cacti's Ucache.cc crashes (free(): invalid pointer) when optimised by current GCC
    opt=-O1; [ "$(basename "$s")" = Ucache.cc ] && opt=-O0
    o=obj/$(basename "${s%.cc}").o; [ -f "$o" ] || g++ $opt $FLAGS -c "$s" -o "$o"
done
g++ -O1 $FLAGS -c "$GW/main.cc" -o main.o && g++ obj/*.o main.o -o mcpat -lz -lm -pthread
g++ -O0 $FLAGS -c "$HERE/gpuwattch_coeffs.cc" -o coeffs.o && g++ obj/*.o coeffs.o -o gpuwattch_coeffs -lz -lm -pthread
XML=$SIM/configs/tested-cfgs/SM2_GTX480/gpuwattch_gtx480.xml
./mcpat -infile "$XML" -print_level 5 > mcpat_gtx480.txt
./gpuwattch_coeffs "$XML" > coeffs_gtx480.txt
echo "wrote $OUT/mcpat_gtx480.txt (leakage per component) and $OUT/coeffs_gtx480.txt (per-event energies)"
