// Decoding, at a kernel's first launch: refusals name the kernel, the
// instruction and its line in ptx::emit(module); launch(): arguments are
// checked against the parameters; device properties.
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

// The refusal of the module's last kernel, which the simulator decodes at
// its first launch, before it checks the arguments (none are given).
std::string load_error(SimBackend& sim, const ptx::Module& m) {
  try {
    auto loaded = sim.load(m);
    sim.launch(*loaded, std::get<ptx::Function>(m.items.back()).name, {.grid = {1}, .block = {32}},
               {}, nullptr);
  } catch (const SimError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected the kernel to be refused";
  return "";
}

TEST_F(SimTest, UnsupportedInstructionIsRefusedAtLaunchWithItsLine) {
  KernelSource k("uses_pmevent");
  k.regs(Type::b32, "%r", 4).shared(Type::b8, "pad", 16);
  k.code("mov.u32 %r1, 1;\nadd.u32 %r2, %r1, %r1;\npmevent 1;\nret;");
  const ptx::Module m = k.module();
  const std::string msg = load_error(sim, m);
  EXPECT_NE(msg.find("kernel 'uses_pmevent', PTX line " + std::to_string(line_of(m, "pmevent 1")) +
                     " (pmevent 1): instruction 'pmevent' is not simulated"),
            std::string::npos)
      << msg << "\n"
      << ptx::emit(m);
}

TEST_F(SimTest, LineNumbersCountNestedBlocksAndEarlierItems) {
  KernelSource k("nested_block");
  k.module_variable(
      ptx::Variable{.space = ptx::Space::global, .type = Type::u32, .name = "g", .dims = {4}});
  k.param(Type::u64, "a").param(Type::u32, "b").regs(Type::b32, "%r", 2);
  ptx::Module m = k.module();
  auto& body = std::get<ptx::Function>(m.items.back()).body->body;
  ptx::Instruction bad = ptx::Instruction::parse_opcode("add.u16x2");
  bad.operands = {ptx::Operand::reg("%r0"), ptx::Operand::reg("%r1"), ptx::Operand::reg("%r1")};
  ptx::Block inner;
  inner.body.push_back(parse_instruction("mov.u32 %r0, 1"));
  inner.body.push_back(bad);
  body.push_back(inner);
  const std::string msg = load_error(sim, m);
  EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(m, "add.u16x2")) +
                     " (add.u16x2 %r0, %r1, %r1): modifier .u16x2"),
            std::string::npos)
      << msg << "\n"
      << ptx::emit(m);
}

TEST_F(SimTest, FencesAndHintsAreAcceptedAndChangeNothing) {
  KernelSource k("hints");
  k.param(Type::u64, "out").regs(Type::b32, "%r", 2).regs(Type::b64, "%rd", 2);
  k.code(R"(
    mov.u32 %r1, 5;
    membar.gl;
    fence.acq_rel.gpu;
    fence.proxy.async.shared::cta;
    fence.proxy.async;
    fence.mbarrier_init.release.cluster;
    nanosleep.u32 100;
    setmaxnreg.inc.sync.aligned.u32 240;
    griddepcontrol.launch_dependents;
    griddepcontrol.wait;
    ld.param.u64 %rd1, [out];
    prefetch.global.L2 [%rd1];
    st.global.cs.u32 [%rd1], %r1;
  )");
  auto out = zeros<std::uint32_t>(1);
  run(k, {1, 1, 1}, {128, 1, 1}, {arg_u64(out)});  // setmaxnreg takes a whole warpgroup
  EXPECT_EQ(download<std::uint32_t>(out, 1)[0], 5u);
}

TEST_F(SimTest, GriddepcontrolWithoutOneActionIsRefused) {
  for (const char* line : {"griddepcontrol;", "griddepcontrol.wait.launch_dependents;"}) {
    KernelSource k("griddepcontrol_bad");
    k.code(line);
    const std::string msg = load_error(sim, k.module());
    EXPECT_NE(msg.find("griddepcontrol takes one action: .wait or .launch_dependents"), std::string::npos) << msg;
  }
}

TEST_F(SimTest, UndeclaredRegisterIsRefused) {
  KernelSource k("undeclared");
  k.regs(Type::b32, "%r", 2).code("mov.u32 %r7, 1;");
  const std::string msg = load_error(sim, k.module());
  EXPECT_NE(msg.find("register %r7 is not declared"), std::string::npos) << msg;
}

TEST_F(SimTest, MmaShapeTheSimulatorLacksIsRefused) {
  KernelSource k("mma_tf32");
  k.regs(Type::b32, "%r", 12);
  k.code(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, "
      "{%r8,%r9}, {%r0,%r1,%r2,%r3};");
  const std::string msg = load_error(sim, k.module());
  EXPECT_NE(msg.find("mma.sync combinations simulated"), std::string::npos) << msg;
}

TEST_F(SimTest, LaunchChecksArgumentCountAndSizes) {
  KernelSource k("two_params");
  k.param(Type::u64, "p").param(Type::u32, "n").code("ret;");
  auto loaded = sim.load(k.module());
  const runtime::LaunchConfig cfg{.grid = {1, 1, 1}, .block = {32, 1, 1}};
  try {
    sim.launch(*loaded, "two_params", cfg, {arg_u64(0), arg_u64(1)}, nullptr);
    ADD_FAILURE() << "expected a size mismatch";
  } catch (const SimError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 1 ('n') has 8 bytes; the parameter takes 4"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(sim.launch(*loaded, "two_params", cfg, {arg_u64(0)}, nullptr), SimError);
  EXPECT_THROW(sim.launch(*loaded, "missing", cfg, {}, nullptr), SimError);
  EXPECT_THROW(sim.launch(*loaded, "two_params", {.grid = {1, 1, 1}, .block = {2048, 1, 1}},
                          {arg_u64(0), arg_u32(0)}, nullptr),
               SimError);
}

TEST_F(SimTest, PropertiesDescribeAnH100LikeSimulator) {
  const auto& p = sim.properties();
  EXPECT_EQ(p.name, "warpforge simulator");
  EXPECT_EQ(p.compute_capability_major, 9);
  EXPECT_EQ(p.compute_capability_minor, 0);
  EXPECT_EQ(p.shared_bytes_per_block, 48u * 1024);
  EXPECT_EQ(p.shared_bytes_per_block_optin, 227u * 1024);
  EXPECT_GE(p.sm_count, 1);
  EXPECT_TRUE(sim.is_simulator());
  EXPECT_EQ(sim.target(), ptx::Target::sm_90a);
  auto backend = make_backend();
  EXPECT_TRUE(backend->is_simulator());
}

TEST_F(SimTest, CopiesAndFillAreBoundsChecked) {
  auto p = sim.allocate(64);
  sim.fill(p, 0xAB, 64, nullptr);
  auto h = download<std::uint8_t>(p, 64);
  EXPECT_EQ(h[63], 0xAB);
  std::vector<std::uint8_t> big(65);
  EXPECT_THROW(sim.copy_to_device(p, big.data(), 65, nullptr), SimError);
  auto q = sim.allocate(64);
  sim.copy_device_to_device(q, p, 64, nullptr);
  EXPECT_EQ(download<std::uint8_t>(q, 64), h);
  sim.free(p);
  EXPECT_THROW(sim.copy_to_host(h.data(), p, 4, nullptr), SimError);
  EXPECT_THROW(sim.free(p), SimError);
}

}  // namespace
}  // namespace warpforge::sim::testing
