#!/usr/bin/env python3
"""A BKN-DAC client of someone else's, written with the official MCP Python SDK 2.x (`mcp`,
pinned in requirements.txt; tests/peers/install.sh makes the venv to run it with).

It runs one three-turn dialogue against a Domain Access server and prints ONE JSON line:

  {"protocol": "<negotiated version>", "turns": [{"isError": bool, "structuredContent": ...,
   "text": "..."}, ...]}

(a turn answered with a JSON-RPC error instead of a result is `{"error": {code, message, data}}`).

  turn 0  Kind commitment: retain c1 "Avatar#7 not locatedAt MLoc:Square.Stage"
  turn 1  Kind feasibility: "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage",
          which breaks c1: a server that kept the dialogue's state answers PA Status Clash
  turn 2  the same Request with TurnIndex 1 again: must be refused with a tool error

The domain is the reference server's public square (src/server/dac/public-square.json), where
Avatar#7 stands at MLoc:Square.Gate; the M-Instance is read from `dac://domain` when the server
offers it (MCP-BINDING section 1).

  usage: py_dac_client.py [--protocol auto|2026-07-28|2025-11-25] --url URL
         py_dac_client.py [--protocol ...] [--transport stdio] -- COMMAND [ARG ...]

--protocol auto (the default) is the SDK's own negotiation (`Client(mode="auto")`: a
`server/discover` probe, falling back to `initialize`); 2025-11-25 forces the handshake
(`mode="legacy"`); 2026-07-28 pins the stateless generation (`mode="2026-07-28"`, then an
explicit `server/discover` at that version, which must succeed).
"""

import argparse
import json
import sys
import uuid
from datetime import datetime, timezone

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

HEADER = "PGM-KDA-V1.0"
COMMITMENT = {"CommitmentID": "c1", "Statement": "Avatar#7 not locatedAt MLoc:Square.Stage"}
BREAKING_STEP = "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def find_dac_tool(tools):
    """The BKN-DAC tool: by the Header const of its inputSchema first, by name otherwise."""
    for tool in tools:
        header = (tool.input_schema.get("properties") or {}).get("Header") or {}
        if header.get("const") == HEADER:
            return tool.name
    if any(tool.name == "bkn_dac" for tool in tools):
        return "bkn_dac"
    raise SystemExit("py_dac_client: the server offers no BKN-DAC tool")


async def identity(client):
    """MInstance and UEnvironment from `dac://domain`, or the reference domain's."""
    found = {"MInstance": "MI:PublicSquare", "UEnvironment": "UE:Square"}
    try:
        resources = await client.list_resources()
        if any(str(r.uri) == "dac://domain" for r in resources.resources):
            result = await client.read_resource("dac://domain")
            domain = json.loads(result.contents[0].text)
            found.update({k: domain[k] for k in found if isinstance(domain.get(k), str)})
    except (MCPError, ValueError, KeyError, IndexError, AttributeError) as e:
        print(f"py_dac_client: dac://domain not read ({e}); using {found}", file=sys.stderr)
    return found


def request(ident, dialog_id, turn, kind, **rest):
    """A complete BKN-DAC Request (Mode RQ)."""
    return {
        "Header": HEADER, "Mode": "RQ", **ident, "SessionID": "AUS:1",
        "QueryID": str(uuid.uuid4()), "QueryTime": now(), "DialogID": dialog_id,
        "TurnIndex": turn,
        "DataXMData": {"DataID": str(uuid.uuid4()), "Source": [{"AIMID": "PY-CLIENT"}]},
        "Kind": kind, **rest,
    }


async def call(client, tool, arguments):
    """One turn, as the line shows it."""
    try:
        result = await client.call_tool(tool, arguments)
    except MCPError as e:
        return {"error": {"code": e.error.code, "message": e.error.message, "data": e.error.data}}
    text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
    return {"isError": bool(result.is_error), "structuredContent": result.structured_content, "text": text}


async def run(target, protocol):
    mode = {"auto": "auto", "2025-11-25": "legacy", "2026-07-28": "2026-07-28"}[protocol]
    async with Client(target, mode=mode) as client:
        if mode == "2026-07-28":
            # A pinned mode adopts the version without asking the server: ask it now, so that a
            # server that does not speak 2026-07-28 fails here, loudly.
            raw = await client.session.send_discover("2026-07-28")
            client.session.adopt(types.DiscoverResult.model_validate(raw))
        tool = find_dac_tool((await client.list_tools()).tools)
        ident = await identity(client)
        dialog_id = str(uuid.uuid4())
        plan = {"ProcessActions": [{"Step": 0, "Statement": BREAKING_STEP}]}
        turns = [
            await call(client, tool, request(ident, dialog_id, 0, "commitment",
                                             Question="Keep Ana's avatar off the stage.",
                                             Commitments=[COMMITMENT])),
            await call(client, tool, request(ident, dialog_id, 1, "feasibility",
                                             Question="Can Ana's avatar go on stage?", **plan)),
            await call(client, tool, request(ident, dialog_id, 1, "feasibility",
                                             Question="And again, same turn?", **plan)),
        ]
        return {"protocol": client.protocol_version, "turns": turns}


def main():
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http"])
    parser.add_argument("--url", help="the server's Streamable HTTP endpoint")
    parser.add_argument("--protocol", choices=["auto", "2026-07-28", "2025-11-25"], default="auto")
    args = parser.parse_args(argv)
    transport = args.transport or ("http" if args.url else "stdio")
    if transport == "http":
        if not args.url:
            parser.error("--transport http needs --url URL")
        target = args.url
    else:
        if not command:
            parser.error("stdio needs the server's command after --")
        target = StdioServerParameters(command=command[0], args=command[1:])
    try:
        line = anyio.run(run, target, args.protocol)
    except Exception as e:  # a connection or negotiation failure: say it, print no line
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]  # anyio wraps the real error in task-group layers
        detail = f" (code {e.error.code}, data {json.dumps(e.error.data)})" if isinstance(e, MCPError) else ""
        print(f"py_dac_client: {type(e).__name__}: {e}{detail}", file=sys.stderr)
        return 1
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
