// Times the PTX parser and emitter on ~10 MB of nvcc-style PTX: kernels with
// declarations, tensor-core and memory instructions, branches, calls and
// .loc lines, made here so that the benchmark needs no CUDA toolkit.
//   bench_parse_emit [megabytes=10] [repetitions=5]
// Prints the best time of each phase over the repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/parser.hpp"

namespace {

// One kernel of about 9 KB; `i` keeps the names unique.
std::string kernel(int i) {
  std::string k = "k" + std::to_string(i);
  std::string out = ".visible .entry " + k + "(\n\t.param .u64 .ptr .global .align 16 " + k +
                    "_param_0,\n\t.param .u32 " + k +
                    "_param_1\n)\n.maxntid 128, 1, 1\n{\n"
                    "\t.reg .pred \t%p<4>;\n\t.reg .b32 \t%r<64>;\n\t.reg .f32 \t%f<64>;\n\t.reg "
                    ".b64 \t%rd<16>;\n"
                    "\t.shared .align 16 .b8 tile[4096];\n\n"
                    "\tld.param.u64 \t%rd1, [" +
                    k + "_param_0];\n\tld.param.u32 \t%r1, [" + k +
                    "_param_1];\n"
                    "\tmov.u32 \t%r2, %tid.x;\n\tcvta.to.global.u64 \t%rd2, %rd1;\n";
  for (int j = 0; j < 16; ++j) {
    std::string n = std::to_string(j);
    out +=
        "$L__BB" + std::to_string(i) + "_" + n + ":\n\t.loc\t1 " + std::to_string(10 + j) + " 5\n";
    out +=
        "\tsetp.ge.s32 \t%p1, %r2, %r1;\n\t@%p1 bra \t$L__BB" + std::to_string(i) + "_" + n + ";\n";
    out += "\tmul.wide.u32 \t%rd3, %r2, 16;\n\tadd.s64 \t%rd4, %rd2, %rd3;\n";
    out += "\tld.global.nc.v4.u32 \t{%r4, %r5, %r6, %r7}, [%rd4+" + std::to_string(16 * j) + "];\n";
    out += "\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r8, %r9, %r10, %r11}, [%r3];\n";
    out +=
        "\tmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r4, %r5, "
        "%r6, %r7}, "
        "{%r8, %r9}, {%f1, %f2, %f3, %f4};\n";
    out += "\tfma.rn.f32 \t%f5, %f1, 0f3F800000, %f2;\n\tshl.b32 \t%r12, %r2, 0x3;\n";
    out += "\tst.shared.v2.f32 \t[tile+" + std::to_string(8 * j) + "], {%f5, %f3};\n";
    out += "\tatom.global.add.u32 \t%r13, [%rd4+-8], 1;\n\tbar.sync \t0;\n";
  }
  out +=
      "\t{ // callseq 0, 0\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd4;\n"
      "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\thelper, \n\t(\n\tparam0\n\t);\n"
      "\tld.param.b32 \t%r14, [retval0+0];\n\t} // callseq 0\n\tret;\n\n}\n";
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const double megabytes = argc > 1 ? std::atof(argv[1]) : 10.0;
  const int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  std::string text =
      ".version 8.4\n.target sm_80\n.address_size 64\n\n"
      ".extern .func (.param .b32 func_retval0) helper\n(\n\t.param .b64 helper_param_0\n)\n;\n";
  for (int i = 0; text.size() < megabytes * 1e6; ++i) text += kernel(i);
  text += "\t.file\t1 \"bench.cu\"\n";

  double parse_best = 1e9, emit_best = 1e9;
  std::size_t emitted_size = 0;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    warpforge::ptx::Module m = warpforge::ptx::parse(text, "bench.ptx");
    parse_best = std::min(parse_best, seconds_since(start));
    start = std::chrono::steady_clock::now();
    std::string out = warpforge::ptx::emit(m);
    emit_best = std::min(emit_best, seconds_since(start));
    emitted_size = out.size();
  }
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("input %.2f MB (%zu bytes), emitted %.2f MB; best of %d\n", mb, text.size(),
              static_cast<double>(emitted_size) / 1e6, repetitions);
  std::printf("%-12s %10s %10s\n", "phase", "seconds", "MB/s");
  std::printf("%-12s %10.3f %10.1f\n", "parse", parse_best, mb / parse_best);
  std::printf("%-12s %10.3f %10.1f\n", "emit", emit_best, mb / emit_best);
  std::printf("%-12s %10.3f %10.1f   (target: < 1 s)\n", "parse+emit", parse_best + emit_best,
              mb / (parse_best + emit_best));
  return 0;
}
