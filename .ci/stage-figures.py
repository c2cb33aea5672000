"""One stage's figures from a nextest JUnit report, for `.ci/test`'s table.

Usage: stage-figures.py JUNIT LIST IGNORED, where LIST is `cargo nextest list
--message-format oneline` of the stage's filter ("binary-id test-name" a line) and IGNORED
the same list of its ignored tests (`--run-ignored only`). Prints "seconds|count|failures":
the seconds from the stage's first test's start to its last one's end, "N run: P passed, F
failed, I ignored" and the number failed. A test of the list that the report lacks (it did
not run) counts as failed.
"""

import sys
import xml.etree.ElementTree as ET
from datetime import datetime


def tests(listing: str) -> set:
    found = set()
    with open(listing, encoding="utf-8") as f:
        for line in f:
            binary, _, name = line.strip().partition(" ")
            if name:
                found.add((binary, name))
    return found


def main(junit: str, listing: str, ignored: str) -> None:
    wanted = tests(listing)
    seen = {}
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        root = None
    if root is not None:
        for case in root.iter("testcase"):
            key = (case.get("classname"), case.get("name"))
            if key in wanted:
                seen[key] = case
    first = last = None
    passed = failed = 0
    for case in seen.values():
        start = datetime.fromisoformat(case.get("timestamp"))
        end = start.timestamp() + float(case.get("time", "0"))
        first = start.timestamp() if first is None else min(first, start.timestamp())
        last = end if last is None else max(last, end)
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        else:
            passed += 1
    failed += len(wanted) - len(seen)
    seconds = round(last - first) if seen else 0
    run = passed + failed
    count = f"{run} run: {passed} passed, {failed} failed, {len(tests(ignored))} ignored"
    print(f"{seconds}|{count}|{failed}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
