#!/usr/bin/env bash
# The GEMM written in Python on the warp-specialized template
# (examples/python/warp_specialized_gemm.py) against ops::Gemm's C++ sm90a
# kernel of the same configuration (each of the example's CONFIGS): their PTX, and what ptxas makes of each (the Python kernel's entry named as
# the C++ kernel's, so that equal machine code gives equal cubins). The PTX
# differs in the order of independent instructions (C++ leaves the order of
# an expression's operands to the compiler; Python goes left to right) and
# in address arithmetic the C++ epilogue computes for outputs this
# configuration does not have (C, amax), which ptxas drops.
#
# Usage: scripts/compare-python-gemm-ptx.sh [--build DIR] [OUT_DIR]
# Needs the Python module built in DIR (default build/: target _warpforge,
# which builds the libraries the C++ side links) and ptxas on PATH (or in
# /usr/local/cuda/bin). Prints a line per configuration; exit status 1 when a
# pair's cubins differ.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
if [ "${1:-}" = "--build" ]; then build=$(cd "$2" && pwd); shift 2; fi
out=${1:-$build/python-gemm-ptx}
mkdir -p "$out"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)

dlpack=$(sed -n 's/^WARPFORGE_DLPACK_INCLUDE_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
libs=()
for layer in ops sim tile dsl layout runtime ptx; do libs+=("$build/libwarpforge_$layer.a"); done
program=$out/sm90a_gemm_ptx
c++ -std=c++20 -O1 -I"$root/include" -I"$build/generated" ${dlpack:+-I"$dlpack"} \
  "$root/scripts/sm90a_gemm_ptx.cpp" -o "$program" "${libs[@]}" -lpthread -ldl ||
  { echo "compare-python-gemm-ptx: FAIL: building sm90a_gemm_ptx"; exit 1; }

configs() {
  PYTHONPATH="$build/python:$root/python:$root/examples/python" python3 -c "
import warp_specialized_gemm as ex
print('\n'.join(ex.CONFIGS))"
}

status=0
i=0
while read -r config; do
  i=$((i + 1))
  cpp=$out/cpp_$i.ptx py=$out/python_$i.ptx
  "$program" "$config" >"$cpp" || { echo "$config: FAIL: the C++ kernel's PTX"; status=1; continue; }
  name=$(sed -n 's/^\.visible \.entry \([A-Za-z0-9_]*\)(.*/\1/p' "$cpp")
  PYTHONPATH="$build/python:$root/python:$root/examples/python" python3 -c "
import sys, warp_specialized_gemm as ex
sys.stdout.write(ex.Gemm(**ex.CONFIGS['$config'], name='$name').build().ptx())" >"$py" ||
    { echo "$config: FAIL: the Python kernel's PTX"; status=1; continue; }
  differing=$(diff "$cpp" "$py" | grep -c '^[<>]')
  regs=()
  for side in cpp python; do
    "$ptxas" -arch=sm_90a -v "$out/${side}_$i.ptx" -o "$out/${side}_$i.cubin" >"$out/${side}_$i.ptxas.log" 2>&1 ||
      { echo "$config: FAIL: ptxas ($side)"; status=1; }
    regs+=("$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' "$out/${side}_$i.ptxas.log")")
  done
  if cmp -s "$out/cpp_$i.cubin" "$out/python_$i.cubin"; then
    machine="identical cubins"
  else
    machine="cubins DIFFER"
    status=1
  fi
  echo "$name: PTX lines $(wc -l <"$cpp") C++, $(wc -l <"$py") Python, $differing differing;" \
    "registers ${regs[0]}, ${regs[1]}; $machine"
done < <(configs)
[ $i -gt 0 ] || { echo "compare-python-gemm-ptx: FAIL: no configurations"; status=1; }
echo "compare-python-gemm-ptx: $([ $status = 0 ] && echo "identical machine code" || echo FAIL) ($("$ptxas" --version | sed -n 's/.*\(release [0-9.]*\).*/ptxas \1/p'))"
exit $status
