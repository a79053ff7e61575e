# Runs one command and checks its exit status and output (PASS_REGULAR_EXPRESSION alone ignores the status).
#   cmake -DCMD=prog|arg|arg -DEXPECT_RC=1 [-DSTDOUT_RE=regex] [-DSTDERR_RE=regex] -P expect.cmake
# Arguments are separated by '|' because ';' does not survive add_test.
string(REPLACE "|" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED STDOUT_RE AND NOT out MATCHES "${STDOUT_RE}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_RE}':\n${out}")
endif()
if(DEFINED STDERR_RE AND NOT err MATCHES "${STDERR_RE}")
  message(FATAL_ERROR "stderr does not match '${STDERR_RE}':\n${err}")
endif()
