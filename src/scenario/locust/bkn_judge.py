"""What a scenario step's answer must say, and whether it does: bkn-explorer's expectation
judge (src/scenario/expect.rs) and Request filling (src/protocol/message.rs fill_request,
src/scenario/run.rs captures) for the Locust workers, in plain Python (no import beyond the
standard library, so that the parity test runs it without Locust).

The rules are bkn-explorer's: `bkn-explorer load --export locust` writes each scenario as data
(scenarios.json) with its expectations already read and checked, their descriptions already
written, and this module only interprets them. `tests/locust.rs` runs this judge and the Rust
one on the same cases and asks for the same verdicts, so that the two stay in step.

Made by bkn-explorer; edit the scenarios, not this file (`load --export locust` writes it again).
"""

import json
import random
import re
import time

# An absent value (a JSON pointer that leads nowhere); None is JSON null.
MISSING = object()

# The largest TurnIndex (MCP-BINDING section 6: 2^53-1).
MAX_INDEX = (1 << 53) - 1


def compact(value):
    """A value as JSON text, written as bkn-explorer writes it (no spaces, UTF-8 as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def short(value):
    """A value as a report shows it: its JSON, cut after 200 characters."""
    text = compact(value)
    return text[:200] + "\u2026" if len(text) > 200 else text


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a, b):
    """Equal as JSON values, numbers compared as numbers (2 and 2.0 are the same)."""
    if is_number(a) and is_number(b):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and a == b


def identical(a, b):
    """Equal as serde_json's Value (a number's kind counts: 2 is not 2.0)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and identical(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def pointer_tokens(path):
    """A JSON pointer's reference tokens, unescaped (RFC 6901), or None when the text is not
    a pointer: read once, walked on every turn (walk)."""
    if path == "":
        return []
    if not path.startswith("/"):
        return None
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def walk(value, tokens):
    """The value the pointer_tokens lead to (as serde_json reads a pointer), or MISSING."""
    if tokens is None:
        return MISSING
    for token in tokens:
        if isinstance(value, dict):
            value = value.get(token, MISSING)
            if value is MISSING:
                return MISSING
        elif isinstance(value, list):
            if not token.isdigit() or (token.startswith("0") and len(token) != 1):
                return MISSING
            i = int(token)
            if i >= len(value):
                return MISSING
            value = value[i]
        else:
            return MISSING
    return value


def pointer(value, path):
    """The value at a JSON pointer (RFC 6901, as serde_json reads one), or MISSING."""
    return walk(value, pointer_tokens(path))


STEPS = pointer_tokens("/Feasibility/Steps")
OVERALL = pointer_tokens("/Feasibility/Overall")


def as_index(v):
    """A TurnIndex or Step read as an integer from 0 (2.0 included), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if 0 <= v <= MAX_INDEX else None
    if isinstance(v, float) and v.is_integer() and 0 <= v <= MAX_INDEX:
        return int(v)
    return None


class Matcher:
    """How a value is judged (expect.rs `Matcher`), read from the exported data."""

    __slots__ = ("kind", "arg", "text", "regex")

    def __init__(self, data):
        self.text = data["text"]
        self.regex = None
        for kind in ("equals", "one_of", "matches", "between", "present"):
            if kind in data:
                self.kind, self.arg = kind, data[kind]
                break
        else:
            raise ValueError("not a matcher: %r" % (data,))
        if self.kind == "matches":
            self.regex = re.compile(self.arg)

    def holds(self, actual):
        kind = self.kind
        if kind == "present":
            return self.arg == (actual is not MISSING)
        if actual is MISSING:
            return False
        if kind == "equals":
            return same(self.arg, actual)
        if kind == "one_of":
            return any(same(v, actual) for v in self.arg)
        if kind == "matches":
            text = actual if isinstance(actual, str) else compact(actual)
            return self.regex.search(text) is not None
        low, high = self.arg
        if not is_number(actual):
            return False
        return (low is None or actual >= low) and (high is None or actual <= high)


def first_difference(want, got, at):
    """The first place where two values differ (session/diff.rs `diff_values`), and how
    many places do: (pointer, wanted or MISSING, got or MISSING), count."""
    found = []

    def walk(a, b, p):
        if isinstance(a, dict) and isinstance(b, dict):
            for k, va in a.items():
                q = p + "/" + k.replace("~", "~0").replace("/", "~1")
                if k in b:
                    walk(va, b[k], q)
                else:
                    found.append((q, va, MISSING))
            for k, vb in b.items():
                if k not in a:
                    found.append((p + "/" + k.replace("~", "~0").replace("/", "~1"), MISSING, vb))
        elif isinstance(a, list) and isinstance(b, list):
            for i in range(max(len(a), len(b))):
                q = "%s/%d" % (p, i)
                if i < len(a) and i < len(b):
                    walk(a[i], b[i], q)
                else:
                    found.append((q, a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING))
        elif not identical(a, b):
            found.append((p, a, b))

    walk(want, got, at)
    return (found[0] if found else None), len(found)


def shown(v):
    return "(absent)" if v is MISSING else short(v)


def failure(expectation, pointer_, expected, actual):
    return {"expectation": expectation, "pointer": pointer_, "expected": expected, "actual": actual}


def describe_failure(f):
    """A failure in words, as bkn-explorer says it (expect.rs `Failure`'s Display)."""
    where = f["pointer"] if f["pointer"] is not None else f["expectation"]
    return "%s: expected %s, got %s" % (where, f["expected"], f["actual"])


class Turn:
    """What a turn's judge reads: the reply (`response`, `tool_error` or `error`), its text,
    the latency, and the findings the worker can make (how the Response travelled:
    MCP-BINDING section 1; the rest is judged on the recordings)."""

    __slots__ = ("reply", "text", "latency_ms", "findings")

    def __init__(self, reply, text="", latency_ms=0.0, findings=()):
        self.reply = reply
        self.text = text
        self.latency_ms = latency_ms
        self.findings = findings


def what_came(turn):
    if turn.reply == "response":
        return "a Response"
    if turn.reply == "tool_error":
        return "a tool error: " + (turn.text.split("\n", 1)[0] if turn.text else "")
    return "no reply: " + turn.text


def judge_one(e, turn, response):
    """One expectation against the turn: None when it holds, else a failure. Expectations
    on conformance beyond the binding (`findings`, `conforms: false`) are judged on the
    recordings, not here: None."""
    t = e["type"]
    d = e["describe"]
    if t == "conforms":
        if not turn.findings:
            return None
        return failure(d, turn.findings[0]["pointer"], "no finding",
                       "; ".join(f["display"] for f in turn.findings))
    if t in ("not_conforming", "findings"):
        return None
    if t == "tool_error":
        m = e["matcher"]
        if turn.reply == "tool_error":
            if m is None or m.holds(turn.text):
                return None
            return failure(d, None, "a tool error " + m.text, compact(turn.text))
        return failure(d, None, "a tool error", what_came(turn))
    if t == "latency":
        limit = e["max"]
        if turn.latency_ms > limit:
            return failure(d, None, "at most %s ms" % e["maxText"], "%.1f ms" % turn.latency_ms)
        return None
    if response is None:
        return failure(d, None, "a Response", what_came(turn))
    if t == "outcome":
        got = response.get("Outcome", MISSING) if isinstance(response, dict) else MISSING
        if isinstance(got, str) and got in e["wanted"]:
            return None
        return failure(d, "/Outcome", " or ".join(e["wanted"]), shown(got))
    if t == "value":
        m = e["matcher"]
        got = walk(response, e["tokens"])
        if m.holds(got):
            return None
        if m.kind == "equals" and isinstance(m.arg, (dict, list)) and got is not MISSING:
            first, count = first_difference(m.arg, got, e["pointer"])
            if first is not None:
                more = ""
                if count > 1:
                    more = " (and %d more difference%s)" % (count - 1, "" if count == 2 else "s")
                return failure(d, first[0], shown(first[1]), shown(first[2]) + more)
        return failure(d, e["pointer"], m.text, shown(got))
    if t == "steps":
        steps = walk(response, STEPS)
        got = []
        if isinstance(steps, list):
            for s in steps:
                status = s.get("PAStatus") if isinstance(s, dict) else None
                got.append(status if isinstance(status, str) else "?")
        wanted = e["wanted"]
        if got == wanted:
            return None
        at = next((i for i, (a, b) in enumerate(zip(wanted, got)) if a != b), min(len(wanted), len(got)))
        return failure(d, "/Feasibility/Steps/%d/PAStatus" % at,
                       "[%s]" % ", ".join(wanted), "[%s]" % ", ".join(got))
    if t == "overall":
        got = walk(response, OVERALL)
        if got == e["wanted"] and isinstance(got, str):
            return None
        return failure(d, "/Feasibility/Overall", e["wanted"], shown(got))
    if t == "commitment":
        listed = response.get("CommitmentStatus") if isinstance(response, dict) else None
        at, got = "/CommitmentStatus", MISSING
        if isinstance(listed, list):
            for i, c in enumerate(listed):
                if isinstance(c, dict) and c.get("CommitmentID") == e["id"] and isinstance(c.get("CommitmentID"), str):
                    at, got = "/CommitmentStatus/%d/Status" % i, c.get("Status", MISSING)
                    break
        if isinstance(got, str) and got == e["status"]:
            return None
        actual = "%s not listed" % e["id"] if got is MISSING else "%s %s" % (e["id"], short(got))
        return failure(d, at, "%s %s" % (e["id"], e["status"]), actual)
    raise ValueError("an expectation this judge does not know: %r" % (t,))


def judge(expectations, turn, response):
    """Every expectation of a step against its turn (expect.rs `judge`): a turn without a
    reply fails once, whatever it expects; without a Response, the expectations that read
    one fail together, once."""
    if turn.reply == "error":
        return [failure("an answer", None, "a Response or a tool error", "no reply: " + turn.text)]
    out = []
    missing_response = False
    for e in expectations:
        f = judge_one(e, turn, response)
        if f is None:
            continue
        needs_response = f["expected"] == "a Response"
        if needs_response and missing_response:
            continue
        missing_response = missing_response or needs_response
        out.append(f)
    return out


def read_expectations(data):
    """The exported expectations of a step, their matchers compiled and pointers read once."""
    out = []
    for e in data:
        e = dict(e)
        if e.get("matcher") is not None:
            e["matcher"] = Matcher(e["matcher"])
        if isinstance(e.get("pointer"), str):
            e["tokens"] = pointer_tokens(e["pointer"])
        out.append(e)
    return out


# --- Filling a Request ---------------------------------------------------------------------

def placeholder_fill(value, captured):
    """A value with each `{{name}}` replaced (run.rs `fill`): a string that is only a
    placeholder takes the captured value as it is (a number stays a number); in longer text
    it is written in."""
    if isinstance(value, str):
        if "{{" not in value:
            return value
        trimmed = value.strip()
        if trimmed.startswith("{{") and trimmed.endswith("}}"):
            name = trimmed[2:-2].strip()
            if "{{" not in name and name in captured:
                return captured[name]
        out = value
        for name, v in captured.items():
            out = out.replace("{{%s}}" % name, v if isinstance(v, str) else compact(v))
        return out
    if isinstance(value, list):
        return [placeholder_fill(v, captured) for v in value]
    if isinstance(value, dict):
        return {k: placeholder_fill(v, captured) for k, v in value.items()}
    return value


def fill_captures(request, captured):
    if not captured:
        return dict(request)
    return {k: placeholder_fill(v, captured) for k, v in request.items()}


def capture(captures, response, captured):
    """A step's captures taken from its Response."""
    if response is None:
        return
    for name, path in captures:
        v = pointer(response, path)
        if v is not MISSING:
            captured[name] = v


# The second now_rfc3339 wrote last, and its text up to the fraction: a worker asks for the time
# three times a turn, and strftime is the dear part.
_SECOND = [None, ""]


def now_rfc3339():
    """The current time as RFC 3339, UTC, three digits of fraction (message.rs `rfc3339`)."""
    now = time.time()
    second = int(now)
    if second != _SECOND[0]:
        _SECOND[1] = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        _SECOND[0] = second
    return "%s%03dZ" % (_SECOND[1], int((now - second) * 1000))


def new_uuid():
    """A random (version 4) UUID as text, as uuid.uuid4() makes it but from `random`'s
    generator rather than the system's (a QueryID needs to be unique, not secret; a forked
    worker's generator is seeded anew by `random` itself): a fifth of the cost."""
    n = random.getrandbits(128)
    n = (n & ~(0xC000 << 48) | 0x8000 << 48) & ~(0xF000 << 64) | 4 << 76
    h = "%032x" % n
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


# The common fields of a Request, in the order of Table 1 (message.rs `Common`).
COMMON = ("Header", "Mode", "MInstance", "UEnvironment", "SessionID", "QueryID", "QueryTime",
          "DialogID", "TurnIndex", "DataXMData")


def fill_request(given, header, dialog_id, turn_index, defaults):
    """The Request with the common fields it lacks (message.rs `fill_request`, Fill::Missing):
    the common ones first, in the order of Table 1, then DescrMetadata, then the rest as
    given; a DataXMData given without a DataID gets one."""
    fresh = {
        "Header": header,
        "Mode": "RQ",
        "MInstance": defaults["MInstance"],
        "UEnvironment": defaults["UEnvironment"],
        "SessionID": defaults["SessionID"],
        "QueryID": None,
        "QueryTime": None,
        "DialogID": dialog_id,
        "TurnIndex": turn_index,
        "DataXMData": None,
    }
    out = {}
    rest = dict(given)
    for key in COMMON:
        if key in rest:
            out[key] = rest.pop(key)
        elif key == "QueryID":
            out[key] = new_uuid()
        elif key == "QueryTime":
            out[key] = now_rfc3339()
        elif key == "DataXMData":
            out[key] = {"DataID": new_uuid(), "Source": [{"AIMID": defaults["AIMID"]}]}
        else:
            out[key] = fresh[key]
    if "DescrMetadata" in rest:
        out["DescrMetadata"] = rest.pop("DescrMetadata")
    out.update(rest)
    dem = out.get("DataXMData")
    if isinstance(dem, dict) and "DataID" not in dem:
        dem = dict(dem)
        dem["DataID"] = new_uuid()
        out["DataXMData"] = dem
    return out
