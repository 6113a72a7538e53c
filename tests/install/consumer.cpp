// Builds a kernel with the installed DSL, runs it on the installed
// simulator and checks every element: the installed package is whole.
#include <cstdio>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/version.hpp"

int main() {
  using namespace warpforge::dsl;
  using namespace warpforge::runtime;
  Kernel k("add_index", Target::sm_80);
  Reg out = k.param_ptr("out", 4);
  Reg n = k.param(u32, "n");
  Reg i = k.sreg(SReg::tid_x);
  k.if_then(i < n, [&] {
    Reg off = k.reg(u64);
    k.mul_wide(off, i, 4);
    Reg p = out + off;
    Reg v = k.reg(u32);
    k.ld(Space::global, u32, v, at(p));
    k.st(Space::global, u32, at(p), v + i);
  });

  Device dev = Device::sim();
  Module m(dev, k.module());
  const std::uint32_t count = 100;
  std::vector<std::uint32_t> host(count, 1000);
  Buffer data(dev, count * 4);
  data.upload(host);
  m.launch("add_index", {.grid = {1}, .block = {128}}, {data, count});
  const auto result = data.download<std::uint32_t>(count);
  for (std::uint32_t j = 0; j < count; ++j)
    if (result[j] != 1000 + j) {
      std::printf("element %u is %u, expected %u\n", j, result[j], 1000 + j);
      return 1;
    }
  std::printf("warpforge %s installed: add_index on the simulator ok\n", WARPFORGE_VERSION);
  return 0;
}
