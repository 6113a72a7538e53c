# Seconds each of the slowest GoogleTest suites (CPU) and cases (GPU) takes, so that `ctest -j N`
# starts the long ones first (CTest runs the highest COST first; without
# this, a fresh build has no timing history and a long test that comes last
# in the list runs alone at the end). Included by CTest after the test
# programs' discovered lists (tests/CMakeLists.txt); a name no longer
# discovered is ignored. Figures: each suite's as its comment says; order
# matters, not precision. Tests added with add_test carry their COST where they are added.
set(warpforge_test_costs
  # CPU: one entry a suite (tests/gtest_suites.cmake); each program run as one
  # process on the shared 2-core machine at load 3-4, 2026-11-29 (session 9)
  test_difftest:Families/ReplayGpuTruth 31
  test_ptx:NvccCorpus/RoundTrip 21
  test_ops:Cases/AttentionBackwardSim 19
  test_ops:Cases/AttentionForwardSim 16
  test_ops:GemmAmaxSm90aSim 15
  test_dsl:AllTargets/WrapperFamily 10
  test_difftest:DifftestMufu 9.4
  test_layout:WgmmaAccumulator 7.8
  test_ops:GroupedGemmSim 7.5
  test_ops:Cases/AttentionDecodeSim 7.3
  test_cli:TargetCommand 6.6
  test_tile:TileScheduler 5.1
  test_ops:GemmAmaxSwappedSim 3.9
  test_amd:Targets/AmdTutorialCompiles 3.8
  test_amd:Targets/AmdMfmaCompiles 3.7
  test_ops:GemmAmaxKernel 3.7
  # GPU (label gpu; host references dominate the longest): an H200 at -j 1, 2026-11-29
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
