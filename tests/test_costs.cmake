# Seconds each of the slowest GoogleTest cases takes, so that `ctest -j N`
# starts the long ones first (CTest runs the highest COST first; without
# this, a fresh build has no timing history and a long test that comes last
# in the list runs alone at the end). Included by CTest after the test
# programs' discovered lists (tests/CMakeLists.txt); a name no longer
# discovered is ignored. Figures: the CPU suite on the 2-core machine and
# the GPU suite on an H200 at -j 1 (2026-11-29); order matters, not
# precision. Tests added with add_test carry their COST where they are added.
set(warpforge_test_costs
  # CPU (simulator, ptxas)
  GemmAmaxSm90aSim.ClusterPairsShareTheConversionOfB 19
  GemmAmaxSm90aSim.WideTilesOnThreeConvertingWarpgroups 10
  AttentionPtxas.Sm80KernelsAssemble 7
  GemmAmaxPtxas.Sm90aKernelAssemblesWithoutSpills 5
  GemmPtxas.EverySpecialisationAssemblesWithoutSpills 3.5
  GemmSm90aPtxas.EveryScheduleAssemblesWithoutSpills 2.3
  GroupedGemmPtxas.Sm80KernelAssemblesForSm80AndSm90a 2.2
  GemmAmaxPtxas.SkinnyKernelAssemblesWithoutSpills 2.2
  GemmAmaxPtxas.SwappedKernelAssemblesWithoutSpills 2
  RowOpsPtxas.CrossEntropyAssemblesWithoutSpills 1.9
  # GPU (label gpu; host references dominate the longest)
  GroupedGemmGpu.DecodeAtPublishedExpertShapes 93
  GemmAmaxExactnessGpu.DefaultKernels 47
  GroupedGemmGpu.Bf16DecodeAtGptOssShapes 45
  GemmAmaxExactnessGpu.PrepassPath 41
  AttentionGpu.DeviceSizedShapes 34
  GemmAmaxExactnessGpu.SplitsAddUpEitherWay 32
  GemmSm90aGpu.LargeRaggedShapeWithClusters 32
  GemmAmaxSm90aGpu.ClusterPairsInEveryFormat 31
  NormGpu.TheBenchmarksShapes 31
  SwigluGpu.TheBenchmarksShapes 24
  NormQuantizeGpu.TheBenchmarksShapes 18
  GemmAmaxExactnessGpu.SwappedKernel 17
  AttentionGpu.DeterministicBackwardGivesTheSameBits 14
  GemmAmaxExactnessGpu.SkinnyKernel 11
  NormGpu.TheSimulatorsCases 7.5
  SoftmaxGpu.TheBenchmarksShapesAndTheLongestRows 7
  CrossEntropyGpu.TheBenchmarksVocabularies 6.5
  GemmAmaxSm90aGpu.DecodeShapeSplitsK 5.4
  CrossEntropyGpu.TheSimulatorsCases 5
  NormQuantizeGpu.TheSimulatorsCases 4.5
  SoftmaxGpu.TheSimulatorsCases 4.5)
while(warpforge_test_costs)
  list(POP_FRONT warpforge_test_costs name cost)
  set_tests_properties(${name} PROPERTIES COST ${cost})
endwhile()
