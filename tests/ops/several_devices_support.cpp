#include "several_devices_support.hpp"

#include <mutex>
#include <random>
#include <thread>

#include "warpforge/error.hpp"

namespace warpforge::ops::testing {

std::vector<std::string> run_on_devices_at_once(const std::vector<runtime::Device>& devices, const AtOnce& plan) {
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < devices.size(); ++d)
    for (int t = 0; t < plan.threads_per_device; ++t)
      threads.emplace_back([&, d, t] {
        // Threads 0 and 1 of a device share a format, so they compile the
        // same kernel at the same time.
        const ScaledFormat& f = kScaledFormats[(static_cast<std::size_t>(t) / 2 + d) % 5];
        GemmAmaxCase c = plan.shape;
        c.ab = f.ab, c.sf = f.sf, c.vec = f.vec;
        const std::string who = devices[d].describe() + ", thread " + std::to_string(t) + " (" + c.describe() + ")";
        std::vector<std::string> mine;
        try {
          std::mt19937 rng(static_cast<unsigned>(1000 * d + t));
          GemmAmaxSetup s = make_gemm_amax(devices[d], c, rng);
          for (int round = 0; round < plan.rounds; ++round)
            for (std::string& why : run_gemm_amax_and_check(s)) mine.push_back(who + ": " + why);
        } catch (const Error& e) {
          mine.push_back(who + ": " + e.what());
        }
        std::lock_guard lock(mutex);
        failures.insert(failures.end(), mine.begin(), mine.end());
      });
  for (std::thread& t : threads) t.join();
  return failures;
}

std::string refusal_across_devices(const runtime::Device& built, const runtime::Device& other) {
  GemmAmaxCase c;
  std::mt19937 rng(7);
  GemmAmaxSetup mine = make_gemm_amax(built, c, rng);
  GemmAmaxSetup theirs = make_gemm_amax(other, c, rng);
  GemmAmax op(*mine.a.view, *mine.b.view, *mine.sfa.view, *mine.sfb.view, *mine.out.view, *mine.amax.view,
              mine.options());
  try {
    op.execute(*theirs.a.view, *theirs.b.view, *theirs.sfa.view, *theirs.sfb.view, *theirs.out.view,
               *theirs.amax.view);
  } catch (const OpsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace warpforge::ops::testing
