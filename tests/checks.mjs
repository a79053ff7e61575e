// The line format of the harnesses that tools/test.sh tallies (browser, bundlers, clients, demo): one
// `ok   NAME: DETAIL` or `FAIL NAME: DETAIL` line per check, then `LABEL: N passed, M failed`.
export function checks(label) {
  let passed = 0;
  let failed = 0;
  return {
    check(name, ok, detail) {
      if (ok) passed++;
      else failed++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
    },
    /** Prints the summary line; true when every check passed (and there was one). */
    summary() {
      console.log(`${label}: ${passed} passed, ${failed} failed`);
      return failed === 0 && passed > 0;
    },
  };
}
