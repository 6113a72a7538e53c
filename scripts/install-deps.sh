#!/usr/bin/env bash
# Installs what the build needs and the machine lacks (Debian/Ubuntu): a C++20
# compiler, CMake, Ninja, GoogleTest, the DLPack header and LLVM 19 with lld
# (the AMD backend compiles its kernels with llc-19 for gfx90a/gfx942, links
# them with ld.lld-19 and disassembles them with llvm-objdump-19; Debian's
# LLVM 14 lacks gfx942). The CUDA toolkit is optional: without ptxas the
# assembler tests skip, saying so. Then, with pip, what the Python package
# (python/) needs to build and test: nanobind, scikit-build-core, NumPy,
# ml_dtypes, pytest, torch and JAX (quick when all are there: one import
# check). torch and JAX run the framework tests on the simulator (CPU
# tensors, host devices), warpforge.distributed's two-process and two-device
# tests included; JAX must be there before CMake configures (its FFI headers
# build the JAX handlers). PyPI's torch wheel is its CUDA build, about 3 GB
# with its NVIDIA libraries (3 minutes to install here), and runs CPU
# tensors on machines without a GPU; JAX's is 90 MB. Triton (which that
# torch wheel depends on; listed for a torch without it) compiles the
# tutorial kernels warpforge.triton runs on the simulator.
set -euo pipefail

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
[ -f /usr/include/dlpack/dlpack.h ] || missing+=(libdlpack-dev)
command -v llc-19 >/dev/null || missing+=(llvm-19)
command -v ld.lld-19 >/dev/null || missing+=(lld-19)

# Python with its headers (for the extension module) and pip; the pip
# packages the Python package builds and tests with (pip names: import names
# with - for _). One interpreter start: it prints "apt: ..." and "pip: ...".
python_report() {
  python3 - <<'EOF_PY'
import importlib.util, os, sysconfig
apt = [] if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else ["python3-dev"]
if importlib.util.find_spec("pip") is None:
    apt.append("python3-pip")
print("apt:", *apt)
print("pip:", *(m.replace("_", "-") for m in ("nanobind", "scikit_build_core", "numpy", "ml_dtypes", "pytest", "torch", "jax", "triton")
                if importlib.util.find_spec(m) is None))
EOF_PY
}
if command -v python3 >/dev/null; then
  report="$(python_report)"
  read -r -a python_apt <<<"$(sed -n 's/^apt://p' <<<"$report")"
  missing+=("${python_apt[@]}")
else
  missing+=(python3 python3-dev python3-pip)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
    command -v sudo >/dev/null || { echo "install-deps: run as root or install: ${missing[*]}" >&2; exit 1; }
  else
    SUDO=
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# After an apt install, ask again: python3 itself may be new.
[ ${#missing[@]} -gt 0 ] && report="$(python_report)"
read -r -a python_missing <<<"$(sed -n 's/^pip://p' <<<"$report")"
if [ ${#python_missing[@]} -gt 0 ]; then
  echo "install-deps: pip installing ${python_missing[*]}"
  # Debian's own Python refuses pip without --break-system-packages (PEP 668);
  # the flag is unknown to pips older than 23.0.1, which need none.
  pip_flags=(-q)
  python3 -m pip install --help | grep -q -- --break-system-packages && pip_flags+=(--break-system-packages)
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install "${pip_flags[@]}" "${python_missing[@]}"
fi
