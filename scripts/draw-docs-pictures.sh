#!/usr/bin/env bash
# Redraws every picture under docs/img with the `warpforge` program:
#   - the benchmark plots, from the recorded tables docs/data/<name>.tsv
#     (`warpforge plot`), as docs/img/<name>.svg;
#   - the layout pictures the README and docs/LAYOUTS.md show
#     (`warpforge layout`).
# The tests (test_pictures) check that the committed pictures equal what this
# script draws, so after changing a table or the drawing code, run it and
# commit docs/img.
#
#   scripts/draw-docs-pictures.sh            # uses build/warpforge
#   WARPFORGE=/path/to/warpforge scripts/draw-docs-pictures.sh
set -euo pipefail
cd "$(dirname "$0")/.."

warpforge="${WARPFORGE:-build/warpforge}"
if [ ! -x "$warpforge" ]; then
  echo "draw-docs-pictures: $warpforge not found; build it (cmake --build build --target warpforge_cli)" >&2
  echo "or point WARPFORGE at it" >&2
  exit 1
fi
mkdir -p docs/img
for table in docs/data/*.tsv; do
  "$warpforge" plot "$table" -o "docs/img/$(basename "$table" .tsv).svg"
done
"$warpforge" layout mma.m16n8k16.A --svg docs/img/mma-m16n8k16-a.svg
"$warpforge" layout smem --swizzle 128B --access ldmatrix --svg docs/img/smem-swizzle-128b-ldmatrix.svg
"$warpforge" layout smem --swizzle none --access ldmatrix --svg docs/img/smem-swizzle-none-ldmatrix.svg
