#!/usr/bin/env python3
"""Makes the tool calls the MCP conformance suite asks for in MCP_CONFORMANCE_CONTEXT
(`{"toolCalls": [{"name": ..., "arguments": {...}}, ...]}`), one `COMMAND... call NAME ARGS
--url URL` each, in order; the suite appends `--url URL` to the command line. Exits with the
first failing call's status. Standard library only."""
import json
import os
import subprocess
import sys

context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
command, target = sys.argv[1:-2], sys.argv[-2:]
calls = context.get("toolCalls", [])
if not calls:
    sys.exit("conformance_tool_calls.py: MCP_CONFORMANCE_CONTEXT names no toolCalls")
for call in calls:
    arguments = json.dumps(call.get("arguments", {}))
    status = subprocess.call(command + ["call", call["name"], arguments] + target)
    if status != 0:
        sys.exit(status)
