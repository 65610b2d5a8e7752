#!/usr/bin/env python3
"""A Domain Access (BKN-DAC) server of someone else's, written with the official MCP Python SDK
2.x (`mcp`, pinned in requirements.txt; tests/peers/install.sh makes the venv to run it with).

It is a third-party peer of the interop tests, following MCP-BINDING.md sections 1-4:
one tool `bkn_dac` (inputSchema with the Header const, an outputSchema), the resource
`dac://domain` naming its M-Instance, per-dialogue commitments, TurnIndex checks, and a small
feasibility judge. Over both MCP generations:

  - 2025-11-25: the `initialize` handshake; a dialogue lives as long as its MCP session
    (stdio: the process; HTTP: the Mcp-Session-Id), one dialogue per session;
  - 2026-07-28: stateless, every request carries `_meta`; a dialogue is keyed by its DialogID.

The SDK serves both generations on every transport by default ("dual-era"). `--strict-2026`
refuses the 2025 handshake (the SDK has no switch for that: see `refusal` below);
`--legacy-only` makes a server of before 2026-07-28, as the Python SDK 1.x was: it does not
know `server/discover` nor the `_meta` envelope (see `legacy_refusal`).

  usage: py_dac_server.py [--transport stdio|http] [--port N] [--strict-2026 | --legacy-only]
                          [--ask-to-retain]

`--ask-to-retain` makes the server ask the user (an elicitation: a form with a required
boolean `retain` and an optional `note`) before it retains the Commitments of a Request: over
2025-11-25 as its own `elicitation/create` request, over 2026-07-28 as an `input_required`
result (SEP-2322) whose answer comes back with the call. Declined or dismissed: a tool error
that says so, nothing retained.

Over HTTP the first line on stdout is `LISTENING http://127.0.0.1:PORT/mcp` (with --port 0,
the default, an ephemeral port). Logs go to stderr.

What it judges (enough to prove that state is kept across turns):
  - `Commitments[]` are retained (`conflicting` when a retained one says the opposite,
    `S P O` against `S not P O`); `ReleasedCommitmentIDs[]` release them; every Response lists
    every commitment the dialogue has seen in `CommitmentStatus`.
  - A feasibility step that places an Item (`MM-Add ... At L`, `MM-Move ... To L`) gets
    `Clash` when it breaks a retained commitment `Item not locatedAt L` (the Item would be at
    L) or `Item locatedAt M` with M other than L (the Item would leave M); else `Ack`.
  - A TurnIndex not greater than the dialogue's last accepted one is a tool error
    (`/TurnIndex: ...`), and so is a later turn of a dialogue the server does not hold.
"""

import argparse
import json
import socket
import sys
import time
import uuid
from datetime import datetime, timezone

import anyio
import mcp.types as types
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

HEADER = "PGM-KDA-V1.0"
M_INSTANCE = "MI:PublicSquare"
U_ENVIRONMENT = "UE:Square"
AIM_ID = "PY-DAC"
IDLE_EXPIRY_SECONDS = 30 * 60
MAX_DIALOGUES = 1000

# --- The tool's schemas ----------------------------------------------------------------------
# A self-contained, minimal form of the BKN-DAC Request and Response schemas (the project's own
# are in src/protocol/schemas/). Properties beyond these are allowed here.
STRINGS = {"type": "array", "items": {"type": "string"}}
INPUT_SCHEMA = {
    "type": "object",
    "title": "BKN-DAC Request (PGM-KDA-V1.0, Mode RQ)",
    "required": ["Header", "Mode", "MInstance", "UEnvironment", "SessionID", "QueryID",
                 "QueryTime", "DialogID", "TurnIndex", "DataXMData", "Kind"],
    "properties": {
        "Header": {"const": HEADER},
        "Mode": {"const": "RQ"},
        "MInstance": {"type": "string"},
        "UEnvironment": {"type": "string"},
        "SessionID": {"type": "string"},
        "QueryID": {"type": "string"},
        "QueryTime": {"type": "string", "format": "date-time"},
        "DialogID": {"type": "string"},
        "TurnIndex": {"type": "integer", "minimum": 0, "maximum": 9007199254740991},
        "DataXMData": {"type": "object"},
        "DescrMetadata": {"type": "string", "maxLength": 2048},
        "Kind": {"enum": ["semantic_grounding", "affordances", "constraints",
                          "behavioural_expectations", "feasibility", "clarification", "commitment"]},
        "Question": {"type": "string"},
        "Terms": {"type": "array", "items": {"type": "object"}},
        "EntityIDs": STRINGS,
        "Space": {"type": "object"},
        "ProcessActions": {"type": "array", "items": {
            "type": "object", "required": ["Step", "Statement"],
            "properties": {"Step": {"type": "integer", "minimum": 0}, "Statement": {"type": "string"}}}},
        "Commitments": {"type": "array", "items": {
            "type": "object", "required": ["CommitmentID", "Statement"],
            "properties": {"CommitmentID": {"type": "string"}, "Statement": {"type": "string"}}}},
        "ReleasedCommitmentIDs": STRINGS,
    },
}
OUTPUT_SCHEMA = {
    "type": "object",
    "title": "BKN-DAC Response (PGM-KDA-V1.0, Mode RS)",
    "required": ["Header", "Mode", "MInstance", "UEnvironment", "SessionID", "QueryID",
                 "QueryTime", "DialogID", "TurnIndex", "DataXMData", "RequestID", "Outcome"],
    "properties": {
        "Header": {"const": HEADER},
        "Mode": {"const": "RS"},
        "RequestID": {"type": "string"},
        "Outcome": {"enum": ["answered", "partially_answered", "not_answered"]},
        "Answer": {"type": "object"},
        "CommitmentStatus": {"type": "array", "items": {"type": "object"}},
        "Feasibility": {"type": "object"},
    },
}
DOMAIN = {
    "MInstance": M_INSTANCE,
    "UEnvironment": U_ENVIRONMENT,
    "Label": "a public square, as a Python Domain Access sees it",
    "Spaces": ["Space:Square"],
    "Actions": ["MM-Add", "MM-Move"],
}


# --- Dialogues -------------------------------------------------------------------------------
class Dialogue:
    def __init__(self, dialog_id):
        self.dialog_id = dialog_id
        self.last_turn = None
        self.commitments = {}  # CommitmentID -> {"Statement": str, "Status": str}, in first-seen order
        self.touched = time.monotonic()


# Every dialogue this process holds, keyed by (session, DialogID): `session` is the MCP session
# over 2025-11-25 ("stdio", or the HTTP Mcp-Session-Id) and None over 2026-07-28, where the
# DialogID alone names the dialogue.
dialogues = {}
# Over 2025-11-25, the one DialogID each MCP session is bound to.
session_dialogue = {}


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def triple(statement):
    """`S P O` or `S not P O` as (subject, negated, predicate, object); None if not a triple."""
    words = statement.split()
    negated = len(words) >= 4 and words[1] == "not"
    if negated:
        words = [words[0]] + words[2:]
    if len(words) < 3:
        return None
    return words[0], negated, words[1], " ".join(words[2:])


def violations(request, session):
    """The Request's non-conformities as `JSON-pointer: message` strings (MCP-BINDING 2.1)."""
    found = []
    for name in INPUT_SCHEMA["required"]:
        if name not in request:
            found.append(f"/{name}: required property missing")
    if request.get("Header", HEADER) != HEADER:
        found.append(f"/Header: must be {HEADER}")
    if request.get("Mode", "RQ") != "RQ":
        found.append("/Mode: must be RQ in a Request")
    turn = request.get("TurnIndex", 0)
    if isinstance(turn, float) and turn.is_integer():
        turn = int(turn)
    if not isinstance(turn, int) or isinstance(turn, bool) or not 0 <= turn <= 2**53 - 1:
        found.append("/TurnIndex: must be an integer from 0 to 2^53-1")
        return found
    dialog_id = request.get("DialogID")
    if not isinstance(dialog_id, str):
        return found + ["/DialogID: must be a string"]
    bound = session_dialogue.get(session) if session is not None else None
    if bound is not None and bound != dialog_id:
        found.append(f"/DialogID: this MCP session's dialogue is {bound}, not {dialog_id}")
        return found
    dialogue = dialogues.get((session, dialog_id))
    if dialogue is None and turn > 0 and session is None:
        found.append(f"/DialogID: dialogue {dialog_id} is unknown to this server or has expired"
                     f" (TurnIndex {turn} is not the start of a dialogue)")
    elif dialogue is not None and dialogue.last_turn is not None and turn <= dialogue.last_turn:
        found.append(f"/TurnIndex: {turn} is not greater than the last accepted TurnIndex"
                     f" {dialogue.last_turn} of dialogue {dialog_id}")
    return found


def dialogue_for(request, session):
    """The Request's dialogue, made on its first accepted Request (expired ones are dropped)."""
    cutoff = time.monotonic() - IDLE_EXPIRY_SECONDS
    for key in [k for k, d in dialogues.items() if d.touched < cutoff]:
        del dialogues[key]
    key = (session, request["DialogID"])
    if key not in dialogues:
        if len(dialogues) >= MAX_DIALOGUES:
            return None
        dialogues[key] = Dialogue(request["DialogID"])
        if session is not None:
            session_dialogue[session] = request["DialogID"]
    dialogue = dialogues[key]
    dialogue.touched = time.monotonic()
    return dialogue


def judge_step(statement, dialogue):
    """The PA Status and Reason of one Process Action statement, against retained commitments."""
    words = statement.split()
    preps = {words[i]: words[i + 1] for i in range(1, len(words) - 1)
             if words[i] in ("Nil", "At", "From", "To", "Of", "With")}
    action, item = (words[0] if words else ""), preps.get("Nil")
    place = preps.get("At") if action == "MM-Add" else preps.get("To") if action == "MM-Move" else None
    if item is None or (action in ("MM-Add", "MM-Move") and place is None):
        return "FaultyReq", "the statement names no Item with Nil, or no place for it"
    for cid, c in dialogue.commitments.items():
        t = triple(c["Statement"]) if c["Status"] == "retained" else None
        if t is None or t[0] != item or t[2] not in ("locatedAt", "at") or place is None:
            continue
        _, negated, _, where = t
        if (negated and where == place) or (not negated and where != place):
            return "Clash", f"it would break commitment {cid} ({c['Statement']})"
    return "Ack", None


def answer(request, dialogue):
    """The BKN-DAC Response (Mode RS) to a conformant Request; updates the dialogue."""
    response = {
        "Header": HEADER,
        "Mode": "RS",
        "MInstance": request["MInstance"],
        "UEnvironment": request["UEnvironment"],
        "SessionID": request["SessionID"],
        "QueryID": str(uuid.uuid4()),
        "QueryTime": now(),
        "DialogID": request["DialogID"],
        "TurnIndex": request["TurnIndex"],
        "DataXMData": {"DataID": str(uuid.uuid4()), "Source": [{"AIMID": AIM_ID}]},
        "RequestID": request["QueryID"],
    }
    if request["MInstance"] != M_INSTANCE:
        response["Outcome"] = "not_answered"
        response["Answer"] = {"Text": f"This Domain Access serves {M_INSTANCE}."}
    else:
        notes = []
        for cid in request.get("ReleasedCommitmentIDs", []):
            if cid in dialogue.commitments:
                dialogue.commitments[cid]["Status"] = "released"
        for c in request.get("Commitments", []):
            t = triple(c["Statement"])
            clash = t and any(
                (o := triple(old["Statement"])) and old["Status"] == "retained" and oid != c["CommitmentID"]
                and (o[0], o[2], o[3]) == (t[0], t[2], t[3]) and o[1] != t[1]
                for oid, old in dialogue.commitments.items())
            dialogue.commitments[c["CommitmentID"]] = {
                "Statement": c["Statement"], "Status": "conflicting" if clash else "retained"}
            notes.append(f"{c['CommitmentID']} {'conflicts' if clash else 'retained'}")
        response["Outcome"] = "answered"
        if request["Kind"] == "feasibility":
            steps = []
            for pa in sorted(request.get("ProcessActions", []), key=lambda pa: pa["Step"]):
                status, reason = judge_step(pa["Statement"], dialogue)
                steps.append({"Step": pa["Step"], "PAStatus": status, **({"Reason": reason} if reason else {})})
            if steps:
                acks = sum(s["PAStatus"] == "Ack" for s in steps)
                overall = ("feasible" if acks == len(steps)
                           else "infeasible" if acks == 0 else "partially_feasible")
                response["Feasibility"] = {"Steps": steps, "Overall": overall}
                notes.append(f"the plan is {overall}")
            else:
                response["Outcome"] = "not_answered"
                notes.append("a feasibility Request needs Process Actions")
        response["Answer"] = {"Text": "; ".join(notes) or "Nothing to say about that here."}
    response["CommitmentStatus"] = [
        {"CommitmentID": cid, "Status": c["Status"]} for cid, c in dialogue.commitments.items()]
    return response


# --- The MCP server (low-level API: the schemas above are served verbatim) --------------------
def session_of(ctx):
    """Where a dialogue lives: None over 2026-07-28, the MCP session over 2025-11-25."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    headers = getattr(ctx.request, "headers", None)
    return (headers.get("mcp-session-id") if headers is not None else None) or "stdio"


def tool_error(text):
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(
        name="bkn_dac",
        description="Domain Access (BKN-DAC, PGM-KDA): a whole Request in, a whole Response out",
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
    )])


ASK_TO_RETAIN = False
RETAIN_SCHEMA = {
    "type": "object",
    "properties": {
        "retain": {"type": "boolean", "title": "Retain them", "description": "keep the commitments"},
        "note": {"type": "string", "title": "A note", "maxLength": 200},
    },
    "required": ["retain"],
}


async def user_says_retain(ctx, params, request):
    """Whether the user lets the commitments be retained: the elicitation's answer, or, over
    2026-07-28 before any answer came, the `input_required` result to send back."""
    message = f"Retain {len(request['Commitments'])} commitment(s) of turn {request['TurnIndex']}?"
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answered = (params.input_responses or {}).get("retain")
        if answered is None:
            return types.InputRequiredResult(
                result_type="input_required",
                input_requests={"retain": types.ElicitRequest(params=types.ElicitRequestFormParams(
                    message=message, requested_schema=RETAIN_SCHEMA))},
                request_state=f"turn-{request['TurnIndex']}")
        result = answered if isinstance(answered, dict) else answered.model_dump(by_alias=True)
    else:
        result = (await ctx.session.elicit_form(message, RETAIN_SCHEMA, related_request_id=ctx.request_id)
                  ).model_dump(by_alias=True)
    content = result.get("content") or {}
    return result.get("action") == "accept" and content.get("retain") is True


async def call_tool(ctx, params):
    if params.name != "bkn_dac":
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    request = params.arguments or {}
    session = session_of(ctx)
    found = violations(request, session)
    if found:
        return tool_error("\n".join(found))
    if ASK_TO_RETAIN and request.get("Commitments"):
        verdict = await user_says_retain(ctx, params, request)
        if isinstance(verdict, types.InputRequiredResult):
            return verdict
        if not verdict:
            return tool_error("/Commitments: the user did not let them be retained")
    dialogue = dialogue_for(request, session)
    if dialogue is None:
        return tool_error(f"/DialogID: this server holds {MAX_DIALOGUES} dialogues, its limit;"
                          " it cannot start another")
    response = answer(request, dialogue)
    dialogue.last_turn = int(request["TurnIndex"])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(response))],
        structured_content=response,
    )


async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=[types.Resource(
        uri="dac://domain", name="domain", mime_type="application/json")])


async def read_resource(ctx, params):
    if str(params.uri) != "dac://domain":
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {params.uri}")
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri="dac://domain", mime_type="application/json", text=json.dumps(DOMAIN))])


def make_server():
    return Server("py-dac", version="0.1", on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource)


# --- --strict-2026: refuse the 2025-11-25 generation ------------------------------------------
# The SDK's server always serves both generations. A strict server answers every request that
# does not carry the 2026-07-28 `_meta` envelope (the `initialize` handshake first of all) with
# -32022 naming the versions it serves, and drops such notifications, as the TypeScript SDK's
# `legacy: 'reject'` does. The connection (stdio) stays open for a 2026-07-28 request.
ENVELOPE_KEY = "io.modelcontextprotocol/protocolVersion"
DROP = object()


def refusal(message):
    """For a message without the 2026 envelope: the -32022 error to answer, DROP, or None."""
    if isinstance(message, (types.JSONRPCRequest, types.JSONRPCNotification)):
        params = message.params or {}
        if message.method != "initialize" and ENVELOPE_KEY in (params.get("_meta") or {}):
            return None
        if isinstance(message, types.JSONRPCNotification):
            return DROP
        requested = params.get("protocolVersion") if message.method == "initialize" else None
        data = {"supported": list(MODERN_PROTOCOL_VERSIONS)}
        if isinstance(requested, str):
            data["requested"] = requested
        return types.JSONRPCError(jsonrpc="2.0", id=message.id, error=types.ErrorData(
            code=types.UNSUPPORTED_PROTOCOL_VERSION, data=data, message=f"Unsupported protocol"
            f" version: {requested or 'none'} (this server speaks only 2026-07-28)"))
    return None


# --- --legacy-only: a server of before 2026-07-28 -------------------------------------------
# What the Python SDK 1.x answered a 2026-07-28 client: over stdio `server/discover` is an
# unknown method (-32601) and a request with the 2026 envelope before `initialize` is refused;
# over HTTP a POST that is not `initialize` and has no Mcp-Session-Id gets 400 "Bad Request:
# Missing session ID" (-32600), and one with a 2026 MCP-Protocol-Version gets 400
# "Unsupported protocol version".
LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def legacy_refusal(message):
    """For a message a 2025-only server does not know: the error to answer, DROP, or None."""
    if not isinstance(message, (types.JSONRPCRequest, types.JSONRPCNotification)):
        return None
    params = message.params or {}
    modern = message.method == "server/discover" or ENVELOPE_KEY in (params.get("_meta") or {})
    if not modern:
        return None
    if isinstance(message, types.JSONRPCNotification):
        return DROP
    if message.method == "server/discover":
        error = types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
    else:
        error = types.ErrorData(code=types.INVALID_REQUEST,
                                message="Invalid request: the session is not initialized")
    return types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)


def legacy_http(app):
    """ASGI wrapper: a 2026-07-28 POST is refused as the Python SDK 1.x refused it."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        headers = dict(scope["headers"])
        version = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
        raw, more = b"", True
        while more:
            event = await receive()
            raw += event.get("body", b"")
            more = event.get("more_body", False)
        try:
            initialize = json.loads(raw).get("method") == "initialize"
        except (ValueError, AttributeError):
            initialize = False
        message = None
        if not initialize and b"mcp-session-id" not in headers:
            message = "Bad Request: Missing session ID"
        elif not initialize and version and version not in LEGACY_VERSIONS:
            message = (f"Bad Request: Unsupported protocol version: {version}. "
                       f"Supported versions: {', '.join(LEGACY_VERSIONS)}")
        if message is None:
            replayed = False

            async def receive_again():
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}

            return await app(scope, receive_again, send)
        payload = json.dumps({"jsonrpc": "2.0", "id": "server-error",
                              "error": {"code": types.INVALID_REQUEST, "message": message}}).encode()
        await send({"type": "http.response.start", "status": 400, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    return wrapped


async def serve_stdio(server, strict, legacy=False):
    async with stdio_server() as (read_stream, write_stream):
        if not strict and not legacy:
            await server.run(read_stream, write_stream, server.create_initialization_options())
            return
        judge = legacy_refusal if legacy else refusal
        # Put a filter between stdin and the server: refused messages never reach it, so its
        # dual-era loop only ever sees (and opens the connection with) 2026-07-28 requests.
        send, receive = anyio.create_memory_object_stream(16)

        async def forward():
            async with send:
                async for item in read_stream:
                    verdict = judge(item.message) if isinstance(item, SessionMessage) else None
                    if verdict is None:
                        await send.send(item)
                    elif verdict is not DROP:
                        await write_stream.send(SessionMessage(verdict))

        async with anyio.create_task_group() as tg:
            tg.start_soon(forward)
            await server.run(receive, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()


def strict_http(app):
    """ASGI wrapper: POSTs without a 2026-07-28 MCP-Protocol-Version header are refused (-32022,
    HTTP 400; notifications 202), GET/DELETE (2025 session operations) get 405."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        version = dict(scope["headers"]).get(b"mcp-protocol-version", b"").decode("latin-1")
        if version in MODERN_PROTOCOL_VERSIONS:
            return await app(scope, receive, send)
        status, body = 405, {"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32600, "message": "Method not allowed."}}
        if scope["method"] == "POST":
            raw = b""
            while True:
                event = await receive()
                raw += event.get("body", b"")
                if not event.get("more_body"):
                    break
            try:
                parsed = json.loads(raw)
                kind = types.JSONRPCRequest if "id" in parsed else types.JSONRPCNotification
                verdict = refusal(kind.model_validate(parsed))
            except (ValueError, TypeError):  # not JSON, or not one JSON-RPC message
                verdict = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
                    code=types.INVALID_REQUEST, message="Invalid Request: not one JSON-RPC message"))
            if verdict is None:  # the 2026 envelope in the body, but not in the headers
                verdict = types.JSONRPCError(jsonrpc="2.0", id=parsed["id"] if "id" in parsed else None,
                                             error=types.ErrorData(code=-32020, message="Header mismatch:"
                                             " MCP-Protocol-Version must be 2026-07-28"))
            if verdict is DROP:
                status, body = 202, None
            else:
                status, body = 400, verdict.model_dump(mode="json", exclude_unset=True)
        payload = json.dumps(body).encode() if body is not None else b""
        headers = [(b"content-length", str(len(payload)).encode())]
        if body is not None:
            headers.append((b"content-type", b"application/json"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return wrapped


async def serve_http(server, strict, port, legacy=False):
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    if strict:
        app = strict_http(app)
    if legacy:
        app = legacy_http(app)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # listening before the URL is printed: a client may connect at once
    print(f"LISTENING http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port; 0 = ephemeral")
    parser.add_argument("--strict-2026", action="store_true",
                        help="speak only 2026-07-28: refuse the 2025-11-25 initialize handshake")
    parser.add_argument("--legacy-only", action="store_true",
                        help="speak only 2025-11-25 and before, as the Python SDK 1.x did")
    parser.add_argument("--ask-to-retain", action="store_true",
                        help="ask the user (an elicitation) before retaining commitments")
    args = parser.parse_args()
    global ASK_TO_RETAIN
    ASK_TO_RETAIN = args.ask_to_retain
    server = make_server()
    if args.transport == "stdio":
        anyio.run(serve_stdio, server, args.strict_2026, args.legacy_only)
    else:
        anyio.run(serve_http, server, args.strict_2026, args.port, args.legacy_only)


if __name__ == "__main__":
    sys.exit(main())
