#include "warpforge/layout/tcgen05_instr_descriptor.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::layout {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw LayoutError("tcgen05 instruction descriptor: " + what);
}

const char* element_name(Tcgen05Element e) {
  switch (e) {
    case Tcgen05Element::f16:
      return "f16";
    case Tcgen05Element::bf16:
      return "bf16";
    case Tcgen05Element::tf32:
      return "tf32";
    case Tcgen05Element::e4m3:
      return "e4m3";
    case Tcgen05Element::e5m2:
      return "e5m2";
    case Tcgen05Element::e2m3:
      return "e2m3";
    case Tcgen05Element::e3m2:
      return "e3m2";
    case Tcgen05Element::e2m1:
      return "e2m1";
  }
  return "";
}

bool is_sub_byte(Tcgen05Element e) {
  return e == Tcgen05Element::e2m3 || e == Tcgen05Element::e3m2 || e == Tcgen05Element::e2m1;
}

// The 3-bit type code of an operand (PTX ISA 9.7.16.4.2, the atype/btype rows).
std::uint32_t element_code(Tcgen05Element e, Tcgen05Scaling scaling, const char* operand) {
  const bool fp4_kind =
      scaling == Tcgen05Scaling::fp4_ue8m0 || scaling == Tcgen05Scaling::fp4_ue4m3;
  if (fp4_kind) {
    if (e != Tcgen05Element::e2m1)
      refuse(std::string(operand) + " is " + element_name(e) +
             "; kinds mxf4 and mxf4nvf4 take e2m1 only");
    return 1;
  }
  switch (e) {
    case Tcgen05Element::f16:
    case Tcgen05Element::bf16:
    case Tcgen05Element::tf32:
      if (scaling != Tcgen05Scaling::none)
        refuse(std::string(operand) + " is " + element_name(e) +
               "; block-scaled descriptors take e4m3, e5m2, e2m3, e3m2 or e2m1");
      return e == Tcgen05Element::f16 ? 0 : e == Tcgen05Element::bf16 ? 1 : 2;
    case Tcgen05Element::e4m3:
      return 0;
    case Tcgen05Element::e5m2:
      return 1;
    case Tcgen05Element::e2m3:
      return 3;
    case Tcgen05Element::e3m2:
      return 4;
    case Tcgen05Element::e2m1:
      return 5;
  }
  return 0;
}

// A and B must belong to one kind: f16/bf16 (kind::f16), tf32, or the 8/6/4-bit family.
int family(Tcgen05Element e) {
  if (e == Tcgen05Element::f16 || e == Tcgen05Element::bf16) return 0;
  if (e == Tcgen05Element::tf32) return 1;
  return 2;
}

}  // namespace

std::uint32_t Tcgen05InstrDescriptor::encode() const {
  if (family(a) != family(b) || (family(a) == 0 && a != b))
    refuse(std::string("A ") + element_name(a) + " with B " + element_name(b) +
           "; one kind takes both: f16×f16, bf16×bf16, tf32×tf32, or any pair of e4m3, e5m2, e2m3, "
           "e3m2, e2m1");
  const bool scaled = scaling != Tcgen05Scaling::none;
  if (scaled ? (m != 128 && m != 256) : (m != 64 && m != 128 && m != 256))
    refuse("M = " + std::to_string(m) +
           (scaled ? "; block-scaled MMAs take M = 128 or 256"
                   : "; M is 64, 128 (cta_group::1) or 256 (cta_group::2)"));
  if (n < 8 || n > 256 || n % 8 != 0)
    refuse("N = " + std::to_string(n) + "; a multiple of 8 in 8..256");
  if (scaled && !d_f32)
    refuse("an f16 D with block scaling; the block-scaled kinds accumulate in f32");
  if ((a_mn_major && is_sub_byte(a)) || (b_mn_major && is_sub_byte(b)))
    refuse("an MN-major fp6/fp4 operand; e2m3, e3m2 and e2m1 operands are K-major");
  for (int id : {scale_a_id, scale_b_id})
    if (id < 0 || id > 3 || (!scaled && id != 0))
      refuse("scale-factor ID " + std::to_string(id) +
             (scaled ? "; 0..3 (a byte of the tensor-memory word)"
                     : "; descriptors without block scaling have none"));
  std::uint32_t bits =
      element_code(a, scaling, "A") << 7 | element_code(b, scaling, "B") << 10 |
      static_cast<std::uint32_t>(negate_a) << 13 | static_cast<std::uint32_t>(negate_b) << 14 |
      static_cast<std::uint32_t>(a_mn_major) << 15 | static_cast<std::uint32_t>(b_mn_major) << 16 |
      static_cast<std::uint32_t>(n >> 3) << 17 | static_cast<std::uint32_t>(m >> 4) << 24;
  if (!scaled) return bits | static_cast<std::uint32_t>(d_f32) << 4;
  const bool ue8m0 = scaling != Tcgen05Scaling::fp4_ue4m3;
  return bits | static_cast<std::uint32_t>(scale_b_id) << 4 |
         static_cast<std::uint32_t>(ue8m0) << 23 | static_cast<std::uint32_t>(scale_a_id) << 29;
}

}  // namespace warpforge::layout
