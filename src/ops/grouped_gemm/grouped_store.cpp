#include "grouped_store.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

void store_d_element(Kernel& k, DType d, const Reg& address, const Reg& v, const Pred& in) {
  if (d == DType::f32) {
    k.guarded(in, [&] { k.st(Space::global, f32, at(address), v); });
    return;
  }
  Reg h = k.reg(b16);
  k.cvt(d == DType::f16 ? f16 : bf16, f32, h, v, {Round::rn});
  k.guarded(in, [&] { k.st(Space::global, b16, at(address), h); });
}

void store_d_pair(Kernel& k, DType d, const Reg& address, const Reg& v0, const Reg& v1, const Pred& in0,
                  const Pred& in1, bool pairs) {
  const int bytes = runtime::bits(d) / 8;
  Reg next = address + Src(static_cast<std::uint64_t>(bytes));
  if (!pairs || d == DType::f32) {
    store_d_element(k, d, address, v0, in0);
    store_d_element(k, d, next, v1, in1);
    return;
  }
  Reg packed = k.reg(b32);
  k.cvt_pack(d == DType::f16 ? f16x2 : bf16x2, packed, v1, v0);  // v0 in the low half (PTX ISA 9.7.9.21)
  Reg low = k.reg(b16);
  k.cvt(u16, u32, low, packed);
  k.if_else(in1, [&] { k.st(Space::global, b32, at(address), packed); },
            [&] { k.guarded(in0, [&] { k.st(Space::global, b16, at(address), low); }); });
}

}  // namespace warpforge::ops
