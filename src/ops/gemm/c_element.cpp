#include "c_element.hpp"

#include "warpforge/error.hpp"

namespace warpforge::ops {

dsl::Reg load_c_element(dsl::Kernel& k, runtime::DType dtype, const dsl::Reg& address) {
  using namespace dsl;
  Reg c = k.reg(f32);
  if (dtype == runtime::DType::f32) {
    k.ld(Space::global, f32, c, at(address));
    return c;
  }
  if (dtype != runtime::DType::f16 && dtype != runtime::DType::bf16)
    throw OpsError("gemm epilogue: C is " + std::string(runtime::name(dtype)) +
                   "; f32, f16 or bf16 expected");
  const Type t = dtype == runtime::DType::f16 ? f16 : bf16;
  Reg h = k.reg(t);
  k.ld(Space::global, t, h, at(address));
  k.cvt(c, h);
  return c;
}

}  // namespace warpforge::ops
