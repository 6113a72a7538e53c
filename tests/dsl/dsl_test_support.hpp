// Shared helpers of the DSL tests: assembling with the real ptxas, checking
// refusals (exception type and message contents) and golden PTX files.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::dsl::testing_support {

// Why an assembling test is skipped on this machine, or empty when ptxas is found.
std::string ptxas_missing_reason();

// Assembles `module` with ptxas for its target; on failure the result carries
// ptxas's log and the numbered PTX text.
::testing::AssertionResult assembles(const ptx::Module& module);

// Runs `build` and checks that it throws exactly `E` (not a subclass: a
// DslError test fails on a TargetError) whose message contains every one of
// `needles`.
template <class E>
::testing::AssertionResult throws_with(const std::function<void()>& build,
                                       const std::vector<std::string>& needles) {
  try {
    build();
  } catch (const E& e) {
    std::string message = e.what();
    if (typeid(e) != typeid(E))
      return ::testing::AssertionFailure() << "threw a subclass of the expected type: " << message;
    for (const auto& needle : needles)
      if (message.find(needle) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks \"" << needle << "\": " << message;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// Compares `text` with tests/dsl/golden/<file>; with WARPFORGE_UPDATE_GOLDEN=1
// in the environment it rewrites the file instead (and the check passes).
::testing::AssertionResult matches_golden(const std::string& file, const std::string& text);

}  // namespace warpforge::dsl::testing_support
