# Seconds each of the slowest GoogleTest cases takes, so that `ctest -j N`
# starts the long ones first (CTest runs the highest COST first; without
# this, a fresh build has no timing history and a long test that comes last
# in the list runs alone at the end). Included by CTest after the test
# programs' discovered lists (tests/CMakeLists.txt); a name no longer
# discovered is ignored. Figures: each suite's as its comment says; order
# matters, not precision. Tests added with add_test carry their COST where they are added.
set(warpforge_test_costs
  # CPU (simulator; the *Ptxas checks and the corpus round trips read their
  # records and take under 0.5 s): ctest -j 2 on the
  # shared 2-core machine at load 4-5, 2026-11-29 (about twice a quiet run)
  WgmmaAccumulator.MatchesTheClosedFormForEveryN 12
  GemmAmaxSm90aSim.ClusterPairsShareTheConversionOfB 10
  GemmAmaxSm90aSim.WideTilesOnThreeConvertingWarpgroups 8
  TileScheduler.HostOrderCoversEveryTileAndEveryKBlockOnce 7.3
  AttentionForwardSimPersistent.TwoCtasWalkEveryItem 5.7
  GemmAmaxKernel.Mxfp8InEveryMajornessAndCDtype 5.1
  CrossEntropySim.RowsSpanAWarpACtaAClusterOrPasses 4.7
  GemmOnFakeH100.Sm90aHeuristicFollowsTheShape 4.7
  GemmAmaxPrepassSim.EveryFormatIntoEveryCDtype 4.6
  Cases/AttentionDecodeSim.MatchesTheFp64ReferenceWithinItsBound/150_splits 4.2
  GemmAmaxSwappedSim.SplitsLongerThanTheRing 4.2
  GemmAmaxSm100aSim.MatchesTheReferenceForEachFormatAndCDtype 4.1
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
