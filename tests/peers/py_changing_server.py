#!/usr/bin/env python3
"""The Domain Access server of py_dac_server.py (the official MCP Python SDK 2.x), whose tool
list changes on a call: each answered `bkn_dac` call adds a tool (`note_1`, `note_2`, ...) and
publishes the change on the SDK's subscription bus. Over 2026-07-28 the SDK's `ListenHandler`
serves `subscriptions/listen` (SEP-2575): the acknowledgement first, then one
`notifications/tools/list_changed` per change, each tagged with the listen request's id; its
`server/discover` then says `tools.listChanged` (the SDK derives it from the handler being
served). Over 2025-11-25 the change is sent on the session (`send_tool_list_changed`).

  usage: py_changing_server.py [--transport stdio|http] [--port N]

It also offers `bad_header`, whose `x-mcp-header` annotation is not an HTTP header name: a
2026-07-28 client must hide it (SEP-2243); and `echo_region` and `echo_région`, whose `region`
is to be mirrored in `Mcp-Param-Region` (the SDK refuses a call over HTTP without it, HTTP 400):
they answer with the region.

Over HTTP the first line on stdout is `LISTENING http://127.0.0.1:PORT/mcp`.
"""

import argparse
import os
import sys

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_dac_server as dac  # noqa: E402

BUS = InMemorySubscriptionBus()
NOTES = []  # the tools added so far, in order
ECHOES = ["echo_region", "echo_r\u00e9gion"]


async def list_tools(ctx, params):
    listed = await dac.list_tools(ctx, params)
    extra = [types.Tool(name="bad_header", description="an invalid x-mcp-header annotation",
                        input_schema={"type": "object", "properties": {
                            "region": {"type": "string", "x-mcp-header": "My Region"}}})]
    annotated = {"type": "object", "required": ["region"], "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}}
    extra += [types.Tool(name=name, description="echoes its region", input_schema=annotated)
              for name in ECHOES]
    extra += [types.Tool(name=name, description="added by a call",
                         input_schema={"type": "object"}) for name in NOTES]
    return types.ListToolsResult(tools=listed.tools + extra)


async def call_tool(ctx, params):
    if params.name in ECHOES:
        region = (params.arguments or {}).get("region")
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(region))])
    result = await dac.call_tool(ctx, params)
    if not result.is_error:
        NOTES.append(f"note_{len(NOTES) + 1}")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await BUS.publish(ToolsListChanged())
        else:
            await ctx.session.send_tool_list_changed()
    return result


def make_server():
    server = Server("py-changing-dac", version="0.1", on_list_tools=list_tools,
                    on_call_tool=call_tool, on_list_resources=dac.list_resources,
                    on_read_resource=dac.read_resource,
                    on_subscriptions_listen=ListenHandler(BUS))
    # 2025-11-25 capabilities come from these options (2026-07-28's from the listen handler).
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    server.create_initialization_options = lambda *a, **k: options
    return server


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port; 0 = ephemeral")
    args = parser.parse_args()
    server = make_server()
    if args.transport == "stdio":
        anyio.run(dac.serve_stdio, server, False)
    else:
        anyio.run(dac.serve_http, server, False, args.port)


if __name__ == "__main__":
    sys.exit(main())
