#!/usr/bin/env bash
# Records ptxas's verdict on every kernel the *Ptxas tests assemble into
# tests/ops/ptxas_record.txt (tests/ops/ptxas_record.hpp), so that `make test`
# assembles only PTX that changed since. Run it after changing a kernel when
# a *Ptxas test fails with "its PTX is not in tests/ops/ptxas_record.txt",
# then look at `git diff tests/ops/ptxas_record.txt` (registers, spills) and
# commit it with the kernel. Needs ptxas (the CUDA toolkit); the record holds
# for that ptxas build only (its first line), other builds assemble for real.
#
# Then the corpus round trips (test_ptx's parse -> emit, test_transpiler's
# transpile -> rebuild) that give the original's machine code go to
# tests/corpus/ptx/same-machine-code.txt (tests/ptx/same_machine_code.hpp),
# so that an unchanged round trip is not assembled; run it after changing the
# emitter or the transpiler too (an unrecorded round trip is only slower).
#
#   scripts/record-ptxas.sh            # BUILD_DIR may be set (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
ptxas="${WARPFORGE_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}"
[ -x "$ptxas" ] || { echo "record-ptxas: no ptxas (set WARPFORGE_PTXAS)" >&2; exit 1; }
cmake --build "$build" --target test_ops test_ptx test_transpiler
record="$PWD/tests/ops/ptxas_record.txt"
lines="$(mktemp)"
trap 'rm -f "$lines"' EXIT
WARPFORGE_PTXAS="$ptxas" WARPFORGE_RECORD_PTXAS="$lines" "$build/tests/test_ops" --gtest_filter='*Ptxas*' --gtest_brief=1
{ echo "# $("$ptxas" --version | grep . | tail -1)"; LC_ALL=C sort -u "$lines"; } >"$record"
echo "record-ptxas: $(($(wc -l <"$record") - 1)) assemblies in $record"
same="$PWD/tests/corpus/ptx/same-machine-code.txt"
rm -f "$lines"
WARPFORGE_PTXAS="$ptxas" WARPFORGE_RECORD_SAME_MACHINE_CODE="$lines" "$build/tests/test_ptx" \
  --gtest_filter='NvccCorpus/RoundTrip.*' --gtest_brief=1
WARPFORGE_PTXAS="$ptxas" WARPFORGE_RECORD_SAME_MACHINE_CODE="$lines" "$build/tests/test_transpiler" \
  --gtest_filter='TranspilerRoundTrip.CorpusFiles' --gtest_brief=1
{ echo "# $("$ptxas" --version | grep . | tail -1)"; LC_ALL=C sort -u "$lines"; } >"$same"
echo "record-ptxas: $(($(wc -l <"$same") - 1)) round trips in $same"
