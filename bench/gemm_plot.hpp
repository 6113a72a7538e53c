// bench_gemm's --plot: the roofline's two ceilings for this GPU and the SVG
// of a run's rows (tools/pictures/benchmark_plot.hpp draws it; this file only
// measures and gathers).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "pictures/benchmark_plot.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"

namespace warpforge::bench {

// Device-to-device copy bandwidth in GB/s counting bytes read plus bytes
// written, as the roofline's memory traffic is counted: the median of 10
// copies of 512 MiB, timed with events after one warm-up copy.
inline double measure_copy_gbps(const runtime::Device& dev) {
  const std::size_t bytes = std::size_t{512} << 20;
  runtime::Buffer src(dev, bytes), dst(dev, bytes);
  src.fill(0x3c);
  dst.copy_from(src, bytes);
  std::vector<float> ms;
  for (int i = 0; i < 10; ++i) {
    runtime::Event start(dev), end(dev);
    start.record();
    dst.copy_from(src, bytes);
    end.record();
    ms.push_back(runtime::Event::elapsed_ms(start, end));
  }
  std::sort(ms.begin(), ms.end());
  return 2.0 * static_cast<double>(bytes) / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

// The dense bf16 tensor-core rate at the GPU's top clock, TFLOP/s: SMs x
// clock x FLOP per clock per SM, 2048 on sm_80 and 4096 on sm_90 (NVIDIA A100
// and H100 whitepapers: 312 TFLOP/s on 108 SMs at 1410 MHz, 989 on 132 SMs
// at 1830 MHz). 0 for other GPUs: give --peak-tflops there.
inline double dense_bf16_tflops(const runtime::Device& dev) {
  const auto& p = dev.properties();
  const int per_clock = p.compute_capability_major == 9                                      ? 4096
                        : p.compute_capability_major == 8 && p.compute_capability_minor == 0 ? 2048
                                                                                             : 0;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, p.ordinal) != cudaSuccess) return 0;
  return static_cast<double>(p.sm_count) * khz * 1e3 * per_clock / 1e12;
}

inline void write_plot(const std::string& path, const pictures::BenchmarkPlot& plot) {
  std::ofstream out(path);
  out << pictures::benchmark_plot_svg(plot);
  out.close();
  if (!out) throw Error("--plot " + path + ": cannot write the file");
  std::printf("\nwrote %s (tensor cores %.0f TFLOP/s, copy %.0f GB/s)\n", path.c_str(),
              plot.peak_tflops, plot.copy_gbps);
}

}  // namespace warpforge::bench
