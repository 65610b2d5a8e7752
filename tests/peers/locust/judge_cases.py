"""Runs the Locust workers' judge (bkn_judge.py) on the cases tests/locust.rs gives it on
standard input, and prints what it says, for the test to set beside the Rust judge's verdicts.

    python3 judge_cases.py FOLDER_OF_BKN_JUDGE < cases.json

A case is {"what": "judge", "expect": [...], "turn": {...}, "response": ...},
{"what": "fill", "given": {...}, "header": ..., "dialogID": ..., "turnIndex": N, "defaults": {...}}
or {"what": "captures", "request": {...}, "captured": {...}}.
"""

import json
import sys

sys.path.insert(0, sys.argv[1])
import bkn_judge as judge  # noqa: E402

out = []
for case in json.load(sys.stdin):
    what = case["what"]
    if what == "judge":
        t = case["turn"]
        turn = judge.Turn(t["reply"], t["text"], t["latencyMs"], t["findings"])
        out.append(judge.judge(judge.read_expectations(case["expect"]), turn, case.get("response")))
    elif what == "fill":
        out.append(judge.fill_request(case["given"], case["header"], case["dialogID"],
                                      case["turnIndex"], case["defaults"]))
    elif what == "captures":
        out.append(judge.fill_captures(case["request"], case["captured"]))
    else:
        raise SystemExit("unknown case %r" % what)
print(json.dumps(out, ensure_ascii=False))
