#!/usr/bin/env python3
"""Parse KUnit's KTAP output with the kernel's own parser (kunit.py parse)
and print "<suite>: N passed, N failed[, N skipped]".

usage: kunit-summary.py KUNIT_PY SUITE [COUNTS_FILE] < kernel-log
Exit status 1 if a test failed, the KTAP was malformed or no test ran.
"""
import json
import os
import subprocess
import sys
import tempfile


def count(group, counts, lines):
    for case in group.get("test_cases", []):
        status = case.get("status", "ERROR")
        key = {"PASS": "passed", "SKIP": "skipped"}.get(status, "failed")
        counts[key] += 1
        lines.append(f"# {group.get('name')}.{case.get('name')}: {status}")
    for sub in group.get("sub_groups", []):
        count(sub, counts, lines)


def main():
    kunit_py, suite = sys.argv[1], sys.argv[2]
    counts_file = sys.argv[3] if len(sys.argv) > 3 else None
    log = sys.stdin.read()
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as tmp:
        json_path = os.path.join(tmp, "results.json")
        proc = subprocess.run([sys.executable, kunit_py, "parse", f"--json={json_path}"],
                              input=log, text=True, capture_output=True)
        sys.stdout.write(proc.stdout)
        sys.stdout.write(proc.stderr)
        try:
            with open(json_path) as f:
                results = json.load(f)
        except (OSError, ValueError) as e:
            print(f"# {suite}: kunit.py produced no results ({e})")
            results = None
    lines = []
    if results is not None:
        count(results, counts, lines)
    print("\n".join(lines))
    if proc.returncode != 0 and counts["failed"] == 0:
        print(f"# {suite}: kunit.py parse exited {proc.returncode}")
        counts["failed"] += 1
    if sum(counts.values()) == 0:
        print(f"# {suite}: no KUnit test ran")
        counts["failed"] += 1
    line = f"{suite}: {counts['passed']} passed, {counts['failed']} failed"
    if counts["skipped"]:
        line += f", {counts['skipped']} skipped"
    print(line)
    if counts_file:
        with open(counts_file, "w") as f:
            f.write(f"{counts['passed']} {counts['failed']} {counts['skipped']}\n")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
