# The CLI's testable pieces (.npy, output file names) are compiled into the unit tests too, and the CLI
# itself is checked end to end against the sample models in testdata/.
target_sources(onemodel_tests PRIVATE
  ${PROJECT_SOURCE_DIR}/engine/cli/npy.cc)
target_include_directories(onemodel_tests PRIVATE ${PROJECT_SOURCE_DIR}/engine)
target_sources(onemodel_tests PRIVATE ${PROJECT_SOURCE_DIR}/engine/cli/util.cc)
