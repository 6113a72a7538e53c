#include "grid.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "launch_monitor.hpp"
#include "memory_access.hpp"
#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::sim {
namespace {

constexpr std::uint32_t kMaxThreadsPerBlock = 1024;
constexpr std::uint32_t kMaxSharedBytes = 227 * 1024;  // H100 opt-in limit per block

// Sets up (or resets, when reused) the CTA `ctaid`, rank `rank` of `cluster`.
void prepare_cta(Cta& cta, const LaunchState& launch, Cluster& cluster, std::uint32_t rank, runtime::Dim3 ctaid,
                 std::uint32_t shared_bytes) {
  cta.launch = &launch;
  cta.cluster = &cluster;
  cta.rank = rank;
  cta.shared_tag = launch.config.cluster.count() > 1 ? cluster_shared_address(rank, 0) : 0;
  cta.ctaid = ctaid;
  cta.threads = static_cast<std::uint32_t>(launch.config.block.count());
  cta.shared.assign(shared_bytes, std::byte{0});
  cta.barriers = {};
  cta.instructions = 0;
  cta.tmem.reset();
  const std::uint32_t warps = (cta.threads + 31) / 32;
  if (launch.check_shared_races) {
    if (!cta.races) cta.races = std::make_unique<SharedRaces>();
    cta.races->reset(warps, shared_bytes);
  } else {
    cta.races.reset();
  }
  cta.warps.resize(warps);
  const Kernel& k = launch.kernel;
  for (std::uint32_t i = 0; i < warps; ++i) {
    Warp& w = cta.warps[i];
    w.cta = &cta;
    w.index = i;
    const std::uint32_t lanes = std::min<std::uint32_t>(32, cta.threads - 32 * i);
    w.exists = lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
    w.ready = w.exists;
    w.pc.fill(0);
    w.state.fill(LaneState::ready);
    w.regs.assign(std::size_t{k.register_slots} * 32, 0);
    w.local.assign(std::size_t{k.local_bytes} * 32, std::byte{0});
    w.async.clear();
    w.bulk.clear();
    w.clock = 0;
    w.blocked = 0;
    w.cluster_arrival.fill(0);
    w.wgmma_pending.assign(k.register_slots, {});
    w.wgmma_open.clear();
    w.wgmma_groups.clear();
    w.wgmma_busy = false;
  }
}

// Sets up (or resets) cluster `index` of the grid: its CTAs in rank order,
// rank = x + cx * (y + cy * z) over the CTA's coordinates in the cluster
// (PTX ISA 10.25 %cluster_ctarank).
void prepare_cluster(Cluster& cluster, const LaunchState& launch, std::uint64_t index, std::uint32_t shared_bytes) {
  const runtime::Dim3& g = launch.config.grid;
  const runtime::Dim3& c = launch.config.cluster;
  const std::uint64_t nx = g.x / c.x, ny = g.y / c.y;
  const runtime::Dim3 first{static_cast<std::uint32_t>(index % nx * c.x),
                            static_cast<std::uint32_t>(index / nx % ny * c.y),
                            static_cast<std::uint32_t>(index / (nx * ny) * c.z)};
  cluster.ctas.resize(c.count());  // the first preparation sizes it; CTAs never move after
  for (std::uint32_t r = 0; r < cluster.ctas.size(); ++r)
    prepare_cta(cluster.ctas[r], launch, cluster, r,
                {first.x + r % c.x, first.y + r / c.x % c.y, first.z + r / (c.x * c.y)}, shared_bytes);
  cluster.live_threads = static_cast<std::uint32_t>(c.count() * launch.config.block.count());
  cluster.arrived = 0;
  cluster.phase = 0;
}

}  // namespace

GridStats run_grid(LaunchState& launch, const SimOptions& options) {
  const auto& cfg = launch.config;
  const Kernel& k = launch.kernel;
  const std::uint64_t threads = cfg.block.count();
  if (threads == 0 || threads > kMaxThreadsPerBlock)
    throw SimError("kernel '" + k.name + "': block of " + std::to_string(threads) +
                   " threads; 1.." + std::to_string(kMaxThreadsPerBlock) + " are accepted");
  if (cfg.grid.count() == 0) throw SimError("kernel '" + k.name + "': empty grid");
  const runtime::Dim3& c = cfg.cluster;
  if (c.count() == 0 || cfg.grid.x % c.x || cfg.grid.y % c.y || cfg.grid.z % c.z)
    throw SimError("kernel '" + k.name + "': cluster (" + std::to_string(c.x) + "," + std::to_string(c.y) + "," +
                   std::to_string(c.z) + ") does not divide the grid");
  const std::uint64_t clusters = cfg.grid.count() / c.count();
  const std::uint64_t shared = std::max<std::uint64_t>(
      k.static_shared_bytes, std::uint64_t{k.dynamic_shared_offset} + cfg.dynamic_shared_bytes);
  if (shared > kMaxSharedBytes)
    throw SimError("kernel '" + k.name + "': " + std::to_string(shared) +
                   " bytes of shared memory per block (" + std::to_string(k.static_shared_bytes) +
                   " static + " + std::to_string(cfg.dynamic_shared_bytes) + " dynamic); at most " +
                   std::to_string(kMaxSharedBytes) + " are accepted");
  const auto shared_bytes = static_cast<std::uint32_t>(shared);

  LaunchMonitor monitor(k.name, {options.max_thread_instructions, options.time_limit_seconds},
                        clusters, c.count() > 1 ? "clusters" : "blocks", options.progress,
                        options.progress_after_seconds);
  launch.monitor = &monitor;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> executed{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto worker = [&] {
    Cluster cluster;
    std::uint64_t count = 0;
    for (std::uint64_t i;
         !stop.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < clusters;) {
      try {
        prepare_cluster(cluster, launch, i, shared_bytes);
        run_cluster(cluster);
        std::uint64_t instructions = 0;
        for (const Cta& cta : cluster.ctas) instructions += cta.instructions;
        count += instructions;
        monitor.cluster_done(instructions);
      } catch (const LaunchMonitor::Cancelled&) {
        stop = true;  // another worker failed; its error is the one reported
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
        monitor.cancel();
      }
    }
    executed += count;
  };
  const unsigned n = static_cast<unsigned>(
      std::min<std::uint64_t>(std::max(1u, options.worker_threads), clusters));
  if (n == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < n; ++i) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (error) std::rethrow_exception(error);
  return {executed.load()};
}

}  // namespace warpforge::sim
