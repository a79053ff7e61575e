# The C++ kernel tests built for WebAssembly (tests/wasm/CMakeLists.txt, in the wasm build tree) and run by
# Node from this native tree; skipped (77) when that program has not been built.
set(ONEMODEL_WASM_BUILD_DIR ${PROJECT_SOURCE_DIR}/build/wasm CACHE PATH
    "Build tree of the wasm preset, where wasm_kernel_tests.cjs is looked for")
find_program(ONEMODEL_NODE node)
add_test(NAME wasm_kernel_tests
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/wasm/run_kernel_tests.sh "${ONEMODEL_NODE}"
                 ${ONEMODEL_WASM_BUILD_DIR}/wasm_kernel_tests.cjs)
set_tests_properties(wasm_kernel_tests PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
