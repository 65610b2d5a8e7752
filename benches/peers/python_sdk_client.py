#!/usr/bin/env python3
"""The official MCP Python SDK as the client of the reference Domain Access: the same
`constraints` turns `bkn-explorer dialogue` sends, over stdio, timed. It prints one line:
turns, wall seconds, CPU seconds of this process and of its children (the server).

usage: python_sdk_client.py TURNS -- SERVER-COMMAND...
Needs the `mcp` package (pip install mcp); the benchmark skips this comparison without it.
"""

import asyncio
import resource
import sys
import time
import uuid
from datetime import datetime, timezone

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def request(dialog_id, turn):
    return {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RQ",
        "MInstance": "MI:PublicSquare",
        "UEnvironment": "UE:Square",
        "SessionID": "AUS:1",
        "QueryID": str(uuid.uuid4()),
        "QueryTime": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "DialogID": dialog_id,
        "TurnIndex": turn,
        "DataXMData": {"DataID": str(uuid.uuid4()), "Source": [{"AIMID": "PGM-BKN"}]},
        "Kind": "constraints",
        "EntityIDs": ["Kiosk#3"],
        "Space": {"SpaceID": "Space:Square"},
    }


async def main(turns, command):
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            dialog_id = str(uuid.uuid4())
            started = time.perf_counter()
            cpu = time.process_time()
            for turn in range(turns):
                result = await session.call_tool("bkn_dac", request(dialog_id, turn))
                structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
                if getattr(result, "is_error", getattr(result, "isError", False)) or (structured or {}).get("Outcome") != "answered":
                    raise SystemExit(f"turn {turn} was not answered: {result}")
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{turns} {wall:.6f} {cpu:.6f} {children.ru_utime + children.ru_stime:.6f}")


if __name__ == "__main__":
    n = int(sys.argv[1])
    asyncio.run(main(n, sys.argv[sys.argv.index("--") + 1 :]))
