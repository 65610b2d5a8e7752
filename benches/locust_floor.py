"""The floor Locust itself costs a turn on this machine (benches/locust.rs): a bare
FastHttpUser that POSTs the same tools/call bodies as the exported scenario's users (its
steps' Requests, filled once, over 2026-07-28 with the same headers and `_meta` envelope) and
reads each answer whole, with nothing else: no judging, no recording, no JSON read.

Copied by the bench into an exported project (it reads that project's scenarios.json and
bkn_judge.py, only to build the bodies once). Each user keeps one DialogID and counts its
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
# Each step's body with two holes, the DialogID and the TurnIndex, filled by `%` per turn.
DIALOG, TURN = "@@dialog@@", 1234567890123
TEMPLATES = []
for step in SCENARIO["steps"]:
    request = judge.fill_request(step["request"], INTERFACE["header"], DIALOG, TURN,
                                 dict(PROJECT["builtIn"]))
    text = judge.compact({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"_meta": META, "name": INTERFACE["tool"],
                                     "arguments": request}})
    text = text.replace("%", "%%").replace(DIALOG, "%s").replace(str(TURN), "%d")
    TEMPLATES.append(text)

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
        for template in TEMPLATES:
            body = (template % (self.dialog, self.turn)).encode("utf-8")
            self.turn += 1
            with self.client.post("", data=body, headers=HEADERS, name="turn",
                                   catch_response=True) as r:
                if r.status_code != 200:
                    r.failure("HTTP %d" % r.status_code)
            TURNS[0] += 1
