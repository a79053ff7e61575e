# The CLI's testable pieces (.npy, output file names, random inputs) are compiled into the unit tests,
# and the tool itself is checked end to end against the sample models in testdata/.
target_sources(onemodel_tests PRIVATE
  ${PROJECT_SOURCE_DIR}/engine/cli/npy.cc
  ${PROJECT_SOURCE_DIR}/engine/cli/util.cc)
target_include_directories(onemodel_tests PRIVATE ${PROJECT_SOURCE_DIR}/engine)

if(TARGET onemodel_cli)
  set(cli $<TARGET_FILE:onemodel_cli>)
  set(td ${PROJECT_SOURCE_DIR}/testdata)
  set(expect ${PROJECT_SOURCE_DIR}/tests/cli/expect.cmake)

  add_test(NAME cli_version COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|--version" -DEXPECT_RC=0
           "-DSTDOUT_RE=^onemodel ${PROJECT_VERSION}" -P ${expect})
  add_test(NAME cli_help COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|help" -DEXPECT_RC=0 "-DSTDOUT_RE=onemodel run MODEL"
           -P ${expect})
  add_test(NAME cli_usage_error COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|run|--mode|slow" -DEXPECT_RC=2
           "-DSTDERR_RE=--mode expects fast or exact.*usage:" -P ${expect})
  add_test(NAME cli_no_args COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}" -DEXPECT_RC=2 "-DSTDERR_RE=usage:" -P ${expect})

  add_test(NAME cli_info_classifier COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|info|${td}/classifier.onnx" -DEXPECT_RC=0
           "-DSTDOUT_RE=inputs:\n  x: F32 \\[batch,4\\]\noutputs:\n  probs: F32 \\[batch,3\\].*Gemm \\(opset 17\\) +x2.*missing operators: none\nexact mode: available"
           -P ${expect})
  # Control flow: If's factory needs a session, so info judges it by its bodies (issue 13).
  add_test(NAME cli_info_control_flow COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|info|${td}/ctrlflow/lstm_after_if.onnx"
           -DEXPECT_RC=0 "-DSTDOUT_RE=If \\(opset 17\\) +x1\n.*LSTM \\(opset 17\\) +x1\n.*missing operators: none\nexact mode: available"
           -P ${expect})
  # Bodies inside bodies are counted too: Silero VAD legacy's shape, an LSTM in an If in an If.
  add_test(NAME cli_info_nested_control_flow COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|info|${td}/ctrlflow/lstm_in_nested_if.onnx" -DEXPECT_RC=0
           "-DSTDOUT_RE=operators \\(3 op types, 7 nodes\\):\n  If \\(opset 17\\) +x2\n  LSTM \\(opset 17\\) +x3\n  Neg \\(opset 17\\) +x2\nmissing operators: none\nexact mode: available"
           -P ${expect})
  add_test(NAME cli_info_unsupported COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|info|${td}/unsupported.onnx" -DEXPECT_RC=0
           "-DSTDOUT_RE=missing operators: DeformConv \\(opset 22\\), ImageDecoder \\(opset 22\\)" -P ${expect})

  # Expected probabilities 0.2323 0.2813 0.4864 (to 4 decimals): each value must round to them.
  add_test(NAME cli_run_classifier COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|run|${td}/classifier.onnx|--input|x=${td}/classifier_x.npy" -DEXPECT_RC=0
           "-DSTDOUT_RE=output probs: F32 \\[1,3\\]\n  values: 0\\.232(2[5-9]|3[0-4])[0-9]* 0\\.281(2[5-9]|3[0-4])[0-9]* 0\\.486(3[5-9]|4[0-4])[0-9]*\n  sha256: [0-9a-f]+"
           -P ${expect})
  add_test(NAME cli_run_unsupported COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|run|${td}/unsupported.onnx" -DEXPECT_RC=1
           "-DSTDERR_RE=^error: UnsupportedOperator: .*DeformConv \\(opset 22\\).*ImageDecoder \\(opset 22\\)"
           -P ${expect})
  # cookbook missing-operators: wave.onnx (Cos) runs in fast mode, exact mode names Cos.
  add_test(NAME cli_run_wave_fast COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|run|${td}/wave.onnx" -DEXPECT_RC=0
           "-DSTDOUT_RE=output y: F32 \\[4\\]" -P ${expect})
  add_test(NAME cli_run_wave_exact COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|run|${td}/wave.onnx|--mode|exact"
           -DEXPECT_RC=1 "-DSTDERR_RE=^error: ExactModeUnavailable: .*no exact kernel exists for Cos" -P ${expect})
  add_test(NAME cli_run_bad_npy COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|run|${td}/classifier.onnx|--input|x=${td}/classifier.onnx" -DEXPECT_RC=1
           "-DSTDERR_RE=^error: Malformed: .*magic.*classifier.onnx" -P ${expect})
  add_test(NAME cli_run_unknown_input COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|run|${td}/classifier.onnx|--input|nope=${td}/classifier_x.npy" -DEXPECT_RC=1
           "-DSTDERR_RE=^error: InvalidInput: the model has no input 'nope'" -P ${expect})
  add_test(NAME cli_run_missing_model COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|run|${td}/no_such_model.onnx"
           -DEXPECT_RC=1 "-DSTDERR_RE=^error: Io: " -P ${expect})

  add_test(NAME cli_save_outputs COMMAND ${CMAKE_COMMAND} -DCLI=${cli} -DMODEL=${td}/classifier.onnx
           -DDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_saved -DEXPECT_FILES=probs.npy
           -P ${PROJECT_SOURCE_DIR}/tests/cli/saved_outputs.cmake)
  # Output names outside [A-Za-z0-9._-] are sanitized ("a/b:c" -> a_b_c.npy); the second output, literally
  # "a_b_c", then gets a suffix. cli_names.onnx is two Identity nodes, made with onnx.helper (onnx 1.12).
  add_test(NAME cli_save_outputs_sanitized COMMAND ${CMAKE_COMMAND} -DCLI=${cli} -DMODEL=${td}/cli_names.onnx
           -DINPUT=x=${td}/cli_names_x.npy -DSAME_AS=${td}/cli_names_x.npy
           -DDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_saved_names "-DEXPECT_FILES=a_b_c.npy|a_b_c_2.npy"
           -P ${PROJECT_SOURCE_DIR}/tests/cli/saved_outputs.cmake)
  # The hash printed for [1.5, -2] F32 [2], computed independently with /usr/bin/python3:
  #   hashlib.sha256(struct.pack('<qqq', 1, 1, 2) + np.array([1.5, -2], '<f4').tobytes())
  add_test(NAME cli_run_hash COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|run|${td}/cli_names.onnx|--input|x=${td}/cli_names_x.npy" -DEXPECT_RC=0
           "-DSTDOUT_RE=output a/b:c: F32 \\[2\\]\n  values: 1\\.5 -2\n  sha256: 97f613619f2dfb738bafd129dc0cc902e4f4f7a0263f22aaa7c2c2799fe6b6c7"
           -P ${expect})
  add_test(NAME cli_exact_threads_same_hashes COMMAND ${CMAKE_COMMAND} -DCLI=${cli} -DMODEL=${td}/classifier.onnx
           -P ${PROJECT_SOURCE_DIR}/tests/cli/same_hashes.cmake)
  # The OneModel format (docs/format.md): convert, then the same output bits; info reads it; compact weight
  # storage is refused naming the option.
  add_test(NAME cli_convert_same_hashes COMMAND ${CMAKE_COMMAND} -DCLI=${cli} -DMODEL=${td}/wide.onnx
           -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_convert_wide.onemodel -P ${PROJECT_SOURCE_DIR}/tests/cli/convert_same_hashes.cmake)
  # Compact weights (docs/fp16.md section 6): wide.onnx's two MatMul weights stored in 16 bits, then widened
  # back at load (widen-stored-weights); `run --weight-storage` compacts them in the session.
  add_test(NAME cli_convert_weight_storage COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|convert|${td}/wide.onnx|${CMAKE_CURRENT_BINARY_DIR}/cli_convert_half.onemodel|--weight-storage|float16"
           -DEXPECT_RC=0 "-DSTDOUT_RE=wrote .*cli_convert_half.onemodel \\(3[0-9][0-9][0-9][0-9][0-9] bytes\\) from .*wide.onnx \\(6[0-9][0-9][0-9][0-9][0-9] bytes\\)"
           -P ${expect})
  add_test(NAME cli_convert_weight_storage_refused COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|convert|${td}/wide.onnx|${CMAKE_CURRENT_BINARY_DIR}/cli_convert_f8.onemodel|--weight-storage|float8"
           -DEXPECT_RC=2 "-DSTDERR_RE=--weight-storage must be float32, float16 or bfloat16, not 'float8'" -P ${expect})
  add_test(NAME cli_run_weight_storage COMMAND ${CMAKE_COMMAND}
           "-DCMD=${cli}|run|${td}/wide.onnx|--weight-storage|bfloat16" -DEXPECT_RC=0
           "-DSTDOUT_RE=graph passes: .*compact-weights 2" -P ${expect})
  add_test(NAME cli_convert_usage COMMAND ${CMAKE_COMMAND} "-DCMD=${cli}|convert|${td}/classifier.onnx" -DEXPECT_RC=2
           "-DSTDERR_RE=convert takes an input MODEL and an OUTPUT path" -P ${expect})
endif()
