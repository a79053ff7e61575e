# Installs this build into a scratch prefix and builds tests/consumer against it with find_package(OneModel).
add_test(NAME cmake_package_consumer
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DCXX=${CMAKE_CXX_COMPILER}
    -P ${CMAKE_CURRENT_LIST_DIR}/consumer_test.cmake)
set_tests_properties(cmake_package_consumer PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "0\\.2323, 0\\.2813, 0\\.4864")
