"""python/warpforge/plot.py, loaded from its file alone (no package, no build):
its arithmetic always, its matplotlib drawing where matplotlib is installed."""

import importlib.util
import pathlib
import xml.etree.ElementTree as ET

import pytest

_PLOT = pathlib.Path(__file__).resolve().parents[1] / "warpforge" / "plot.py"
_spec = importlib.util.spec_from_file_location("warpforge_plot_standalone", _PLOT)
plot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plot)

DOCS_DATA = pathlib.Path(__file__).resolve().parents[2] / "docs" / "data"

# 4096^3 is compute-bound; 128x8192x8192 is bound by reading B: 2 * (2*128*8192 + 8192^2)
# bytes at 4000 GB/s is 34.6 us, a 496.5 TFLOP/s ceiling.
ROWS = [
    {"shape": "4096x4096x4096", "bytes": 3 * 4096 * 4096 * 2, "ours": 800.0, "peer": 790.0},
    {"shape": "128x8192x8192", "bytes": 2 * (2 * 128 * 8192 + 8192 * 8192), "ours": 430.0, "peer": None},
]


def test_memory_ceiling_is_bytes_over_bandwidth():
    assert plot.memory_ceiling_tflops(ROWS[1], 4000) == pytest.approx(496.5, abs=0.1)
    assert plot.memory_ceiling_tflops(ROWS[0], 4000) == pytest.approx(5461.33, abs=0.01)
    assert plot.gemm_flops("2x3x4") == 48


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="expected MxNxK"):
        plot.gemm_flops("4096x4096")
    with pytest.raises(ValueError, match="both ceilings must be positive"):
        plot.check(ROWS, 990, 0)
    with pytest.raises(ValueError, match="rates are finite and >= 0"):
        plot.check([{"shape": "2x2x2", "bytes": 8, "ours": -1.0}], 990, 4100)
    with pytest.raises(ValueError, match="needs 'shape' and 'bytes'"):
        plot.check([{"shape": "2x2x2", "ours": 1.0}], 990, 4100)


def test_reads_the_docs_tables():
    tables = sorted(DOCS_DATA.glob("*.tsv"))
    assert tables, f"no tables in {DOCS_DATA}"
    rows, settings = plot.read_table(str(DOCS_DATA / "gemm-bf16-h200.tsv"))
    assert settings["peak_tflops"] == 990 and settings["copy_gbps"] == 4100
    by_shape = {r["shape"]: r for r in rows}
    assert by_shape["4096x4096x4096"]["warpforge"] == 805
    assert by_shape["4096x4096x4096"]["cuBLAS"] == 801
    assert by_shape["4096x4096x4096"]["bytes"] == 3 * 4096 * 4096 * 2
    for table in tables:
        rows, settings = plot.read_table(str(table))
        plot.check(rows, settings["peak_tflops"], settings["copy_gbps"])


def test_draws_points_and_ceilings(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed: the drawing is not tested")
    import matplotlib
    matplotlib.use("Agg")
    path = tmp_path / "plot.svg"
    fig = plot.plot_benchmarks(ROWS, peak_tflops=1000, copy_gbps=4000, title="synthetic", path=str(path))
    ax = fig.axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines()}
    assert list(lines["series-ours"].get_ydata()) == [800.0, 430.0]
    assert list(lines["series-ours"].get_xdata()) == [0, 1]
    assert list(lines["series-peer"].get_ydata()) == [790.0]  # the gap is left out
    assert list(lines["ceiling-tensor"].get_ydata()) == [1000, 1000]
    memory = {c.get_gid(): c for c in ax.collections}
    segment = memory["ceiling-memory-128x8192x8192"].get_segments()[0]
    assert segment[0][1] == pytest.approx(496.5, abs=0.1)
    # 4096^3's ceiling lies above the plot (1100): drawn at its top.
    top = ax.get_ylim()[1]
    assert top == pytest.approx(1100)
    assert memory["ceiling-memory-4096x4096x4096"].get_segments()[0][0][1] == pytest.approx(top)
    ET.parse(path)  # well-formed SVG
