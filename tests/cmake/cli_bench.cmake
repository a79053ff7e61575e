# `onemodel bench` (bench/run.mjs's native side): the one-line result format on tiny models with short
# repetitions, and its errors. The bar runner itself (bench/) never runs under CTest.
if(TARGET onemodel_cli)
  set(cli $<TARGET_FILE:onemodel_cli>)
  set(td ${PROJECT_SOURCE_DIR}/testdata)
  set(expect ${PROJECT_SOURCE_DIR}/tests/cli/expect.cmake)
  set(line ${PROJECT_SOURCE_DIR}/tests/cli/bench_line.cmake)

  # classifier.onnx has x: [batch,4]; --dim batch=3 gives random inputs of that size.
  add_test(NAME cli_bench_line COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim|batch=3|--seconds|0.05" -P ${line})
  add_test(NAME cli_bench_line_exact_threads COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim=batch=2|--mode|exact|--threads|2|--seconds=0.02|--reps|5"
           -P ${line})
  # cli_names.onnx is two Identity nodes: the saved output must be the given input, byte for byte.
  add_test(NAME cli_bench_save_outputs COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/cli_names.onnx|--input|x=${td}/cli_names_x.npy|--seconds|0.02"
           -DDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_bench_saved -DOUTPUT=a_b_c.npy -DSAME_AS=${td}/cli_names_x.npy
           -P ${line})

  # --profile: the result line first (what bench/run.mjs parses), then the two tables; classifier.onnx's
  # nodes are two Gemm (unnamed: shown with their outputs), a Relu and a Softmax.
  add_test(NAME cli_bench_profile COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim|batch=2|--seconds|0.02|--profile" -DEXPECT_RC=0
           "-DSTDOUT_RE=^load_ms=[0-9.]+ first_ms=[0-9.]+ median_ms=[0-9.]+ min_ms=[0-9.]+ max_ms=[0-9.]+\n\nprofile: [0-9]+ runs, [0-9.]+ ms per run .*by operator type.*Gemm.*Softmax.*by node \\(self time\\).*\\(Gemm -> [^)]+\\)"
           -P ${expect})
  add_test(NAME cli_bench_profile_top COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim|batch=2|--seconds|0.02|--profile-top|1" -DEXPECT_RC=0
           "-DSTDOUT_RE=by node.*more nodes" -P ${expect})
  add_test(NAME cli_bench_profile_top_bad COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim|batch=2|--profile-top|x" -DEXPECT_RC=2
           "-DSTDERR_RE=--profile-top" -P ${expect})

  add_test(NAME cli_bench_missing_dim COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--seconds|0.05" -DEXPECT_RC=1
           "-DSTDERR_RE=^error: InvalidArgument: symbolic dims without a value: batch \\(give them with --dim batch=VALUE\\)"
           -P ${expect})
  add_test(NAME cli_bench_unused_dim COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim|batch=2|--dim|seq=4|--seconds|0.05" -DEXPECT_RC=2
           "-DSTDERR_RE=--dim seq names no symbolic dim of a random input.*usage:" -P ${expect})
  add_test(NAME cli_bench_bad_seconds COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|bench|${td}/classifier.onnx|--dim|batch=1|--seconds|0" -DEXPECT_RC=2
           "-DSTDERR_RE=--seconds expects a number of seconds above 0" -P ${expect})
  add_test(NAME cli_bench_unsupported COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|bench|${td}/unsupported.onnx" -DEXPECT_RC=1
           "-DSTDERR_RE=^error: UnsupportedOperator: .*DeformConv" -P ${expect})
endif()
