#!/usr/bin/env python3
"""A third-party Domain Access server for `certify`'s tests, written from MCP-BINDING.md alone
with nothing but Python's standard library: raw JSON-RPC over stdio (newline-delimited), both
MCP generations (2026-07-28: server/discover, dialogues kept by DialogID; 2025-11-25:
initialize, the process is the one session and dialogue), the tool `bkn_dac`, and a small
yard published whole in dac://domain and dac://spaces/<SpaceID>.

Without a flag it keeps every rule certify checks. Each flag breaks one on purpose:

  --forget-release   a released commitment is listed released once, then forgotten
  --leak             commitments are kept for the process, shared by every dialogue
  --miss-clash       feasibility ignores retained commitments
  --wrong-overall    Overall is always "feasible"
  --no-reason        non-Ack steps have no Reason
  --copy-fields      the Response's SessionID is not the Request's
  --repeat-turn      a TurnIndex equal to the last accepted one is accepted
  --no-tool          offers no tool at all (certify has nothing to certify: exit 2)
  --no-commitment-status  answers without CommitmentStatus
  --other-tools      offers two tools that are not BKN-DAC's (weather, echo) instead
  --any-mode         a Request's Mode is not checked (a Request with Mode RS is answered)
"""

import json
import sys
import uuid
from datetime import datetime, timezone

sys.setrecursionlimit(10000)
FLAGS = set(sys.argv[1:])
HEADER = "PGM-KDA-V1.0"
M_INSTANCE = "MI:Peer"

DOMAIN = {
    "MInstance": M_INSTANCE,
    "UEnvironment": "UE:Yard",
    "Label": "a yard, a shed and a vault",
    "Requester": {"ProcessID": "Process#Peer", "Reach": ["Space:Yard", "Space:Shed"],
                  "Wallet": {"Amount": 3, "Currency": "Coin"}},
    "Spaces": [
        {"SpaceID": "Space:Yard", "MLocations": [
            {"MLocationID": "MLoc:Yard.A", "Capacity": 3},
            {"MLocationID": "MLoc:Yard.B", "Capacity": 3}]},
        {"SpaceID": "Space:Shed", "MLocations": [{"MLocationID": "MLoc:Shed.Door", "Capacity": 1}]},
        {"SpaceID": "Space:Vault", "MLocations": [{"MLocationID": "MLoc:Vault.Room", "Capacity": 5}]},
    ],
    "Items": [
        {"ItemID": "Box#1", "Class": "Box", "Position": "MLoc:Yard.A", "Qualifier": {"Format": "glTF"}},
        {"ItemID": "Crate#2", "Class": "Crate", "Position": "MLoc:Yard.B"},
        {"ItemID": "Safe#3", "Class": "Safe", "Position": "MLoc:Yard.A"},
    ],
    "Processes": [{"ProcessID": "Process#Peer"}],
    "Rights": [
        {"Verb": "May", "Action": "MM-Move", "Item": "Box#1"},
        {"Verb": "May", "Action": "MM-Move", "Item": "Crate#2"},
        {"Verb": "May Not", "Action": "MM-Move", "Item": "Safe#3"},
    ],
    "Actions": [{"Action": "MM-Move", "Requires": ["Nil", "To"], "Price": 1}],
    "Relations": [{"Subject": "Box#1", "Predicate": "madeOf", "Object": "Wood"}],
}
LOCATIONS = {l["MLocationID"]: (s["SpaceID"], l["Capacity"])
             for s in DOMAIN["Spaces"] for l in s["MLocations"]}
ITEMS = {i["ItemID"]: i for i in DOMAIN["Items"]}
REACH = DOMAIN["Requester"]["Reach"]
ACTIONS = {"MM-Move", "MM-Add", "MM-Send", "MM-Animate", "Post", "Transact", "Convert", "Hide"}
PREPS = {"Nil", "At", "From", "To", "Of", "With"}
COMMON = ["Header", "Mode", "MInstance", "UEnvironment", "SessionID", "QueryID", "QueryTime",
          "DialogID", "TurnIndex", "DataXMData"]
REQUEST = set(COMMON) | {"DescrMetadata", "Kind", "Question", "Terms", "EntityIDs", "Space",
                         "ProcessActions", "Commitments", "ReleasedCommitmentIDs"}
RESPONSE_ONLY = {"RequestID", "Outcome", "Answer", "CommitmentStatus", "Feasibility",
                 "SourcesUsed", "Failure"}
KINDS = {"semantic_grounding", "affordances", "constraints", "behavioural_expectations",
         "feasibility", "clarification", "commitment"}

dialogues = {}  # DialogID -> {"last": int, "commitments": {id: [statement, status]}}
shared = {}     # --leak: one store for every dialogue
session = {"bound": None}  # 2025-11-25: this process is one MCP session, one dialogue


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def triple(statement):
    words = statement.split()
    if len(words) < 3:
        return None
    negated = words[1] == "not"
    if not negated and words[1].lower() == "not":
        return None
    p, o = (2, 3) if negated else (1, 2)
    if len(words) <= o:
        return None
    return (words[0], words[p], " ".join(words[o:]), negated)


def violations(r, stateless):
    out = []
    if not isinstance(r, dict):
        return ["/: a Request is a JSON object"]
    for k in r:
        if k in RESPONSE_ONLY:
            out.append("/%s: %s belongs to a Response" % (k, k))
        elif k not in REQUEST:
            out.append("/%s: %s is not a property of a BKN-DAC Request" % (k, k))
    for k in COMMON + ["Kind"]:
        if k not in r:
            out.append("/%s: %s is required" % (k, k))
    if r.get("Header") != HEADER:
        out.append("/Header: Header is not %s" % HEADER)
    if "Mode" in r and r["Mode"] != "RQ" and "--any-mode" not in FLAGS:
        out.append("/Mode: Mode is %r where a Request (RQ) is expected" % r["Mode"])
    if "Kind" in r and r["Kind"] not in KINDS:
        out.append("/Kind: not a Kind")
    if len(r.get("DescrMetadata", "")) > 2048:
        out.append("/DescrMetadata: longer than 2048 characters")
    t = r.get("TurnIndex")
    if not isinstance(t, int) or t < 0:
        out.append("/TurnIndex: an integer from 0")
    if out:
        return out
    d = dialogues.get(r["DialogID"])
    if stateless:
        if d is None and t > 0:
            return ["/DialogID: the dialogue %s is unknown or has expired" % r["DialogID"]]
    elif session["bound"] is not None and session["bound"] != r["DialogID"]:
        return ["/DialogID: this MCP session's dialogue is %s" % session["bound"]]
    if d is not None:
        last = d["last"]
        if t < last or (t == last and "--repeat-turn" not in FLAGS):
            return ["/TurnIndex: %d is not after the last accepted TurnIndex %d" % (t, last)]
    return []


def dialogue(r, stateless):
    d = dialogues.get(r["DialogID"])
    if d is None:
        d = dialogues[r["DialogID"]] = {"last": -1, "commitments": {}}
        if not stateless:
            session["bound"] = r["DialogID"]
    d["last"] = r["TurnIndex"]
    if "--leak" in FLAGS:
        d["commitments"] = shared
    return d


def world_conflict(t):
    s, p, o, negated = t
    for rel in DOMAIN["Relations"]:
        if (rel["Subject"], rel["Predicate"], rel["Object"]) == (s, p, o) and negated:
            return True
    if p == "locatedAt" and s in ITEMS:
        here = ITEMS[s].get("Position") == o
        return here == negated
    return False


def commit(store, requested):
    for rid in requested.get("ReleasedCommitmentIDs", []):
        if rid in store:
            store[rid][1] = "released"
    for c in requested.get("Commitments", []):
        cid, statement = c["CommitmentID"], c["Statement"]
        t = triple(statement)
        status = "retained"
        if t is not None:
            if world_conflict(t):
                status = "conflicting"
            for other_id, (other, st) in store.items():
                o = triple(other)
                if other_id != cid and st == "retained" and o is not None \
                        and o[:3] == t[:3] and o[3] != t[3]:
                    status = "conflicting"
        store[cid] = [statement, status]


def parse(statement):
    words = statement.split()
    if not words or words[0] not in ACTIONS or len(words) % 2 == 0:
        return None
    complements = []
    for i in range(1, len(words), 2):
        prep, target = words[i], words[i + 1]
        if prep not in PREPS:
            return None
        complements.append((prep, target))
    preps = [p for p, _ in complements if p != "With"]
    if len(set(preps)) != len(preps):
        return None
    return words[0], dict(complements)


def split_target(target):
    if "(" in target and target.endswith(")"):
        name, params = target[:-1].split("(", 1)
        return name, dict(p.split("=", 1) for p in params.split(",") if "=" in p)
    return target, {}


def judge_step(statement, space, state, retained):
    parsed = parse(statement)
    if parsed is None:
        return "FaultyReq", "the statement does not parse or names no known Action"
    action, comp = parsed
    if action != "MM-Move" or "Nil" not in comp or "To" not in comp:
        return "FaultyReq", "MM-Move needs Nil and To"
    item, params = split_target(comp["Nil"])
    if item in LOCATIONS:
        return "FaultyReq", "an M-Location is not an Item to move"
    to, frm = comp["To"], comp.get("From")
    for target in [to] + ([frm] if frm else []):
        if target in ITEMS:
            return "FaultyReq", "%s is an Item, not an M-Location" % target
    for name in [item, to] + ([frm] if frm else []):
        if name not in ITEMS and name not in LOCATIONS:
            return "IncID", "%s is unknown" % name
    fmt = params.get("Format")
    if fmt is not None and fmt != ITEMS[item].get("Qualifier", {}).get("Format"):
        return "IncDQ", "%s is not in %s" % (item, fmt)
    to_space = LOCATIONS[to][0]
    if to_space not in REACH:
        return "LocOOR", "%s is out of reach" % to
    if space and to_space != space:
        return "LocOOR", "%s is outside %s" % (to, space)
    rights = [r for r in DOMAIN["Rights"] if r["Item"] == item and r["Action"] == action]
    if not any(r["Verb"] == "May" for r in rights) or any(r["Verb"] == "May Not" for r in rights):
        return "InsRights", "no right to move %s" % item
    if state["wallet"] < 1:
        return "InsValue", "the wallet is empty"
    where = state["positions"].get(item)
    if frm and where != frm:
        return "Clash", "%s is not at %s" % (item, frm)
    if where == to:
        return "Clash", "%s is already at %s" % (item, to)
    if sum(1 for p in state["positions"].values() if p == to) >= LOCATIONS[to][1]:
        return "Clash", "%s is full" % to
    if "--miss-clash" not in FLAGS:
        for statement in retained:
            t = triple(statement)
            if t and t[0] == item and t[1] == "locatedAt":
                if (not t[3] and t[2] == where) or (t[3] and t[2] == to):
                    return "Clash", "it would break the commitment %s" % statement
    state["positions"][item] = to
    state["wallet"] -= 1
    return "Ack", None


def feasibility(request, retained):
    space = (request.get("Space") or {}).get("SpaceID")
    state = {"wallet": DOMAIN["Requester"]["Wallet"]["Amount"],
             "positions": {i: it.get("Position") for i, it in ITEMS.items()}}
    steps = []
    for pa in sorted(request["ProcessActions"], key=lambda p: p["Step"]):
        status, reason = judge_step(pa["Statement"], space, state, retained)
        step = {"Step": pa["Step"], "PAStatus": status}
        if reason and "--no-reason" not in FLAGS:
            step["Reason"] = reason
        steps.append(step)
    acks = sum(1 for s in steps if s["PAStatus"] == "Ack")
    overall = "feasible" if acks == len(steps) else "infeasible" if acks == 0 else "partially_feasible"
    if "--wrong-overall" in FLAGS:
        overall = "feasible"
    return {"Steps": steps, "Overall": overall}


def answer(request, stateless):
    problems = violations(request, stateless)
    if problems:
        return None, "\n".join(problems)
    d = dialogue(request, stateless)
    store = d["commitments"]
    response = {
        "Header": HEADER, "Mode": "RS",
        "MInstance": request["MInstance"], "UEnvironment": request["UEnvironment"],
        "SessionID": request["SessionID"] if "--copy-fields" not in FLAGS else "S-peer",
        "QueryID": str(uuid.uuid4()), "QueryTime": now(),
        "DialogID": request["DialogID"], "TurnIndex": request["TurnIndex"],
        "DataXMData": {"DataID": str(uuid.uuid4()), "Source": [{"AIMID": "PEER-DAC"}]},
        "RequestID": request["QueryID"],
    }
    if request["MInstance"] != M_INSTANCE:
        response["Outcome"] = "not_answered"
    else:
        commit(store, request)
        retained = [st for st, status in store.values() if status == "retained"]
        response["Outcome"] = "answered"
        response["Answer"] = {"Text": "The yard answers a %s Request." % request["Kind"]}
        if request["Kind"] == "feasibility":
            if request.get("ProcessActions"):
                response["Feasibility"] = feasibility(request, retained)
            else:
                response["Outcome"] = "not_answered"
    if "--no-commitment-status" not in FLAGS:
        response["CommitmentStatus"] = [{"CommitmentID": k, "Status": v[1]} for k, v in store.items()]
    if "--forget-release" in FLAGS:
        for k in [k for k, v in store.items() if v[1] == "released"]:
            del store[k]
    return response, None


def tool():
    return {"name": "bkn_dac", "description": "Domain Access of the yard",
            "inputSchema": {"type": "object", "properties": {"Header": {"const": HEADER}}},
            "outputSchema": {"type": "object", "properties": {"Header": {"const": HEADER}}}}


def space_resource(space):
    s = next(x for x in DOMAIN["Spaces"] if x["SpaceID"] == space)
    return {"SpaceID": space, "InReach": space in REACH, "MLocations": [
        {"MLocationID": l["MLocationID"], "Capacity": l["Capacity"],
         "Items": [{"ItemID": i["ItemID"]} for i in DOMAIN["Items"] if i.get("Position") == l["MLocationID"]]}
        for l in s["MLocations"]]}


def handle(message):
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "method" not in message:
        send({"jsonrpc": "2.0", "id": message.get("id") if isinstance(message, dict) else None,
              "error": {"code": -32600, "message": "Invalid Request"}})
        return
    method, mid = message["method"], message.get("id")
    if mid is None:
        return  # a notification
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "params is not an object"}})
        return
    params = params or {}
    stateless = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "resources": {}},
                  "serverInfo": {"name": "peer-dac", "version": "0.1"}}
    elif method == "server/discover":
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "resources": {}},
                  "ttlMs": 0, "cacheScope": "private",
                  "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "peer-dac", "version": "0.1"}}}
    elif method == "tools/list":
        if "--other-tools" in FLAGS:
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("weather", "echo")]}
        else:
            result = {"tools": [] if "--no-tool" in FLAGS else [tool()]}
    elif method == "resources/list":
        result = {"resources": [{"uri": "dac://domain", "name": "domain", "mimeType": "application/json"}] + [
            {"uri": "dac://spaces/" + s["SpaceID"], "name": s["SpaceID"], "mimeType": "application/json"}
            for s in DOMAIN["Spaces"]]}
    elif method == "resources/read":
        uri = params.get("uri", "")
        body = DOMAIN if uri == "dac://domain" else space_resource(uri[len("dac://spaces/"):])
        result = {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(body)}]}
    elif method == "tools/call":
        if params.get("name") != "bkn_dac" or not isinstance(params.get("arguments"), dict):
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool or arguments not an object"}})
            return
        response, problems = answer(params["arguments"], stateless)
        if response is None:
            result = {"content": [{"type": "text", "text": problems}], "isError": True}
        else:
            text = json.dumps(response)
            result = {"content": [{"type": "text", "text": text}], "structuredContent": response}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
        return
    if stateless:
        result["resultType"] = "complete"
    send({"jsonrpc": "2.0", "id": mid, "result": result})


if __name__ == "__main__":
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        handle(message)
