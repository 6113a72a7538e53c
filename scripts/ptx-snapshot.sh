#!/usr/bin/env bash
# Writes the PTX of every built-in kernel (`warpforge ptx --list`) for every
# target it builds for into DIR, one file per kernel and target (a refusal is
# written as the file's text, so a kernel that stops building shows too).
# Two snapshots, before and after a change to the IR, DSL or emitter, must
# be identical:
#
#   scripts/ptx-snapshot.sh build-before /tmp/ptx-before
#   scripts/ptx-snapshot.sh build /tmp/ptx-after
#   diff -r /tmp/ptx-before /tmp/ptx-after && echo identical
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
cli="$1/warpforge"
out="$2"
[ -x "$cli" ] || { echo "$0: no $cli (build the target warpforge_cli)" >&2; exit 1; }
mkdir -p "$out"
"$cli" ptx --list | cut -f1 | while read -r kernel; do
  for target in sm_80 sm_89 sm_90a sm_100a; do
    "$cli" ptx "$kernel" --target "$target" >"$out/$kernel.$target.ptx" 2>&1 || true
  done
done
echo "$(ls "$out" | wc -l) files in $out"
