// Everything a kernel author needs: `#include "warpforge/dsl.hpp"` and
// `using namespace warpforge::dsl;`.
#pragma once

#include "warpforge/dsl/kernel.hpp"
