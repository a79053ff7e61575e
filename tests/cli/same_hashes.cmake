# Exact mode promises the same bits whatever the thread count: run the model with --threads 1 and 2 and
# compare the printed output hashes.   cmake -DCLI=path -DMODEL=path -P same_hashes.cmake
foreach(n 1 2)
  execute_process(COMMAND ${CLI} run ${MODEL} --mode exact --threads ${n}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--threads ${n} failed (${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCHALL "sha256: [0-9a-f]+" hashes_${n} "${out}")
  if(hashes_${n} STREQUAL "")
    message(FATAL_ERROR "--threads ${n} printed no hash:\n${out}")
  endif()
endforeach()
if(NOT hashes_1 STREQUAL hashes_2)
  message(FATAL_ERROR "hashes differ:\n1 thread:  ${hashes_1}\n2 threads: ${hashes_2}")
endif()
message(STATUS "identical: ${hashes_1}")
