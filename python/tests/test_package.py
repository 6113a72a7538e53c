"""The package itself: its error hierarchy mirrors the C++ one and carries
the C++ messages; the simulator device is there without a GPU."""

import numpy as np
import pytest

import warpforge


def test_errors_mirror_the_cpp_hierarchy():
    assert issubclass(warpforge.Error, RuntimeError)
    for name in ("DslError", "PtxError", "LayoutError", "RuntimeError", "TileError", "CudaError", "OpsError",
                 "SimError", "ToolchainError"):
        assert issubclass(getattr(warpforge, name), warpforge.Error), name
    assert issubclass(warpforge.TargetError, warpforge.DslError)
    assert issubclass(warpforge.ParseError, warpforge.PtxError)


def test_a_cpp_refusal_arrives_with_its_message():
    with pytest.raises(warpforge.OpsError, match="format 'fp6': accepted mxfp8"):
        warpforge.quantize(np.ones((2, 32), dtype=np.float32), "fp6")


def test_the_simulator_is_a_device():
    sim = warpforge.Device.sim()
    assert sim.is_simulator
    assert sim.target == "sm_90a"
    assert sim == warpforge.Device.sim()
    assert warpforge.Device.cuda_count() >= 0


def test_a_cuda_error_carries_the_driver_call():
    if warpforge.Device.cuda_count() > 0:
        pytest.skip("this machine has a CUDA GPU: Device.cuda(0) succeeds")
    with pytest.raises(warpforge.CudaError) as caught:
        warpforge.Device.cuda(0)
    error = caught.value
    assert str(error).startswith(error.call)
    assert error.code == -1 or error.error_name.startswith("CUDA_ERROR")


def test_the_benchmark_refuses_bad_arguments_before_any_gpu_work(capsys):
    from warpforge import bench

    with pytest.raises(SystemExit, match="'16x8' is not MxNxK"):
        bench.main(["--throughput", "--shapes", "16x8"])
    with pytest.raises(SystemExit):
        bench.main(["--format", "bf16"])  # the host-overhead run times gemm_amax
    assert "--format bf16 belongs to --throughput" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--sweep", "llm", "--shapes", "16x8x8"])
    assert "--sweep llm chooses the shapes: give it or --shapes, not both" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--sweep", "gpt"])
    assert "invalid choice: 'gpt'" in capsys.readouterr().err


def test_the_attention_benchmark_refuses_an_unknown_shape_group_and_bad_counts(capsys):
    from warpforge import bench_attention

    with pytest.raises(SystemExit):
        bench_attention.main(["--prefill", "--backward", "--groups", "d256,d96"])
    assert "--groups d256,d96: d96 is not one of d64, d128, d256, gqa" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_attention.main(["--decode", "--calls", "0"])
    assert "--calls 0: a sample times one call or more" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_attention.main(["--decode", "--lengths", "8192,8k"])
    assert "--lengths 8192,8k: positive integers separated by commas" in capsys.readouterr().err


def test_the_sweep_summary_reports_mean_worst_and_bandwidth(capsys):
    from warpforge import bench

    # Two shapes: M = 16 (its bandwidth row printed) and M = 4096 (not).
    rows = [{"shape": "16x8192x8192", "bytes": 2 * (16 * 8192 + 8192 * 8192 + 16 * 8192), "warpforge": 44.0,
             "cuBLAS bf16": 40.0},
            {"shape": "4096x8192x8192", "bytes": 1, "warpforge": 800.0, "cuBLAS bf16": 1000.0}]
    bench.sweep_summary(rows, "warpforge", 3000.0)
    out = capsys.readouterr().out
    assert "2 shapes: ours / torch.mm geometric mean 0.938; worst 0.800 at 4096x8192x8192." in out
    # 16 x 8192 x 8192 at 44 TFLOP/s moves its 134.7 MB in 48.8 µs: 2.76 TB/s, 0.92 of 3000 GB/s.
    assert "| 16 x 8192 x 8192 | 0.92 | 0.84 |" in out and "| 4096 x" not in out


def test_the_decoder_sweep_is_the_cpp_benchmarks():
    shapes = warpforge._warpforge.decoder_sweep()
    assert len(shapes) == 96 and shapes[0] == (1, 6144, 4096) and shapes[-1] == (8192, 8192, 28672)
    assert sorted({m for m, _, _ in shapes}) == [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]


def test_quantize_refuses_an_empty_tensor_by_its_shape():
    with pytest.raises(warpforge.OpsError, match=r"M, K and L >= 1, got shape \(0, 64, 1\)"):
        warpforge.quantize(np.zeros((0, 64), np.float32), "mxfp8")
