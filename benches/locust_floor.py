"""The floor Locust itself costs a turn on this machine (benches/locust.rs): a bare
FastHttpUser that POSTs the same tools/call bodies as the exported scenario's users (its
steps' Requests, written once with holes for each turn's QueryID, QueryTime, DataID, DialogID
and TurnIndex, over 2026-07-28 with the same headers and `_meta` envelope) and reads each
answer whole, with nothing else: no judging, no recording, no JSON read.

Copied by the bench into an exported project (it reads that project's scenarios.json, and
uses bkn_judge.py to build the bodies once and for a turn's new ids and time). Each user keeps one DialogID and counts its
TurnIndex on, as a user of the exported project does without --fresh. Run it with
--run-time. At the end the process says its CPU per turn on stderr: "floor: N turns, C s of CPU (U us a turn)".
"""

import json
import os
import resource
import sys
import uuid

from locust import FastHttpUser, constant, events, task

import bkn_judge as judge

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "scenarios.json"), encoding="utf-8") as _f:
    PROJECT = json.load(_f)

STATELESS = "2026-07-28"
SCENARIO = PROJECT["scenarios"][0]
INTERFACE = PROJECT["interfaces"][SCENARIO["interface"]]
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bkn-floor", "version": PROJECT["version"]},
}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": STATELESS,
    "Mcp-Method": "tools/call",
    "Mcp-Name": INTERFACE["tool"],
}
# Each step's body with holes for what a turn makes its own (a new QueryID, QueryTime and
# DataID: the server refuses a QueryID used before in the dialogue; its DialogID and
# TurnIndex), filled by `%` per turn, as the exported runner fills its Requests.
HOLES = ("QueryID", "QueryTime", "DialogID", "TurnIndex", "DataID")
MARK = "@@floor-%s@@"
TEMPLATES = []
for step in SCENARIO["steps"]:
    request = judge.fill_request(step["request"], INTERFACE["header"], MARK % "DialogID",
                                 MARK % "TurnIndex", dict(PROJECT["builtIn"]))
    request["QueryID"], request["QueryTime"] = MARK % "QueryID", MARK % "QueryTime"
    request["DataXMData"] = dict(request["DataXMData"], DataID=MARK % "DataID")
    text = judge.compact({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"_meta": META, "name": INTERFACE["tool"],
                                     "arguments": request}})
    text = text.replace("%", "%%").replace('"%s"' % (MARK % "TurnIndex"), "%(TurnIndex)d")
    for hole in HOLES:
        text = text.replace(MARK % hole, "%%(%s)s" % hole)
    # A step answered with a tool error (the shipped scenario's negative one) does not move
    # the dialogue on: the next Request keeps its TurnIndex, as the runner's does.
    moves_on = not any(e["type"] == "tool_error" for e in step["expect"])
    TEMPLATES.append((text, moves_on))

CPU = [0.0]
TURNS = [0]


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@events.test_start.add_listener
def _start(environment, **_):
    CPU[0] = cpu_seconds()
    TURNS[0] = 0


@events.test_stop.add_listener
def _stop(environment, **_):
    used = cpu_seconds() - CPU[0]
    sys.stderr.write("floor: %d turns, %.3f s of CPU (%.0f us a turn)\n"
                     % (TURNS[0], used, used / max(TURNS[0], 1) * 1e6))


class Floor(FastHttpUser):
    wait_time = constant(0)
    host = PROJECT["host"]

    def on_start(self):
        self.dialog = str(uuid.uuid4())
        self.turn = 0

    @task
    def go_through(self):
        for template, moves_on in TEMPLATES:
            body = (template % {"QueryID": judge.new_uuid(), "QueryTime": judge.now_rfc3339(),
                                "DialogID": self.dialog, "TurnIndex": self.turn,
                                "DataID": judge.new_uuid()}).encode("utf-8")
            with self.client.post("", data=body, headers=HEADERS, name="turn",
                                   catch_response=True) as r:
                if r.status_code != 200:
                    r.failure("HTTP %d" % r.status_code)
                elif moves_on and b'"isError":true' in r.content:
                    # Not judged, but a refused turn costs the server less: said, so that
                    # the bench never measures refusals for turns.
                    r.failure("a tool error")
            self.turn += moves_on
            TURNS[0] += 1
