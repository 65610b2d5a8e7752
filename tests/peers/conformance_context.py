#!/usr/bin/env python3
"""Runs the client command it is given with the pre-registered credentials that the MCP
conformance suite passes in MCP_CONFORMANCE_CONTEXT, as --client-id and --client-secret
before the last two arguments (`--url URL`, which the suite appends). Standard library only."""
import json
import os
import sys

context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
command = sys.argv[1:]
extra = []
if "client_id" in context:
    extra += ["--client-id", context["client_id"]]
if "client_secret" in context:
    extra += ["--client-secret", context["client_secret"]]
command = command[:-2] + extra + command[-2:]
os.execvp(command[0], command)
