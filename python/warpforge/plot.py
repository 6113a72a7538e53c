"""Benchmark plots with matplotlib: TFLOP/s of warpforge and its peers over
GEMM shapes, under the roofline's two ceilings -- the tensor-core rate, and
each shape's bytes moved at the measured device-to-device copy bandwidth
(FLOPs / (bytes / bandwidth)).

The same picture as ``bench_gemm --plot`` and ``warpforge plot`` draw in C++
(tools/pictures/benchmark_plot.cpp), for Python users who already have
matplotlib. This module imports nothing outside the standard library until a
plot is drawn, so it loads on its own (no package needed) and its arithmetic
works without matplotlib.

Rows are mappings: ``shape`` ("MxNxK"), ``bytes`` (the least traffic: inputs
read once, output written once), optionally ``flops`` (default 2*M*N*K), and
one TFLOP/s figure per series (``None`` where not measured)::

    rows = [{"shape": "4096x4096x4096", "bytes": 100663296, "warpforge": 805, "cuBLAS": 801}]
    fig = plot_benchmarks(rows, peak_tflops=990, copy_gbps=4100, path="gemm.svg")
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

_RESERVED = ("shape", "bytes", "flops")
_SERIES_COLOURS = ("#1f6fb4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


def gemm_flops(shape: str) -> float:
    """2*M*N*K of an "MxNxK" shape; ValueError for other text."""
    parts = shape.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise ValueError(f"shape {shape!r}: expected MxNxK with M, N, K >= 1, e.g. 4096x4096x4096")
    m, n, k = (int(p) for p in parts)
    return 2.0 * m * n * k


def memory_ceiling_tflops(row: Mapping, copy_gbps: float) -> float:
    """The TFLOP/s a row could reach if moving its bytes at copy_gbps were all it took."""
    flops = row.get("flops") or gemm_flops(row["shape"])
    return flops / (row["bytes"] / (copy_gbps * 1e9)) / 1e12


def series_of(rows: Sequence[Mapping]) -> list[str]:
    """The series named by the rows, in first-seen order."""
    names: list[str] = []
    for row in rows:
        names += [k for k in row if k not in _RESERVED and k not in names]
    return names


def check(rows: Sequence[Mapping], peak_tflops: float, copy_gbps: float) -> None:
    """ValueError naming the problem unless the rows and ceilings can be drawn."""
    if not rows:
        raise ValueError("no rows to plot")
    if not (peak_tflops > 0 and copy_gbps > 0):
        raise ValueError(
            f"tensor-core rate {peak_tflops} TFLOP/s and copy bandwidth {copy_gbps} GB/s: "
            "both ceilings must be positive")
    for row in rows:
        if "shape" not in row or "bytes" not in row:
            raise ValueError(f"row {dict(row)!r} needs 'shape' and 'bytes'")
        if not row["bytes"] > 0:
            raise ValueError(f"shape {row['shape']}: bytes {row['bytes']} must be positive")
        gemm_flops(row["shape"])
        for name in series_of([row]):
            value = row[name]
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"shape {row['shape']}: {name} = {value}; rates are finite and >= 0")


def read_table(path: str) -> tuple[list[dict], dict]:
    """A docs/data/*.tsv table (the format `warpforge plot` reads): its rows and
    its '# key: value' settings (title, note, peak_tflops, copy_gbps)."""
    rows: list[dict] = []
    settings: dict = {}
    header = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                key, colon, value = line.lstrip("# ").partition(":")
                if colon and key in ("title", "note"):
                    settings[key] = value.strip()
                elif colon and key in ("peak_tflops", "copy_gbps"):
                    settings[key] = float(value)
                continue
            fields = line.split("\t")
            if header is None:
                if len(fields) < 3 or fields[:2] != ["shape", "bytes"]:
                    raise ValueError(f"{path}:{number}: expected the header 'shape<TAB>bytes<TAB><series>...'")
                header = fields
                continue
            if len(fields) != len(header):
                raise ValueError(f"{path}:{number}: {len(fields)} fields; the header has {len(header)}")
            row = {"shape": fields[0], "bytes": float(fields[1])}
            for name, text in zip(header[2:], fields[2:]):
                row[name] = None if text == "-" else float(text)
            rows.append(row)
    if header is None:
        raise ValueError(f"{path}: no header line 'shape<TAB>bytes<TAB><series>...'")
    return rows, settings


def plot_benchmarks(rows: Sequence[Mapping], *, peak_tflops: float, copy_gbps: float,
                    series: Iterable[str] | None = None, title: str = "", note: str = "",
                    path: str | None = None, ax=None):
    """Draws the rows on `ax` (a new figure when None) and saves to `path` when
    given (the format from its suffix: .svg, .png, .pdf). Returns the figure."""
    check(rows, peak_tflops, copy_gbps)
    if ax is None:
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(10, 5.5))
    else:
        fig = ax.figure
    names = list(series) if series is not None else series_of(rows)
    xs = list(range(len(rows)))
    highest = max([peak_tflops] + [row.get(n) or 0 for row in rows for n in names])
    top = highest * 1.1
    for i, name in enumerate(names):
        points = [(x, row.get(name)) for x, row in zip(xs, rows) if row.get(name) is not None]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name,
                color=_SERIES_COLOURS[i % len(_SERIES_COLOURS)], gid=f"series-{name}")
    ax.axhline(peak_tflops, color="#555", linestyle="--", label=f"tensor cores {peak_tflops:g} TFLOP/s",
               gid="ceiling-tensor")
    for x, row in zip(xs, rows):
        ceiling = memory_ceiling_tflops(row, copy_gbps)
        shown = min(ceiling, top)
        ax.hlines(shown, x - 0.4, x + 0.4, color="#b8860b", linestyle="--" if ceiling <= top else ":",
                  label=f"bytes at {copy_gbps:g} GB/s" if x == 0 else None, gid=f"ceiling-memory-{row['shape']}")
        # A ceiling above the plot is drawn along its top, its value just under it.
        ax.annotate(f"{ceiling:.0f}" + (" \u2191" if ceiling > top else ""), (x, shown),
                    textcoords="offset points", xytext=(0, -12 if ceiling > top else 4), ha="center",
                    fontsize=8, color="#8b6508")
    ax.set_xticks(xs)
    ax.set_xticklabels([row["shape"] for row in rows], rotation=30, ha="right")
    ax.set_ylim(0, top)
    ax.set_ylabel("TFLOP/s")
    ax.grid(axis="y", color="#ddd")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    if title:
        ax.set_title(title, loc="left", fontweight="bold")
    if note:
        fig.text(0.01, 0.01, note, fontsize=8, color="#444")
    fig.tight_layout()
    if path:
        fig.savefig(path)
    return fig
