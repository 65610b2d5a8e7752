"""The floor Locust itself costs a turn on this machine (benches/locust.rs): a bare
FastHttpUser that POSTs the same tools/call bodies as the exported scenario's users (its
steps' Requests, written once with holes for each turn's QueryID, QueryTime, DataID, DialogID
and TurnIndex, over 2026-07-28 with the same headers and `_meta` envelope) and reads each
answer whole, with nothing else: no judging, no recording, no JSON read.

Copied by the bench into an exported project (it reads that project's scenarios.json, and
uses bkn_judge.py to build the bodies once and for a turn's new ids and time). Each user keeps one DialogID and counts its
TurnIndex on, as a user of the exported project does without --fresh. Run it with
--run-time. At the end the process says its CPU per turn on stderr: "floor: N turns, C s of CPU (U us a turn)".

BKN_FLOOR=client sends through the geventhttpclient client beneath Locust's session instead,
as the exported runner does, each request told to Locust's statistics by hand: the floor of
what a worker must spend on a turn with Locust's HTTP client.
"""

import json
import os
import resource
import sys
import time
import uuid

from geventhttpclient.url import URL
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


# BKN_FLOOR=client: beneath the session, the geventhttpclient client it keeps for the host,
# as the exported runner sends its turns, each told to Locust's statistics by hand.
BENEATH = os.environ.get("BKN_FLOOR") == "client"


class Floor(FastHttpUser):
    wait_time = constant(0)
    host = PROJECT["host"]

    def on_start(self):
        self.dialog = str(uuid.uuid4())
        self.turn = 0
        url = URL(self.host)
        self.http = self.client.client.clientpool.get_client(url)
        self.path = url.request_uri

    def bodies(self):
        for template, moves_on in TEMPLATES:
            yield (template % {"QueryID": judge.new_uuid(), "QueryTime": judge.now_rfc3339(),
                               "DialogID": self.dialog, "TurnIndex": self.turn,
                               "DataID": judge.new_uuid()}).encode("utf-8"), moves_on
            self.turn += moves_on
            TURNS[0] += 1

    @task
    def go_through(self):
        if BENEATH:
            return self.beneath()
        for body, moves_on in self.bodies():
            with self.client.post("", data=body, headers=HEADERS, name="turn",
                                  catch_response=True) as r:
                if r.status_code != 200:
                    r.failure("HTTP %d" % r.status_code)
                elif moves_on and b'"isError":true' in r.content:
                    # Not judged, but a refused turn costs the server less: said, so that
                    # the bench never measures refusals for turns.
                    r.failure("a tool error")

    def beneath(self):
        fire = self.environment.events.request.fire
        for body, moves_on in self.bodies():
            started = time.perf_counter()
            failure = None
            try:
                r = self.http.request("POST", self.path, body=body, headers=HEADERS)
                content = r.read()
                if r.status_code != 200:
                    failure = Exception("HTTP %d" % r.status_code)
                elif moves_on and b'"isError":true' in content:
                    failure = Exception("a tool error")
            except Exception as e:  # noqa: BLE001
                failure = e
            fire(request_type="POST", name="turn", response_time=(time.perf_counter() - started) * 1000,
                 response_length=0, exception=failure, context={})
