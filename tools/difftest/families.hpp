// The families of the differential harness, one builder each (in the file
// named after it); family.hpp's families() lists them in this order.
#pragma once

#include "difftest/family.hpp"

namespace warpforge::difftest {

Family integer_family();        // integer_family.cpp
Family compare_family();        // compare_family.cpp
Family convert_family();        // convert_family.cpp
Family float_arith_family();    // float_families.cpp
Family float_divide_family();   // float_families.cpp
Family float_approx_family();   // float_families.cpp
Family warp_family();           // warp_family.cpp
Family atomic_family();         // atomic_family.cpp
Family matrix_memory_family();  // matrix_memory_family.cpp
Family mma_family();            // mma_family.cpp
Family wgmma_family();          // wgmma_family.cpp
Family kernel_family();         // kernel_family.cpp
Family nvcc_family();           // nvcc_family.cpp
Family triton_family();         // triton_family.cpp

}  // namespace warpforge::difftest
