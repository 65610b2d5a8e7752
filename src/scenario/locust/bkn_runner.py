"""bkn-explorer's scenarios as Locust users: each simulated user plays one scenario's dialogue
as `bkn-explorer test` does (steps in order, captures, `{{...}}` templates, the common fields
filled from what the server publishes, `new_session` steps, `retry`), over MCP Streamable HTTP
in either generation (2025-11-25 with its `initialize` and `Mcp-Session-Id`; 2026-07-28
stateless, its `_meta` envelope and `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers),
answers read as JSON or as server-sent events.

- Each step is a Locust request named by the step, of the Kind as its type: Locust's
  statistics are per step and per Kind. What the worker does besides (the handshake, reading
  what the server publishes, ending a session) is of type MCP.
- Each step's expectations are judged in the worker (bkn_judge.py): a failed one is a Locust
  failure with its reason. Whether the messages conform to the specification is judged
  afterwards on the recordings (`bkn-explorer validate`, `bkn-explorer load --report`).
- Each exchange is appended to a recording per worker process, a bkn-explorer session journal
  (JSON Lines, one write per line): `recordings/` beside this file, or $BKN_RECORDINGS.
- A turn's own work is kept small, so that a worker is not the bottleneck before the server:
  each step's Request and each tool's call are written once and a turn puts its own values
  into them (Written, Connection.make_call), the answer is read in one JSON pass, the
  recording line is one formatting and one write (benches/locust.rs measures a worker's CPU
  per turn beside a bare FastHttpUser's).

Options (Locust's command line, passed by the master to its workers): `--iterations N` (each
user goes N times through its scenario, then stops; the run ends when every user has),
`--mcp-protocol auto|2026-07-28|2025-11-25`, `--fresh` (a new dialogue each time through),
`--pause-after-loss SECONDS` (1 by default).
$BKN_TOKEN is sent as a bearer token. Locust's `--host` is the MCP endpoint's URL.

Made by bkn-explorer; edit the scenarios, not this file (`load --export locust` writes it again).
"""

import base64
import json
import logging
import os
import resource
import socket
import time
from urllib.parse import urlsplit

import gevent
from gevent.event import Event
from geventhttpclient.url import URL
from locust import FastHttpUser, constant, events, task
from locust.exception import StopUser
from locust.runners import WorkerRunner

import bkn_judge as judge

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "scenarios.json"), encoding="utf-8") as _f:
    PROJECT = json.load(_f)

STATELESS = "2026-07-28"
SESSION = "2025-11-25"
CLIENT_INFO = {"name": "bkn-explorer-locust", "version": PROJECT["version"]}
JOURNAL_FORMAT = PROJECT["journalFormat"]
log = logging.getLogger("bkn")

# The worker's own work, for the note at the end of its recording.
CPU_AT_START = [0.0]
TURNS = [0]


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --- Options ---------------------------------------------------------------------------------

@events.init_command_line_parser.add_listener
def _options(parser):
    parser.add_argument("--iterations", type=int, env_var="BKN_ITERATIONS", default=0,
                        help="bkn: times each user goes through its scenario, then stops "
                             "(0: until Locust stops)")
    parser.add_argument("--mcp-protocol", choices=["auto", STATELESS, SESSION],
                        env_var="BKN_PROTOCOL", default=PROJECT["protocol"],
                        help="bkn: the MCP generation to speak")
    parser.add_argument("--pause-after-loss", type=float, env_var="BKN_PAUSE_AFTER_LOSS",
                        default=1.0,
                        help="bkn: seconds a user waits after a lost connection, or a dialogue "
                             "that could not be opened, before its next pass")
    parser.add_argument("--fresh", action="store_true", env_var="BKN_FRESH",
                        default=PROJECT["fresh"],
                        help="bkn: a new dialogue each time through the scenario")


def option(environment, name, default):
    options = environment.parsed_options
    return getattr(options, name, default) if options is not None else default


# --- The end of a bounded run ------------------------------------------------------------------

class Finish:
    """Counts users that went through their iterations, on the master (or the only process):
    when every user has, the run ends as Locust's --run-time ends it."""

    done = 0
    ending = False


# Locust writes its CSV files each second, not once more at the end: a run ended at once
# would leave out up to a second of requests. Each worker sends its figures before it says a
# user is done; the run ends a tick after the last one, its files holding every request.
CSV_TICK = 1.2


def _user_done(environment, msg, **_):
    Finish.done += 1
    runner = environment.runner
    if Finish.done >= max(runner.target_user_count, 1) and not Finish.ending:
        Finish.ending = True
        gevent.spawn(_end, environment)


def _end(environment):
    gevent.sleep(CSV_TICK)
    runner = environment.runner
    headless = environment.parsed_options is not None and environment.parsed_options.headless
    runner.quit() if headless else runner.stop()


@events.init.add_listener
def _init(environment, **_):
    if not isinstance(environment.runner, WorkerRunner):
        environment.runner.register_message("bkn_done", _user_done)


@events.test_start.add_listener
def _test_start(environment, **_):
    Finish.done = 0
    Finish.ending = False
    CPU_AT_START[0] = cpu_seconds()
    TURNS[0] = 0


@events.test_stop.add_listener
def _test_stop(environment, **_):
    if Recorder.current is not None:
        used = cpu_seconds() - CPU_AT_START[0]
        per_turn = used / TURNS[0] * 1e6 if TURNS[0] else 0.0
        Recorder.current.note("worker %s: %d turns, %.3f s of CPU (%.0f us a turn)"
                              % (Recorder.current.name, TURNS[0], used, per_turn))
        Recorder.current.close("the run ended")
        Recorder.current = None


# --- The recording ----------------------------------------------------------------------------

class Recorder:
    """This process's recording: a bkn-explorer session journal, each line in one write, so
    that a crash of anything loses at most the line being written."""

    current = None

    def __init__(self, url):
        folder = os.environ.get("BKN_RECORDINGS") or os.path.join(HERE, "recordings")
        os.makedirs(folder, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.name = "%s-%d-%s" % (socket.gethostname(), os.getpid(), stamp)
        self.path = os.path.join(folder, self.name + ".jsonl")
        # A recording is never written over (O_EXCL).
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        # The server's name in the recording: its host and port, as the proxy names one.
        self.server = urlsplit(url).netloc or url
        self.dialogues = 0
        self.write({"format": JOURNAL_FORMAT, "name": "locust " + self.name,
                    "servers": {self.server: {"type": "http", "url": url}},
                    "environment": [], "started": judge.now_rfc3339()})

    @classmethod
    def get(cls, url):
        if cls.current is None:
            cls.current = Recorder(url)
        return cls.current

    def write(self, value):
        self.line(json.dumps(value, ensure_ascii=False, separators=(",", ":")))

    def line(self, text):
        data = (text + "\n").encode("utf-8")
        try:
            os.write(self.fd, data)
        except OSError as e:
            log.error("cannot write the recording %s: %s", self.path, e)

    def dialogue(self, interface, dialog_id, scenario):
        self.dialogues += 1
        self.write({"dialogue": {"id": self.dialogues, "server": self.server,
                                 "interface": interface, "dialogID": dialog_id,
                                 "scenario": scenario}})
        return self.dialogues

    def note(self, text):
        self.write({"note": text})

    def closed(self, dialogue, why):
        """A dialogue is over: readers drop its state."""
        self.write({"closed": {"dialogue": dialogue, "reason": why}})

    def close(self, why):
        self.write({"end": why})
        os.close(self.fd)


# --- What the server offers, learnt once per process -----------------------------------------

class Offer:
    """The generation the server speaks, its tool for each interface, and the common fields it
    publishes: learnt by the first user of this process, the others waiting for it."""

    ready = None
    generation = None
    tools = {}
    annotations = {}
    published = {}
    problem = None
    # Each step's Request as written on every turn (Written), by (scenario, step): the
    # common fields filled from what the server publishes.
    written = {}


def learn(user):
    """What the server offers, learnt by this user or waited for; a failed attempt is said
    (a failure of type MCP) and made again on the next pass, so that a server that comes back
    is used again."""
    while Offer.ready is not None and not Offer.ready.is_set():
        Offer.ready.wait()
    if Offer.ready is not None and Offer.problem is None:
        return
    Offer.ready = Event()
    Offer.problem = None
    try:
        _learn(user)
    except McpError as e:
        Offer.problem = e
    except Exception as e:  # noqa: BLE001 (a server's odd answer fails a pass, not the worker)
        Offer.problem = McpError("protocol", "cannot learn what the server offers: %s" % e)
    Offer.ready.set()
    if Offer.problem is not None:
        raise Offer.problem


def _learn(user):
    Offer.tools, Offer.annotations, Offer.published, Offer.written = {}, {}, {}, {}
    asked = option(user.environment, "mcp_protocol", PROJECT["protocol"])
    generation = asked
    if asked == "auto":
        try:
            result = Connection(user, STATELESS).request("server/discover", {}, "server/discover",
                                                         probe=True)
            spoken = result.get("supportedVersions") or [result.get("protocolVersion")]
            generation = STATELESS if STATELESS in spoken else SESSION
        except McpError:
            generation = SESSION
    Offer.generation = generation
    connection = Connection(user, generation)
    connection.open()
    try:
        listed = connection.request("tools/list", {}, "tools/list")
        for tool in listed.get("tools", []):
            schema = tool.get("inputSchema") or {}
            header = ((schema.get("properties") or {}).get("Header") or {}).get("const")
            for code, data in INTERFACES.items():
                if header == data["header"]:
                    Offer.tools[code] = tool["name"]
                    Offer.annotations[tool["name"]] = annotations(schema)
        for code, data in INTERFACES.items():
            for tool in listed.get("tools", []):
                if code not in Offer.tools and tool.get("name") == data["tool"]:
                    Offer.tools[code] = tool["name"]
                    Offer.annotations[tool["name"]] = annotations(tool.get("inputSchema") or {})
        try:
            uris = [r.get("uri") for r in connection.request("resources/list", {}, "resources/list").get("resources", [])]
        except McpError:
            uris = []
        # The interface's own resource first (MCP-BINDING section 1), as the explorer reads it.
        wanted = [d["resource"] for c, d in INTERFACES.items() if c in Offer.tools]
        wanted += [d["resource"] for c, d in INTERFACES.items() if c not in Offer.tools]
        for uri in wanted:
            if uri not in uris:
                continue
            contents = connection.request("resources/read", {"uri": uri}, "resources/read " + uri, name=uri)
            for c in contents.get("contents", []):
                try:
                    value = json.loads(c.get("text", ""))
                except ValueError:
                    continue
                if isinstance(value, dict) and isinstance(value.get("MInstance"), str):
                    Offer.published = {"MInstance": value["MInstance"], "source": uri}
                    if isinstance(value.get("UEnvironment"), str):
                        Offer.published["UEnvironment"] = value["UEnvironment"]
                    break
            if Offer.published:
                break
    finally:
        connection.close()


def annotations(schema):
    """A tool's x-mcp-header annotations (SEP-2243), as (path, header) pairs; a tool whose
    annotations bkn-explorer would hide (param_headers.rs) is refused here too."""
    found = []

    def walk(properties, path):
        if not isinstance(properties, dict):
            return
        for name, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            if "x-mcp-header" in sub:
                header = sub["x-mcp-header"]
                ok = isinstance(header, str) and header and all(
                    c.isascii() and (c.isalnum() or c in "!#$%&'*+-.^_`|~") for c in header)
                if not ok or sub.get("type") not in ("string", "integer", "boolean"):
                    raise McpError("protocol", "the tool's x-mcp-header annotation on %s is invalid "
                                   "(bkn-explorer tools says why)" % ".".join(path + [name]))
                found.append((path + [name], header))
            walk(sub.get("properties"), path + [name])

    walk(schema.get("properties"), [])
    return found


def header_value(text):
    """A value as a header carries it: as it is, or wrapped in Base64 (param_headers.rs)."""
    wrap = (text[:1] in (" ", "\t") or text[-1:] in (" ", "\t")
            or any(not (" " <= c <= "~") for c in text)
            or (text.startswith("=?base64?") and text.endswith("?=")))
    if wrap:
        return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="
    return text


INTERFACES = PROJECT["interfaces"]



# --- One MCP connection --------------------------------------------------------------------------

class McpError(Exception):
    """An exchange that got no usable answer: kind is a turn error's kind (timeout, gone,
    protocol, transport, too_large)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message
        # Already told to Locust as the failure of a request of type MCP.
        self.told = False

    def __repr__(self):
        # Locust's failure statistics show an error's repr: the reason, as it is.
        return self.message


def _reason(status, body):
    try:
        error = json.loads(body).get("error") or {}
        return "HTTP %d: %s (%s)" % (status, error.get("message"), error.get("code"))
    except (ValueError, AttributeError):
        return "HTTP %d: %s" % (status, body[:200].decode("utf-8", "replace"))


class Connection:
    """One dialogue's MCP connection: an MCP session (2025-11-25: `initialize`, its
    Mcp-Session-Id on every POST) or none (2026-07-28: each request carries its version and the
    client's capabilities in `_meta`, and names its method and tool in headers)."""

    def __init__(self, user, generation):
        self.user = user
        self.generation = generation
        self.session = None
        self.next_id = 0
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        self.headers.update(PROJECT["headers"])
        self.http, self.path = endpoint(user)
        if user.client.auth_header:
            # A user and password in --host, as Locust's session sends them.
            self.headers["Authorization"] = user.client.auth_header
        token = os.environ.get("BKN_TOKEN")
        if token:
            self.headers["Authorization"] = "Bearer " + token
        if generation == STATELESS:
            self.headers["MCP-Protocol-Version"] = STATELESS
            self.meta = {
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            }
        else:
            self.meta = None
        # Each tool's call, made once: the body's text up to the arguments (its two holes the
        # request's number) and the headers.
        self.calls = {}

    def open(self):
        """The handshake of a 2025-11-25 session; nothing over 2026-07-28."""
        if self.generation != SESSION:
            return
        self.request("initialize", {"protocolVersion": SESSION, "capabilities": {},
                                    "clientInfo": CLIENT_INFO}, "initialize")
        self.headers["MCP-Protocol-Version"] = SESSION
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, None,
                  "notifications/initialized", "notifications/initialized", None)

    def close(self):
        """Ends a 2025-11-25 session (DELETE), so that the server frees it at once."""
        if self.session is None:
            return
        started = time.perf_counter()
        exception = None
        try:
            r = self.http.request("DELETE", self.path, headers=self.headers)
            status, body = r.status_code, r.read()
            if status >= 400 and status != 405:
                exception = McpError("protocol", _reason(status, body))
        except Exception as e:  # noqa: BLE001 (the server may be gone)
            exception = McpError("transport", str(e) or type(e).__name__)
        fire(self.user, "MCP", "DELETE session", started, exception)
        self.session = None

    def request(self, method, params, label, name=None, probe=False):
        """A request of the connection's own (not a turn), timed as Locust's MCP type. A
        `probe` (server/discover, asked to learn the generation) that is refused is the
        answer sought, not a failure."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        if self.meta is not None:
            params["_meta"] = self.meta
        started = time.perf_counter()
        try:
            answer = self.post(message, self.next_id, method, label, name)
            if "error" in answer:
                raise McpError("protocol", "%s: %s (%s)" % (method, answer["error"].get("message"),
                                                          answer["error"].get("code")))
        except McpError as e:
            fire(self.user, "MCP", label, started, None if probe else e)
            e.told = True
            raise
        fire(self.user, "MCP", label, started, None)
        return answer.get("result") or {}

    def call_text(self, tool, arguments_text, arguments):
        """A turn's tools/call, its arguments written once (the Request as recorded)."""
        self.next_id += 1
        made = self.calls.get(tool)
        if made is None:
            made = self.calls[tool] = self.make_call(tool)
        head, headers = made
        body = head % (self.next_id, self.next_id) + arguments_text + "}}"
        if self.generation == STATELESS and Offer.annotations.get(tool):
            headers = dict(headers)
            for path, header in Offer.annotations[tool]:
                value = arguments
                for key in path:
                    value = value.get(key) if isinstance(value, dict) else None
                if isinstance(value, bool):
                    headers["Mcp-Param-" + header] = "true" if value else "false"
                elif isinstance(value, (int, float)):
                    headers["Mcp-Param-" + header] = judge.compact(value)
                elif isinstance(value, str):
                    headers["Mcp-Param-" + header] = header_value(value)
        return self.post_text(body.encode("utf-8"), "call-%d" % self.next_id, headers)

    def make_call(self, tool):
        """A tool's call as made on every turn: the body's text before the arguments, with
        two holes for the request's number (its id and progress token), and its headers
        (those of a 2025-11-25 session are the connection's, its session id included)."""
        meta = ""
        if self.meta is not None:
            meta = "," + judge.compact(self.meta)[1:-1]
        head = ('{"jsonrpc":"2.0","id":"call-%%d","method":"tools/call","params":{"_meta":'
                '{"progressToken":"call-%%d"%s},"name":%s,"arguments":'
                % (meta.replace("%", "%%"), judge.compact(tool).replace("%", "%%")))
        return head, self.headers_for("tools/call", tool)

    def headers_for(self, method, name):
        """The headers of a POST: over 2026-07-28 they name its method and tool (Mcp-Method,
        Mcp-Name)."""
        if self.generation != STATELESS:
            return self.headers
        headers = dict(self.headers)
        headers["Mcp-Method"] = method
        if name is not None:
            headers["Mcp-Name"] = header_value(name)
        return headers

    def post(self, message, want, method, label, name):
        return self.post_text(judge.compact(message).encode("utf-8"), want,
                              self.headers_for(method, name))

    def post_text(self, body, want, headers):
        """POSTs one JSON-RPC message; returns the answer to `want` (None: a notification,
        nothing awaited) read from a JSON body or an event stream."""
        try:
            r = self.http.request("POST", self.path, body=body, headers=headers)
        except (socket.timeout, gevent.Timeout) as e:
            raise McpError("timeout", "no answer in time: %s" % (str(e) or type(e).__name__))
        except Exception as e:  # noqa: BLE001 (refused, reset, not HTTP …)
            raise McpError("transport", "the server cannot be reached: %s" % (str(e) or type(e).__name__))
        status = r.status_code
        if status >= 400:
            try:
                body = r.read()
            except Exception:  # noqa: BLE001 (the reason is the status, then)
                body = b""
            if status == 404 and self.session is not None:
                raise McpError("gone", "the server no longer knows the MCP session (%s)" % _reason(status, body))
            raise McpError("protocol", _reason(status, body))
        if self.session is None and self.generation == SESSION:
            # The answer to `initialize`, the session's first POST.
            self.session = r.get("mcp-session-id")
            if self.session:
                self.headers["Mcp-Session-Id"] = self.session
        if want is None:
            # Read (a notification's 202 has no body), so that the connection goes back to
            # the pool clean.
            r.read()
            return None
        kind = r.get("content-type") or ""
        try:
            if kind.startswith("text/event-stream"):
                return self.events(r, want)
            return self.answer_in(json.loads(r.read()), want)
        except McpError:
            raise
        except (socket.timeout, gevent.Timeout) as e:
            raise McpError("timeout", "no answer in time: %s" % e)
        except Exception as e:  # noqa: BLE001 (a connection closed mid-answer, HTTP parse errors …)
            raise McpError("transport", "the answer could not be read: %s" % (str(e) or type(e).__name__))

    def answer_in(self, message, want):
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and m.get("id") == want and ("result" in m or "error" in m):
                return m
        raise McpError("protocol", "the server's reply holds no answer to the request")

    def events(self, r, want):
        """Reads server-sent events until the answer to `want` comes; a stream left open after
        it is closed rather than waited on."""
        raw = r
        data = []
        while True:
            line = raw.readline(b"\n")
            if not line:
                raise McpError("transport", "the event stream ended before the answer")
            line = line.rstrip(b"\r\n")
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" ") if line[5:6] == b" " else line[5:])
                continue
            if line:
                continue
            if not data:
                continue
            text = b"\n".join(data)
            data = []
            if not text.strip():
                continue
            message = json.loads(text)
            if isinstance(message, dict) and message.get("id") == want and ("result" in message or "error" in message):
                if not raw.message_complete:
                    finish(raw)
                return message
            if isinstance(message, dict) and message.get("method") == "ping" and "id" in message:
                # A server's ping during a turn is answered on a POST of its own.
                self.post_text(judge.compact({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode(),
                               None, self.headers_for("ping", None))


def endpoint(user):
    """The user's HTTP client for the server, and the path to POST to: the geventhttpclient
    client that Locust's FastHttpSession keeps for the host (its connection pool, timeouts and
    TLS settings), used directly. The session's wrapping of each request (a Response object
    and its context, headers merged again, the URL built) cost a fifth of Locust's own CPU a
    request here, and gave nothing: a turn is timed, judged and told to Locust by the runner
    (`fire`)."""
    url = URL(user.host)
    client = user.client.client.clientpool.get_client(url)
    return client, getattr(url, "quoted_uri", url.request_uri)


def finish(raw):
    """Waits a moment for the end of a stream whose answer came (it usually ends in the same
    read); one left open is closed, never given back to the pool half read."""
    try:
        with gevent.Timeout(0.005):
            raw.read()
        return
    except gevent.Timeout:
        pass
    pool, sock = getattr(raw, "_pool", None), getattr(raw, "_sock", None)
    raw._pool = raw._sock = None
    if pool is not None and sock is not None:
        pool.release_socket(sock)
    elif sock is not None:
        sock.close()


def fire(user, kind, name, started, exception, response_time=None):
    user.environment.events.request.fire(
        request_type=kind, name=name,
        response_time=response_time if response_time is not None else (time.perf_counter() - started) * 1000,
        response_length=0, exception=exception, context={})


# --- A scenario's dialogue ------------------------------------------------------------------------

class Written:
    """A step's Request as sent on every turn, written once: judge.fill_request's Request as
    JSON text with holes where each turn puts its own values (a new QueryID, QueryTime and
    DataID, the dialogue's DialogID and TurnIndex); what the step gives stays as given. A
    turn then costs a string formatting, not a Request filled and written anew. For steps
    without placeholders and tools without x-mcp-header annotations (those read the
    Request's values)."""

    MARK = "@@bkn-hole-%s@@"
    HOLES = ("QueryID", "QueryTime", "DialogID", "TurnIndex", "DataID")

    def __init__(self, text, holes, turn_index):
        self.text = text
        self.query_id = "QueryID" in holes
        self.query_time = "QueryTime" in holes
        self.data_id = "DataID" in holes
        # The TurnIndex the step gives, if it gives one (else it is the dialogue's).
        self.turn_index = turn_index

    @classmethod
    def make(cls, given, header, defaults):
        """The step's Request written, or None where it cannot be (a value of the step's
        holds what marks a hole)."""
        mark = {h: cls.MARK % h for h in cls.HOLES}
        if "@@bkn-hole-" in judge.compact(given) or any("@@bkn-hole-" in str(v) for v in defaults.values()):
            return None
        filled = judge.fill_request(given, header, mark["DialogID"], mark["TurnIndex"], defaults)
        # What fill_request made afresh becomes a hole; what was given is kept.
        if "QueryID" not in given:
            filled["QueryID"] = mark["QueryID"]
        if "QueryTime" not in given:
            filled["QueryTime"] = mark["QueryTime"]
        data = filled.get("DataXMData")
        given_data = given.get("DataXMData")
        if isinstance(data, dict) and not (isinstance(given_data, dict) and "DataID" in given_data):
            filled["DataXMData"] = dict(data, DataID=mark["DataID"])
        text = judge.compact(filled).replace("%", "%%")
        holes = []
        for h in cls.HOLES:
            quoted = '"%s"' % mark[h]
            if text.count(quoted) == 1:
                holes.append(h)
                text = text.replace(quoted, "%%(%s)d" % h if h == "TurnIndex" else '"%%(%s)s"' % h)
        if "@@bkn-hole-" in text:
            return None
        turn_index = None if "TurnIndex" in holes else judge.as_index(given.get("TurnIndex"))
        return cls(text, holes, turn_index)

    def fill(self, dialog_text, turn_index):
        values = {"DialogID": dialog_text, "TurnIndex": turn_index}
        if self.query_id:
            values["QueryID"] = judge.new_uuid()
        if self.query_time:
            values["QueryTime"] = judge.now_rfc3339()
        if self.data_id:
            values["DataID"] = judge.new_uuid()
        return self.text % values


class StepFailed(Exception):
    """A step's expectations that did not hold, said as bkn-explorer says them."""

    def __repr__(self):
        return self.args[0]


class Dialogue:
    """One dialogue: its connection, DialogID, next TurnIndex and last Response."""

    def __init__(self, user, scenario):
        self.user = user
        self.scenario = scenario
        self.interface = scenario["interface"]
        self.tool = Offer.tools.get(self.interface)
        if self.tool is None:
            raise McpError("protocol", "the server has no %s tool (no tool's inputSchema has Header %s and none is named %s)"
                           % (INTERFACES[self.interface]["name"], INTERFACES[self.interface]["header"],
                              INTERFACES[self.interface]["tool"]))
        self.defaults = dict(PROJECT["builtIn"])
        for key in ("MInstance", "UEnvironment"):
            if key in Offer.published:
                self.defaults[key] = Offer.published[key]
        self.defaults.update(scenario["overrides"])
        self.next_turn = 0
        self.record_id = None
        self.new_session = False
        self.connection = None
        self.dialog_id = None
        self.connect()
        self.record_id = Recorder.get(self.user.host).dialogue(self.interface, self.dialog_id, scenario["name"])

    def connect(self):
        connection = Connection(self.user, Offer.generation)
        connection.open()
        self.connection = connection
        # Over a 2025-11-25 HTTP session the DialogID is the Mcp-Session-Id (MCP-BINDING 3).
        self.dialog_id = connection.session or judge.new_uuid()
        # As it stands inside a JSON string.
        self.dialog_text = judge.compact(self.dialog_id)[1:-1]

    def reconnect(self):
        """A `new_session` step, as `test` does: a new MCP session (2025-11-25), the TurnIndex
        going on; over 2026-07-28 a new dialogue (a new DialogID) from TurnIndex 0, which is
        what a new session does to the server's state there (a later turn of a DialogID the
        server does not hold is refused: MCP-BINDING 3)."""
        self.connection.close()
        self.connect()
        if self.connection.generation == STATELESS:
            self.next_turn = 0
        self.new_session = True

    def close(self, why="the user ended it"):
        """Ends the dialogue: its session (DELETE, unless `why` says it is gone), and its
        place in the recording."""
        if self.connection is not None:
            connection, self.connection = self.connection, None
            try:
                connection.close()
            finally:
                Recorder.get(self.user.host).closed(self.record_id, why)

    def written(self, step):
        """The step's Request as this process writes it on every turn (made once)."""
        key = (self.scenario["name"], step["index"])
        written = Offer.written.get(key, False)
        if written is False:
            written = Offer.written[key] = Written.make(
                step["request"], INTERFACES[self.interface]["header"], self.defaults)
        return written

    def send(self, step, fields):
        """One turn: the Request filled, sent, timed, judged, recorded and told to Locust.
        Returns (failures, lost, response)."""
        written = None
        if not (step["asIs"] or step["placeholders"] or Offer.annotations.get(self.tool)):
            written = self.written(step)
        if written is not None:
            # The usual turn: the step's Request written once, this turn's values put in.
            request = None
            text = written.fill(self.dialog_text, self.next_turn)
        elif step["asIs"]:
            request = fields
            text = judge.compact(request)
        else:
            request = judge.fill_request(fields, INTERFACES[self.interface]["header"],
                                         self.dialog_id, self.next_turn, self.defaults)
            text = judge.compact(request)
        sent = judge.now_rfc3339()
        started = time.perf_counter()
        response = None
        findings = []
        reply_text = ""
        lost = False
        try:
            answer = self.connection.call_text(self.tool, text, request)
            latency = (time.perf_counter() - started) * 1000
            if "error" in answer:
                error = answer["error"]
                raise McpError("protocol", "the server answered with error %s: %s"
                               % (error.get("code"), error.get("message")))
            result = answer.get("result") or {}
            if result.get("resultType") == "input_required" or "task" in result:
                raise McpError("protocol", "the server asked for input or made the turn a task; "
                                           "Locust users do not answer (run the scenario with "
                                           "`bkn-explorer test`)")
            texts = [c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text"]
            block = texts[0] if len(texts) == 1 else "\n".join(texts)
            if result.get("isError") is True:
                reply, reply_text = "tool_error", block
                record = '"toolError":' + judge.compact(block)
            else:
                structured = result.get("structuredContent")
                if structured is not None:
                    raw = judge.compact(structured)
                    if raw != block:
                        try:
                            differs = not judge.identical(json.loads(block), structured)
                        except ValueError:
                            differs = True
                        if differs:
                            findings.append(BINDING["textBlock"])
                    response = structured
                else:
                    findings.append(BINDING["structuredContent"])
                    try:
                        response = json.loads(block)
                    except ValueError:
                        raise McpError("protocol", "the result has neither structuredContent nor a text block with JSON")
                    raw = judge.compact(response)
                reply = "response"
                record = '"response":' + raw
            received = '"received":"%s",' % judge.now_rfc3339()
        except McpError as e:
            latency = (time.perf_counter() - started) * 1000
            reply, reply_text = "error", e.message
            lost = e.kind in ("gone", "transport", "cancelled")
            record = '"error":' + judge.compact({"kind": e.kind, "message": e.message})
            answered = e.kind in ("protocol", "too_large")
            received = '"received":"%s",' % judge.now_rfc3339() if answered else ""
        latency = round(latency, 3)
        turn = judge.Turn(reply, reply_text, latency, findings)
        failures = judge.judge(step["expect"], turn, response)
        # The next TurnIndex follows the last Request the server may have taken.
        if reply != "tool_error":
            if written is not None:
                t = self.next_turn if written.turn_index is None else written.turn_index
            else:
                t = judge.as_index(request.get("TurnIndex")) if isinstance(request, dict) else None
            if t is not None:
                self.next_turn = max(self.next_turn, t + 1)
        found = ""
        if findings:
            found = '"findings":[%s],' % ",".join(judge.compact(f["record"]) for f in findings)
        new_session = ',"newSession":true' if self.new_session else ""
        self.new_session = False
        # Recorded and counted together, with no pause between (a worker stopped mid-run
        # stops its users at a pause): what Locust counted is what the recordings hold.
        Recorder.get(self.user.host).line(
            '{"turn":{"dialogue":%d,"step":%s,"record":{"request":%s,%s,%s"sent":"%s",%s"latencyMs":%s%s}}}'
            % (self.record_id, step["ref"], text, record, found, sent, received, latency, new_session))
        TURNS[0] += 1
        exception = None
        if reply == "error":
            exception = McpError(lost and "transport" or "protocol", reply_text)
        elif failures:
            exception = StepFailed("; ".join(judge.describe_failure(f) for f in failures))
        kind = step["kind"] or (request.get("Kind") if isinstance(request, dict) and isinstance(request.get("Kind"), str) else "?")
        fire(self.user, kind, step["name"], started, exception, response_time=latency)
        return failures, lost, response


BINDING = PROJECT["binding"]


def prepare(scenario):
    for index, step in enumerate(scenario["steps"]):
        step["index"] = index
        step["expect"] = judge.read_expectations(step["expect"])
        step["ref"] = judge.compact(step["ref"])
        # Whether captures are written into its Request (`{{name}}`): else it is sent as given.
        step["placeholders"] = "{{" in judge.compact(step["request"])
    return scenario


SCENARIOS = {s["name"]: prepare(s) for s in PROJECT["scenarios"]}


class ScenarioUser(FastHttpUser):
    """A simulated Basic Knowledge: one dialogue of its scenario, again and again (with
    --fresh, a new dialogue each time)."""

    abstract = True
    scenario = None
    wait_time = constant(0)
    network_timeout = PROJECT["timeout"]
    connection_timeout = PROJECT["timeout"]
    host = PROJECT["host"]

    def on_start(self):
        self.plan = SCENARIOS[self.scenario]
        self.dialogue = None
        self.passes = 0
        self.iterations = option(self.environment, "iterations", 0)
        self.fresh = option(self.environment, "fresh", PROJECT["fresh"])
        # After a lost connection or a dialogue that could not be opened, a user waits this
        # long before its next pass (a second by default, as bkn-explorer waits before
        # resuming a stream): a server that died costs a failure a second per user, not a
        # loop as fast as refusals come.
        self.pause = option(self.environment, "pause_after_loss", 1.0)

    def on_stop(self):
        if self.dialogue is not None:
            dialogue, self.dialogue = self.dialogue, None
            try:
                dialogue.close()
            except Exception:  # noqa: BLE001 (the server may be gone: said by the DELETE's failure)
                pass

    @task
    def go_through(self):
        """The scenario once, its steps in order in one dialogue, as `test` plays it."""
        try:
            self.play()
        except Exception as e:  # noqa: BLE001 (a user never dies of an answer it did not expect)
            log.exception("bkn: a pass of %s ended early", self.scenario)
            fire(self, "MCP", "a pass ended early", time.perf_counter(),
                 McpError("protocol", "%s: %s" % (type(e).__name__, e)), response_time=0)
            if self.dialogue is not None:
                dialogue, self.dialogue = self.dialogue, None
                try:
                    dialogue.close("a pass ended early: %s" % e)
                except Exception:  # noqa: BLE001
                    pass
            gevent.sleep(self.pause)
        finally:
            self.passes += 1
        if self.iterations and self.passes >= self.iterations:
            self.on_stop()
            runner = self.environment.runner
            if isinstance(runner, WorkerRunner):
                # This worker's figures first: the master reads its messages in order.
                runner._send_stats()
            runner.send_message("bkn_done", None)
            raise StopUser()

    def play(self):
        try:
            learn(self)
            if self.dialogue is None or self.fresh:
                if self.dialogue is not None:
                    dialogue, self.dialogue = self.dialogue, None
                    dialogue.close("a new dialogue for the next time through (--fresh)")
                self.dialogue = Dialogue(self, self.plan)
        except McpError as e:
            # The dialogue could not be opened: a failure of type MCP (the steps are not sent,
            # so neither counted nor recorded), and a pause before the next pass tries again.
            if not e.told:
                fire(self, "MCP", "open a dialogue", time.perf_counter(), e, response_time=0)
            self.dialogue = None
            gevent.sleep(self.pause)
            return
        captured = {}
        dialogue = self.dialogue
        for index, step in enumerate(self.plan["steps"]):
            if step["newSession"] and index > 0:
                try:
                    dialogue.reconnect()
                except McpError as e:
                    if not e.told:
                        fire(self, "MCP", "new session", time.perf_counter(), e, response_time=0)
                    self.dialogue = None
                    gevent.sleep(self.pause)
                    return
            fields = judge.fill_captures(step["request"], captured) if step["placeholders"] else step["request"]
            tries = 1 + (step["retry"]["times"] if step["retry"] else 0)
            attempt = 0
            while True:
                attempt += 1
                failures, lost, response = dialogue.send(step, fields)
                if not failures or attempt >= tries or lost:
                    break
                gevent.sleep(step["retry"]["delayMs"] / 1000.0)
            judge.capture(step["capture"], response, captured)
            if lost:
                # The connection is gone: the rest of this pass is not sent; the next pass
                # opens a new dialogue.
                dialogue.connection.session = None
                dialogue.close("the connection is gone")
                self.dialogue = None
                gevent.sleep(self.pause)
                return
