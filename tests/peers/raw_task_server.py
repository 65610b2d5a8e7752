#!/usr/bin/env python3
"""A Domain Access of someone else's that answers every tools/call with a Task, written from
SEP-2663 (the MCP Tasks extension, `io.modelcontextprotocol/tasks`) and MCP 2026-07-28 alone,
with nothing but Python's standard library: raw JSON-RPC over stdio (newline-delimited), no
initialize (a 2026-07-28 server: `server/discover`, each request's `_meta` read), the answers
of raw_dac_server.py (one process, one dialogue: its commitments are kept).

Over stdio by default; with --http PORT (0: any free port, said on stderr) over Streamable
HTTP at /mcp, each POST answered with one JSON body (no session, no event stream).

tools/call -> a CreateTaskResult (`resultType: "task"`), then `tasks/get` answers "working"
--polls times (2 by default) before "completed" with the tool's result. A client that did not
declare the extension in `_meta` `io.modelcontextprotocol/clientCapabilities` gets -32021, as
SEP-2663 says. With --ask, the task first asks for input (an elicitation keyed "approve"),
taken with `tasks/update`; a declined one ends "failed". `tasks/cancel` ends it "cancelled".
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_dac_server import answer, now, tool  # noqa: E402

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
ARGS = sys.argv[1:]
POLLS = int(ARGS[ARGS.index("--polls") + 1]) if "--polls" in ARGS else 2
ASK = "--ask" in ARGS
tasks = {}  # task id -> its state


replies = []  # what handle() answered, for the transport to send


def send(message):
    replies.append(message)


def error(mid, code, message, data=None):
    e = {"code": code, "message": message}
    if data is not None:
        e["data"] = data
    send({"jsonrpc": "2.0", "id": mid, "error": e})


def task_view(tid, status, message, **payload):
    t = tasks[tid]
    view = {"taskId": tid, "status": status, "statusMessage": message,
            "createdAt": t["created"], "lastUpdatedAt": now(), "ttlMs": 60000,
            "pollIntervalMs": 10}
    view.update(payload)
    return view


def get(tid):
    t = tasks[tid]
    if t["cancelled"]:
        return task_view(tid, "cancelled", "cancelled, as asked")
    if t["polls"] > 0:
        t["polls"] -= 1
        return task_view(tid, "working", "%d to go" % t["polls"])
    if ASK and t["approved"] is None:
        asked = {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Approve the answer?",
            "requestedSchema": {"type": "object", "properties": {"yes": {"type": "boolean"}}}}}
        return task_view(tid, "input_required", "waiting for approval",
                         inputRequests={"approve": asked})
    if ASK and not t["approved"]:
        return task_view(tid, "failed", "not approved",
                         error={"code": -32000, "message": "the answer was not approved"})
    return task_view(tid, "completed", "done", result=t["result"])


def handle(message):
    method = message.get("method")
    mid = message.get("id")
    if mid is None:
        return  # a notification
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    if method == "initialize":
        error(mid, -32601, "Method not found: this server speaks 2026-07-28 only")
        return
    if method != "server/discover" and meta.get("io.modelcontextprotocol/protocolVersion") != VERSION:
        error(mid, -32602, "each request names its protocol version in _meta (2026-07-28)")
        return
    declared = ((meta.get("io.modelcontextprotocol/clientCapabilities") or {})
                .get("extensions") or {})
    if method == "server/discover":
        result = {"resultType": "complete", "supportedVersions": [VERSION],
                  "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
                  "ttlMs": 0, "cacheScope": "private",
                  "_meta": {"io.modelcontextprotocol/serverInfo":
                            {"name": "lab-tasks", "version": "0.1"}}}
    elif method == "tools/list":
        result = {"resultType": "complete", "tools": [tool()]}
    elif method == "tools/call":
        if TASKS not in declared:
            error(mid, -32021, "Missing required client capability",
                  {"requiredCapabilities": {"extensions": {TASKS: {}}}})
            return
        response = answer(params.get("arguments", {}))
        tid = "lab-task-%d" % (len(tasks) + 1)
        tasks[tid] = {"created": now(), "polls": POLLS, "cancelled": False, "approved": None,
                      "result": {"content": [{"type": "text", "text": json.dumps(response)}],
                                 "structuredContent": response}}
        result = dict(task_view(tid, "working", "accepted"), resultType="task")
    elif method in ("tasks/get", "tasks/update", "tasks/cancel"):
        tid = params.get("taskId")
        if tid not in tasks:
            error(mid, -32602, "no task %s" % tid)
            return
        if method == "tasks/get":
            result = dict(get(tid), resultType="complete")
        elif method == "tasks/update":
            approve = (params.get("inputResponses") or {}).get("approve") or {}
            tasks[tid]["approved"] = (approve.get("action") == "accept"
                                      and (approve.get("content") or {}).get("yes") is True)
            result = {"resultType": "complete"}
        else:
            tasks[tid]["cancelled"] = True
            sys.stderr.write("lab-tasks: %s cancelled\n" % tid)
            result = {"resultType": "complete"}
    elif method == "ping":
        result = {}
    else:
        error(mid, -32601, "Method not found")
        return
    send({"jsonrpc": "2.0", "id": mid, "result": result})


def answer_to(message):
    """The reply to one message (None for a notification)."""
    replies.clear()
    handle(message)
    return replies[0] if replies else None


def serve_stdio():
    for line in sys.stdin:
        line = line.strip()
        if line:
            reply = answer_to(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


def serve_http(port):
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            if self.path != "/mcp":
                self.send_error(404)
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            message = json.loads(body)
            # The standard header must agree with the body (2026-07-28).
            if self.headers.get("Mcp-Method") not in (None, message.get("method")):
                self.send_error(400, "Mcp-Method disagrees with the body")
                return
            reply = answer_to(message)
            if reply is None:
                self.send_response(202)
                self.end_headers()
                return
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.send_error(405)

        def do_DELETE(self):
            self.send_error(405)

    server = HTTPServer(("127.0.0.1", port), Handler)
    sys.stderr.write("lab-tasks listening on http://127.0.0.1:%d/mcp\n" % server.server_port)
    sys.stderr.flush()
    server.serve_forever()


if "--http" in ARGS:
    serve_http(int(ARGS[ARGS.index("--http") + 1]))
else:
    serve_stdio()
