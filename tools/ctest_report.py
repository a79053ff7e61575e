#!/usr/bin/env python3
"""Counts the C++ tests of a CTest run and prints what failed.

  ctest_report.py JUNIT GTEST_XML_DIR FAILURES_FILE [LINES]

JUNIT is CTest's --output-junit file. A CTest entry named onemodel_tests_shard_N runs a shard of the GoogleTest
binary (tests/CMakeLists.txt, ONEMODEL_TEST_SHARDS) and counts as the tests in its GoogleTest report
GTEST_XML_DIR/onemodel_tests_shard_N.xml, one by one. A shard that failed with no failed test in its report (a
sanitizer's report at exit, a crash before the report was written) counts one failure more. Every other entry
counts as one test.

Prints one line `C++: P passed, F failed, S skipped` and writes, for each failure, its name and the last LINES
(25) lines of its output to FAILURES_FILE: tools/test.sh prints that file in its summary, since CI keeps only the
head and the tail of a long log.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

SHARD = re.compile(r"^onemodel_tests_shard_\d+$")


def tail(text: str, keep: int) -> list:
    lines = [line[:300] for line in (text or "").splitlines() if line.strip()]
    return lines[-keep:]


def count_shard(path: str, keep: int, report: list):
    """(passed, failed, skipped) of one GoogleTest XML report, or None when it is missing or unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        failures = case.findall("failure")
        if failures:
            failed += 1
            report.append(f"--- failed: {name}")
            for failure in failures:
                report.extend(f"    {line}" for line in tail(failure.get("message"), keep))
        elif case.get("result") == "skipped" or case.get("status") == "notrun":
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main() -> int:
    junit, gtest_dir, failures_file = sys.argv[1:4]
    keep = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    report = []
    passed = failed = skipped = 0
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        root = None
        failed += 1
        report.append(f"--- ctest_report: cannot read {junit}: {e}")
    for case in root.iter("testcase") if root is not None else []:
        name, status = case.get("name"), case.get("status")
        output = tail(case.findtext("system-out"), keep)
        if SHARD.match(name):
            counts = count_shard(os.path.join(gtest_dir, name + ".xml"), keep, report)
            if counts is None:
                failed += 1
                report.append(f"--- failed: {name} wrote no GoogleTest report (last lines of its output)")
                report.extend(f"    {line}" for line in output)
                continue
            passed, failed, skipped = passed + counts[0], failed + counts[1], skipped + counts[2]
            if status == "fail" and counts[1] == 0:
                failed += 1
                report.append(f"--- failed: {name} exited with an error after its tests passed (last lines)")
                report.extend(f"    {line}" for line in output)
        elif status == "fail":
            failed += 1
            report.append(f"--- failed: {name} (last {len(output)} lines of its output)")
            report.extend(f"    {line}" for line in output)
        elif status in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1
    with open(failures_file, "w") as f:
        f.write("".join(line + "\n" for line in report))
    print(f"C++: {passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
