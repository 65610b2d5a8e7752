#!/usr/bin/env python3
"""A Domain Access server of someone else's, written from MCP-BINDING.md alone with nothing
but Python's standard library: raw JSON-RPC over stdio (newline-delimited), the MCP
initialize lifecycle, one tool `bkn_dac`, and the resources dac://domain and
dac://spaces/Space:Lab of its own M-Instance, MI:Elsewhere.

It is the third-party peer of the interop tests. Flags make it break one rule on purpose:

  --clash-feasible     answer a feasibility Request "feasible" with its first step Clash
  --no-output-schema   declare the tool without an outputSchema
  --no-header-const    declare the tool's inputSchema without the Header const
  --drop-commitments   leave CommitmentStatus out of every Response
  --misshapen-space    publish dac://spaces/Space:Lab with MLocations a number
  --not-bkn            offer its tool as `lookup`, without the Header const: any MCP server
                       that has no BKN tool
"""

import json
import sys
import uuid
from datetime import datetime, timezone

FLAGS = set(sys.argv[1:])
M_INSTANCE = "MI:Elsewhere"
U_ENVIRONMENT = "UE:Lab"
commitments = {}  # this process is one MCP session: one dialogue


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool():
    input_schema = {"type": "object", "properties": {"Kind": {"type": "string"}}}
    if "--no-header-const" not in FLAGS:
        input_schema["properties"]["Header"] = {"const": "PGM-KDA-V1.0"}
    if "--not-bkn" in FLAGS:
        input_schema = {"type": "object", "properties": {"Kind": {"type": "string"}}}
    name = "lookup" if "--not-bkn" in FLAGS else "bkn_dac"
    t = {"name": name, "description": "Domain Access of the lab", "inputSchema": input_schema}
    if "--no-output-schema" not in FLAGS:
        t["outputSchema"] = {"type": "object", "properties": {"Header": {"const": "PGM-KDA-V1.0"}}}
    return t


def answer(request):
    response = {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RS",
        "MInstance": request.get("MInstance"),
        "UEnvironment": request.get("UEnvironment"),
        "SessionID": request.get("SessionID"),
        "QueryID": str(uuid.uuid4()),
        "QueryTime": now(),
        "DialogID": request.get("DialogID"),
        "TurnIndex": request.get("TurnIndex"),
        "DataXMData": {"DataID": str(uuid.uuid4()), "Source": [{"AIMID": "LAB-DAC"}]},
        "RequestID": request.get("QueryID"),
    }
    if request.get("MInstance") != M_INSTANCE:
        response["Outcome"] = "not_answered"
        response["Answer"] = {"Text": "This Domain Access serves " + M_INSTANCE + "."}
    else:
        for rid in request.get("ReleasedCommitmentIDs", []):
            if rid in commitments:
                commitments[rid] = "released"
        for c in request.get("Commitments", []):
            commitments[c["CommitmentID"]] = "retained"
        response["Outcome"] = "answered"
        response["Answer"] = {"Text": "The lab knows little, but it answers."}
        if request.get("Kind") == "feasibility":
            steps = []
            for i, pa in enumerate(request.get("ProcessActions", [])):
                status = "Clash" if (i == 0 and "--clash-feasible" in FLAGS) else "Ack"
                steps.append({"Step": pa["Step"], "PAStatus": status, "Reason": "the lab says so"})
            response["Feasibility"] = {"Steps": steps, "Overall": "feasible"}
    if "--drop-commitments" not in FLAGS:
        response["CommitmentStatus"] = [
            {"CommitmentID": k, "Status": v} for k, v in commitments.items()
        ]
    return response


DOMAIN = {"MInstance": M_INSTANCE, "UEnvironment": U_ENVIRONMENT, "Label": "a lab",
          "Spaces": ["Space:Lab"], "Actions": ["MM-Move"]}
SPACE = {"SpaceID": "Space:Lab", "MLocations": ["MLoc:Lab.Bench"], "Items": ["Robot#1"]}
if "--misshapen-space" in FLAGS:
    SPACE["MLocations"] = 3


def handle(message):
    method = message.get("method")
    mid = message.get("id")
    if mid is None:
        return  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "lab-dac", "version": "0.1"},
        }
    elif method == "tools/list":
        result = {"tools": [tool()]}
    elif method == "resources/list":
        result = {"resources": [
            {"uri": "dac://domain", "name": "domain", "mimeType": "application/json"},
            {"uri": "dac://spaces/Space:Lab", "name": "Space:Lab", "mimeType": "application/json"},
        ]}
    elif method == "resources/read":
        uri = message["params"]["uri"]
        body = DOMAIN if uri == "dac://domain" else SPACE
        result = {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(body)}]}
    elif method == "tools/call":
        response = answer(message["params"].get("arguments", {}))
        result = {"content": [{"type": "text", "text": json.dumps(response)}],
                  "structuredContent": response}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
        return
    send({"jsonrpc": "2.0", "id": mid, "result": result})


if __name__ == "__main__":  # raw_task_server.py takes answer() from here
    for line in sys.stdin:
        line = line.strip()
        if line:
            handle(json.loads(line))
