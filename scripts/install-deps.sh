#!/usr/bin/env bash
# Installs what the build needs and the machine lacks (Debian/Ubuntu): a C++20
# compiler, CMake, Ninja, GoogleTest, the DLPack header and LLVM 19 with lld
# (the AMD backend compiles its kernels with llc-19 for gfx90a/gfx942, links
# them with ld.lld-19 and disassembles them with llvm-objdump-19; Debian's
# LLVM 14 lacks gfx942). The CUDA toolkit is optional: without ptxas the
# assembler tests skip, saying so.
set -euo pipefail

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
[ -f /usr/include/dlpack/dlpack.h ] || missing+=(libdlpack-dev)
command -v llc-19 >/dev/null || missing+=(llvm-19)
command -v ld.lld-19 >/dev/null || missing+=(lld-19)

[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || { echo "install-deps: run as root or install: ${missing[*]}" >&2; exit 1; }
else
  SUDO=
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
