#!/usr/bin/env python3
"""Prints the name and the last lines of output of every failed test in a CTest JUnit file.

tools/test.sh prints this in its summary: CI keeps the head and the tail of a long log, and a failure's
explanation in the middle of step 1's output would otherwise be lost.
  junit_failures.py FILE [LINES]
"""
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    path = sys.argv[1]
    keep = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"junit_failures: cannot read {path}: {e}")
        return 1
    for case in root.iter("testcase"):
        if case.get("status") != "fail":
            continue
        out = case.findtext("system-out") or ""
        lines = [line for line in out.splitlines() if line.strip()]
        print(f"--- failed: {case.get('name')} (last {min(keep, len(lines))} lines of its output)")
        for line in lines[-keep:]:
            print(f"    {line[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
