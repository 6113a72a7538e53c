// tile/ and layout/ from Python (warpforge._warpforge.tile, .layout): the
// warp-specialized kernel template of Hopper kernels with a design written
// in Python (its steps are Python methods the template calls while it
// builds the kernel, emitting into the design's warpforge.Kernel), the
// pieces a design works with (the tile scheduler, work items, pipeline
// state, named barriers, the shared-memory carve-up, warpgroup MMA k-blocks
// and their descriptors, swizzled chunks), and the layout algebra's
// layouts and swizzles. examples/python/warp_specialized_gemm.py is a GEMM
// written this way.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/layout.hpp"
#include "warpforge/layout/parse.hpp"
#include "warpforge/layout/swizzle.hpp"
#include "warpforge/tile/smem_swizzle.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace nb = nanobind;

namespace warpforge::python {
namespace {

using dsl::Kernel;
using dsl::Reg;

// A design whose hooks are the methods of a Python object (warpforge.tile.Design's
// subclasses). Its work comes from a TileScheduler built from what the
// Python work_source returns: (TileSchedulerOptions, M, N, K, L registers).
class PythonDesign final : public tile::WarpSpecializedDesign {
 public:
  explicit PythonDesign(nb::object design) : py_(std::move(design)) {}

  Kernel& kernel() override { return nb::cast<Kernel&>(py_.attr("kernel")); }
  tile::WarpSpecializedConfig config() const override {
    return nb::cast<tile::WarpSpecializedConfig>(py_.attr("config")());
  }
  void params(tile::WarpSpecialized& ws) override { hook("params", ws); }
  void prologue(tile::WarpSpecialized& ws) override { hook("prologue", ws); }
  void initialize(tile::WarpSpecialized& ws) override { hook("initialize", ws); }
  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized& ws) override {
    nb::tuple r = nb::cast<nb::tuple>(py_.attr("work_source")(ref(ws)));
    if (r.size() != 5)
      throw TileError("work_source returns (TileSchedulerOptions, M, N, K, L), got " +
                      std::to_string(r.size()) + " values");
    return std::make_unique<tile::TileScheduler>(
        kernel(), nb::cast<tile::TileSchedulerOptions>(r[0]), nb::cast<Reg>(r[1]),
        nb::cast<Reg>(r[2]), nb::cast<Reg>(r[3]), nb::cast<Reg>(r[4]));
  }
  void load_item(const tile::WorkItem& w) override { hook("load_item", w); }
  void load(const tile::LoadStep& s) override { hook("load", s); }
  void consumer_setup(tile::WarpSpecialized& ws) override { hook("consumer_setup", ws); }
  int compute(const tile::ComputeStep& s) override {
    return nb::cast<int>(py_.attr("compute")(ref(s)));
  }
  void finish(const tile::WorkItem& w) override { hook("finish", w); }
  void consumer_teardown(tile::WarpSpecialized& ws) override { hook("consumer_teardown", ws); }

 private:
  template <class T>
  static nb::object ref(T& value) {
    return nb::cast(&value, nb::rv_policy::reference);
  }
  template <class T>
  void hook(const char* name, T& arg) {
    py_.attr(name)(ref(arg));
  }

  nb::object py_;
};

}  // namespace

void bind_tile(nb::module_& m) {
  nb::module_ layout =
      m.def_submodule("layout", "The layout algebra: Shape:Stride layouts, swizzles.");
  nb::class_<layout::Layout>(layout, "Layout",
                             "A Shape:Stride layout, e.g. layout.parse('(4,8):(8,1)').")
      .def(
          "__call__", [](const layout::Layout& l, std::int64_t i) { return l(i); },
          nb::arg("index"), "The offset of the index-th coordinate (colexicographic).")
      .def("size", &layout::Layout::size, "How many coordinates the layout has.")
      .def("__repr__", [](const layout::Layout& l) { return layout::to_string(l); });
  layout.def("parse", &layout::parse_layout, nb::arg("text"),
             "A layout from its text: '(4,8):(8,1)'.");
  nb::enum_<layout::SmemSwizzle>(layout, "SmemSwizzle")
      .value("none", layout::SmemSwizzle::none)
      .value("b32", layout::SmemSwizzle::b32)
      .value("b64", layout::SmemSwizzle::b64)
      .value("b128", layout::SmemSwizzle::b128);
  nb::class_<layout::Swizzle>(layout, "Swizzle", "Swizzle<bits, base, shift> of offsets.")
      .def(nb::init<int, int, int>(), nb::arg("bits"), nb::arg("base"), nb::arg("shift"))
      .def("__call__", &layout::Swizzle::operator(), nb::arg("offset"))
      .def("__repr__", [](const layout::Swizzle& s) { return layout::to_string(s); });
  layout.def("smem_swizzle", &layout::smem_swizzle, nb::arg("mode"), nb::arg("element_bytes"),
             "The Hopper mode as a Swizzle on offsets of element_bytes elements.");

  nb::module_ tile = m.def_submodule("tile", "Tile primitives and the warp-specialized template.");
  nb::class_<tile::SharedLayout>(tile, "SharedLayout",
                                 "The carve-up of a kernel's dynamic shared memory (offsets).")
      .def(nb::init<>())
      .def_ro_static("kBaseAlignment", &tile::SharedLayout::kBaseAlignment,
                     "What the kernel aligns its shared-memory base to (bytes).")
      .def("ring", &tile::SharedLayout::ring, nb::arg("stage_bytes"), nb::arg("stages"),
           nb::arg("align") = tile::SharedLayout::kBaseAlignment)
      .def("buffer", &tile::SharedLayout::buffer, nb::arg("bytes"), nb::arg("align") = 16)
      .def("mbarriers", &tile::SharedLayout::mbarriers, nb::arg("count"))
      .def_prop_ro("used", &tile::SharedLayout::used)
      .def_prop_ro("launch_bytes", &tile::SharedLayout::launch_bytes);
  nb::enum_<tile::ConsumerSchedule>(tile, "ConsumerSchedule")
      .value("cooperative", tile::ConsumerSchedule::cooperative)
      .value("pingpong", tile::ConsumerSchedule::pingpong);
  nb::class_<tile::WarpSpecializedConfig>(tile, "WarpSpecializedConfig")
      .def(nb::init<>())
      .def_rw("consumers", &tile::WarpSpecializedConfig::consumers)
      .def_rw("helpers", &tile::WarpSpecializedConfig::helpers)
      .def_rw("schedule", &tile::WarpSpecializedConfig::schedule)
      .def_rw("stages", &tile::WarpSpecializedConfig::stages)
      .def_rw("full_barriers", &tile::WarpSpecializedConfig::full_barriers)
      .def_rw("empty_barriers", &tile::WarpSpecializedConfig::empty_barriers)
      .def_rw("empty_arrivals", &tile::WarpSpecializedConfig::empty_arrivals)
      .def_rw("stage_bytes", &tile::WarpSpecializedConfig::stage_bytes)
      .def_rw("cluster_m", &tile::WarpSpecializedConfig::cluster_m)
      .def_rw("cluster_n", &tile::WarpSpecializedConfig::cluster_n)
      .def_rw("producer_registers", &tile::WarpSpecializedConfig::producer_registers)
      .def_rw("consumer_registers", &tile::WarpSpecializedConfig::consumer_registers)
      .def_rw("helper_registers", &tile::WarpSpecializedConfig::helper_registers)
      .def_rw("dependent_launch", &tile::WarpSpecializedConfig::dependent_launch);
  nb::class_<tile::TileSchedulerOptions>(tile, "TileSchedulerOptions")
      .def(nb::init<>())
      .def_rw("tile_m", &tile::TileSchedulerOptions::tile_m)
      .def_rw("tile_n", &tile::TileSchedulerOptions::tile_n)
      .def_rw("tile_k", &tile::TileSchedulerOptions::tile_k)
      .def_rw("cluster_m", &tile::TileSchedulerOptions::cluster_m)
      .def_rw("cluster_n", &tile::TileSchedulerOptions::cluster_n)
      .def_rw("group_rows", &tile::TileSchedulerOptions::group_rows)
      .def_rw("splits", &tile::TileSchedulerOptions::splits)
      .def_rw("stream_k", &tile::TileSchedulerOptions::stream_k);
  nb::class_<tile::Tile>(tile, "Tile",
                         "A work item's tile: its corner, batch and unit (registers).")
      .def_ro("m0", &tile::Tile::m0)
      .def_ro("n0", &tile::Tile::n0)
      .def_ro("batch", &tile::Tile::batch)
      .def_ro("unit", &tile::Tile::unit);
  nb::class_<tile::WorkItem>(tile, "WorkItem", "A tile and the k-blocks [kb0, kb1) it covers.")
      .def_ro("tile", &tile::WorkItem::tile)
      .def_ro("kb0", &tile::WorkItem::kb0)
      .def_ro("kb1", &tile::WorkItem::kb1);
  nb::class_<tile::PipelineState>(tile, "PipelineState")
      .def("stage", &tile::PipelineState::stage, nb::rv_policy::copy)
      .def("phase", &tile::PipelineState::phase, nb::rv_policy::copy);
  nb::class_<tile::LoadStep>(tile, "LoadStep",
                             "The producer's step: k-block kb of item into slot state.stage().")
      .def_prop_ro("item", [](const tile::LoadStep& s) { return s.item; })
      .def_prop_ro("kb", [](const tile::LoadStep& s) { return s.kb; })
      .def_prop_ro(
          "state", [](const tile::LoadStep& s) { return &s.state; }, nb::rv_policy::reference)
      .def_prop_ro("full", [](const tile::LoadStep& s) { return s.full; });
  nb::class_<tile::ComputeStep>(tile, "ComputeStep",
                                "The consumers' step: compute on slot state.stage().")
      .def_prop_ro("item", [](const tile::ComputeStep& s) { return s.item; })
      .def_prop_ro("kb", [](const tile::ComputeStep& s) { return s.kb; })
      .def_prop_ro(
          "state", [](const tile::ComputeStep& s) { return &s.state; }, nb::rv_policy::reference)
      .def("accumulate", &tile::ComputeStep::accumulate, nb::rv_policy::copy,
           "Whether this k-block adds to the accumulators (not on an item's first).");
  nb::class_<tile::NamedBarrier>(tile, "NamedBarrier")
      .def("sync", &tile::NamedBarrier::sync)
      .def("arrive", &tile::NamedBarrier::arrive);
  nb::class_<tile::NamedBarrierSet>(tile, "NamedBarrierSet")
      .def("of", &tile::NamedBarrierSet::of, nb::arg("index"));
  nb::class_<tile::TileScheduler>(tile, "TileScheduler", "The GEMMs' work source.")
      .def("rank_m", &tile::TileScheduler::rank_m, nb::rv_policy::copy)
      .def("rank_n", &tile::TileScheduler::rank_n, nb::rv_policy::copy);
  nb::class_<tile::WarpSpecialized>(tile, "WarpSpecialized",
                                    "The template, as a design's hooks see it.")
      .def("smem_base", &tile::WarpSpecialized::smem_base, nb::rv_policy::copy)
      .def("tid", &tile::WarpSpecialized::tid, nb::rv_policy::copy)
      .def("warpgroup", &tile::WarpSpecialized::warpgroup, nb::rv_policy::copy)
      .def("leader", &tile::WarpSpecialized::leader, nb::rv_policy::copy)
      .def("row_multicast", &tile::WarpSpecialized::row_multicast, nb::rv_policy::copy)
      .def("column_multicast", &tile::WarpSpecialized::column_multicast, nb::rv_policy::copy)
      .def("warpgroup_barriers", &tile::WarpSpecialized::warpgroup_barriers, nb::arg("threads"))
      .def("named_barrier", &tile::WarpSpecialized::named_barrier, nb::arg("threads"))
      .def(
          "scheduler",
          [](const tile::WarpSpecialized& ws) {
            const auto* s = dynamic_cast<const tile::TileScheduler*>(&ws.source());
            if (!s) throw TileError("the design's work source is not a TileScheduler");
            return s;
          },
          nb::rv_policy::reference, "The tile scheduler (from work_source on).");
  tile.def(
      "build_warp_specialized",
      [](nb::object design) {
        PythonDesign d(std::move(design));
        tile::build_warp_specialized(d);
      },
      nb::arg("design"),
      "Builds the kernel of a design (a warpforge.tile.Design) into its Kernel.");

  nb::module_ warpgroup = tile.def_submodule("warpgroup", "Warpgroup MMA (wgmma) steps.");
  nb::class_<tile::warpgroup::KBlock>(warpgroup, "KBlock")
      .def(nb::init<>())
      .def_prop_rw(
          "ab", [](const tile::warpgroup::KBlock& b) { return std::string(ptx::name(b.ab)); },
          [](tile::warpgroup::KBlock& b, const std::string& t) {
            const std::optional<ptx::Type> type = ptx::parse_type(t);
            if (!type) throw DslError("'" + t + "' is not a PTX type (bf16, f16, e4m3, ...)");
            b.ab = *type;
          },
          "A's and B's element type, as PTX spells it ('bf16').")
      .def_rw("a_major", &tile::warpgroup::KBlock::a_major)
      .def_rw("b_major", &tile::warpgroup::KBlock::b_major)
      .def_rw("k_steps", &tile::warpgroup::KBlock::k_steps)
      .def_rw("a_step", &tile::warpgroup::KBlock::a_step)
      .def_rw("b_step", &tile::warpgroup::KBlock::b_step);
  warpgroup.def("smem_descriptor", &tile::warpgroup::smem_descriptor, nb::arg("kernel"),
                nb::arg("smem_address"), nb::arg("lbo_bytes"), nb::arg("sbo_bytes"),
                nb::arg("swizzle") = layout::SmemSwizzle::b128,
                "The wgmma matrix descriptor of a shared-memory tile (u64 register).");
  warpgroup.def(
      "mma_k_block",
      [](Kernel& k, const tile::warpgroup::KBlock& block, const dsl::Regs& acc, const Reg& desc_a,
         const Reg& desc_b, const dsl::Pred& accumulate) {
        tile::warpgroup::mma_k_block(k, block, acc, desc_a, desc_b, accumulate);
      },
      nb::arg("kernel"), nb::arg("block"), nb::arg("acc"), nb::arg("desc_a"), nb::arg("desc_b"),
      nb::arg("accumulate"), "One k-block of wgmma steps (a commit group).");
  tile.def(
      "swizzled_chunk",
      [](Kernel& k, const layout::Swizzle& swizzle, const Reg& chunk, const Reg& phase) {
        return tile::swizzled_chunk(k, swizzle, chunk, phase);
      },
      nb::arg("kernel"), nb::arg("swizzle"), nb::arg("chunk"), nb::arg("phase"),
      "The byte offset of 16-byte chunk `chunk` of a swizzled row whose phase (row % 8) is "
      "`phase` (u32 register).");
}

}  // namespace warpforge::python
