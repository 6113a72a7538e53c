// The wmma forms (PTX ISA 9.7.14.4 "Warp Level Matrix Multiply-Accumulate
// Instructions"): shapes, element types and the registers a thread's
// fragment of each matrix takes (9.7.14.4.1 "Matrix Fragments for WMMA").
// The DSL's wmma wrappers and the simulator's decoder read them here.
#pragma once

#include <optional>
#include <string>

#include "warpforge/ptx/modifiers.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::ptx {

// The matrices of D = A·B + C; a wmma.load names a, b or c, wmma.store d.
enum class WmmaMatrix : std::uint8_t { a, b, c, d };

struct WmmaDims {
  int m, n, k;
  // Rows and columns of one matrix of the shape: A is m×k, B k×n, C and D m×n.
  int rows(WmmaMatrix x) const { return x == WmmaMatrix::b ? k : m; }
  int cols(WmmaMatrix x) const { return x == WmmaMatrix::a ? k : n; }
};

// m16n16k16, m32n8k16, m8n32k16 and m16n16k8 (the floating-point shapes);
// nullopt for any other.
std::optional<WmmaDims> wmma_dims(MmaShape shape);

// Why A/B elements of type `ab` and accumulators of type `acc` are not a
// wmma form of `shape` ("" when they are): f16 inputs with f16 or f32
// accumulators and bf16 inputs with f32 ones in m16n16k16, m32n8k16 and
// m8n32k16; tf32 inputs with f32 accumulators in m16n16k8.
std::string wmma_form_error(MmaShape shape, Type ab, Type acc);

// Why elements of type t cannot be matrix x of a wmma load or store in
// `shape` ("" when they can): A and B hold f16 or bf16 (tf32 in m16n16k8),
// C and D f32 or (not in m16n16k8) f16.
std::string wmma_element_error(MmaShape shape, WmmaMatrix x, Type t);

// The .b32/.f32 registers of one thread's fragment of matrix x, elements of
// type t: f16 A and B fragments take 8 whatever the shape (the fragment holds
// 16 halves, some matrices' elements twice); every other fragment holds its
// matrix's elements once, spread over the 32 threads.
int wmma_fragment_registers(MmaShape shape, WmmaMatrix x, Type t);

}  // namespace warpforge::ptx
