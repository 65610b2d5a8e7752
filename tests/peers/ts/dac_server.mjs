// A Domain Access (BKN-DAC) server of someone else's, written with the official MCP TypeScript
// SDK v2 (`@modelcontextprotocol/server`, pinned in package.json; tests/peers/install.sh installs
// it and Node 22 into $BKN_PEERS_HOME/ts, outside the repository). Run it with that Node 22.
//
// It is the TypeScript twin of ../py_dac_server.py: same tool `bkn_dac` (inputSchema with the
// Header const, an outputSchema), same `dac://domain` resource, same judging, over both MCP
// generations (MCP-BINDING.md sections 1-4):
//   - 2025-11-25: the `initialize` handshake; a dialogue lives as long as its MCP session (stdio:
//     the connection; HTTP: the Mcp-Session-Id of a sessionful transport), one per session;
//   - 2026-07-28: stateless; a dialogue is keyed by its DialogID.
//
//   usage: node dac_server.mjs [--transport stdio|http] [--port N] [--strict-2026]
//
// Over HTTP the first stdout line is `LISTENING http://127.0.0.1:PORT/mcp` (--port 0, the
// default: an ephemeral port). How the SDK is wired for each mode:
//   stdio            serveStdio(factory, { legacy: 'serve' | 'reject' })
//   http, strict     createMcpHandler(factory, { legacy: 'reject' }) for every request
//   http, dual       the same strict handler for 2026-07-28 requests; `isLegacyRequest` routes
//                    2025 requests to a sessionful WebStandardStreamableHTTPServerTransport per
//                    Mcp-Session-Id (the handler's own default, `legacy: 'stateless'`, would
//                    serve 2025 without sessions, so without a place for the dialogue's state)

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';

// The SDK lives in the peers' cache, not beside this file: load it from there.
const sdkHome = join(process.env.BKN_PEERS_HOME ?? join(homedir(), '.cache', 'bkn-peers'), 'ts');
const sdk = createRequire(join(sdkHome, 'package.json'));
const {
    McpServer, WebStandardStreamableHTTPServerTransport, createMcpHandler, fromJsonSchema,
    hostHeaderValidationResponse, isLegacyRequest, localhostAllowedHostnames
} = sdk('@modelcontextprotocol/server');
const { serveStdio } = sdk('@modelcontextprotocol/server/stdio');

const HEADER = 'PGM-KDA-V1.0';
const M_INSTANCE = 'MI:PublicSquare';
const U_ENVIRONMENT = 'UE:Square';
const AIM_ID = 'TS-DAC';
const IDLE_EXPIRY_MS = 30 * 60 * 1000;
const MAX_DIALOGUES = 1000;
const MAX_TURN = 2 ** 53 - 1;

// --- The tool's schemas (a self-contained, minimal form of src/protocol/schemas/) -------------
const STRINGS = { type: 'array', items: { type: 'string' } };
const INPUT_SCHEMA = {
    type: 'object',
    title: 'BKN-DAC Request (PGM-KDA-V1.0, Mode RQ)',
    required: ['Header', 'Mode', 'MInstance', 'UEnvironment', 'SessionID', 'QueryID', 'QueryTime',
        'DialogID', 'TurnIndex', 'DataXMData', 'Kind'],
    properties: {
        Header: { const: HEADER },
        Mode: { const: 'RQ' },
        MInstance: { type: 'string' },
        UEnvironment: { type: 'string' },
        SessionID: { type: 'string' },
        QueryID: { type: 'string' },
        QueryTime: { type: 'string' },
        DialogID: { type: 'string' },
        // No bounds here: the handler checks TurnIndex itself, with a `/TurnIndex:` message.
        TurnIndex: { type: 'number' },
        DataXMData: { type: 'object' },
        DescrMetadata: { type: 'string', maxLength: 2048 },
        Kind: { enum: ['semantic_grounding', 'affordances', 'constraints', 'behavioural_expectations',
            'feasibility', 'clarification', 'commitment'] },
        Question: { type: 'string' },
        Terms: { type: 'array', items: { type: 'object' } },
        EntityIDs: STRINGS,
        Space: { type: 'object' },
        ProcessActions: { type: 'array', items: { type: 'object', required: ['Step', 'Statement'],
            properties: { Step: { type: 'integer', minimum: 0 }, Statement: { type: 'string' } } } },
        Commitments: { type: 'array', items: { type: 'object', required: ['CommitmentID', 'Statement'],
            properties: { CommitmentID: { type: 'string' }, Statement: { type: 'string' } } } },
        ReleasedCommitmentIDs: STRINGS
    }
};
const OUTPUT_SCHEMA = {
    type: 'object',
    title: 'BKN-DAC Response (PGM-KDA-V1.0, Mode RS)',
    required: ['Header', 'Mode', 'MInstance', 'UEnvironment', 'SessionID', 'QueryID', 'QueryTime',
        'DialogID', 'TurnIndex', 'DataXMData', 'RequestID', 'Outcome'],
    properties: {
        Header: { const: HEADER },
        Mode: { const: 'RS' },
        RequestID: { type: 'string' },
        Outcome: { enum: ['answered', 'partially_answered', 'not_answered'] },
        Answer: { type: 'object' },
        CommitmentStatus: { type: 'array', items: { type: 'object' } },
        Feasibility: { type: 'object' }
    }
};
const DOMAIN = {
    MInstance: M_INSTANCE,
    UEnvironment: U_ENVIRONMENT,
    Label: 'a public square, as a TypeScript Domain Access sees it',
    Spaces: ['Space:Square'],
    Actions: ['MM-Add', 'MM-Move']
};

// --- Dialogues -----------------------------------------------------------------------------
// A Store holds dialogues by DialogID. Over 2026-07-28 there is one store for the whole process
// (`modern`); over 2025-11-25 each MCP session has its own, bound to its first DialogID.
class Store {
    constructor(sessionful) {
        this.sessionful = sessionful;
        this.dialogues = new Map(); // DialogID -> { lastTurn, commitments: Map(id -> {Statement, Status}), touched }
        this.bound = null; // the session's DialogID (2025-11-25 only)
    }
}
const modern = new Store(false);

const now = () => new Date().toISOString(); // RFC 3339, milliseconds, Z

/** `S P O` or `S not P O` as {subject, negated, predicate, object}; null if not a triple. */
function triple(statement) {
    let words = statement.split(/\s+/).filter(Boolean);
    const negated = words.length >= 4 && words[1] === 'not';
    if (negated) words = [words[0], ...words.slice(2)];
    if (words.length < 3) return null;
    return { subject: words[0], negated, predicate: words[1], object: words.slice(2).join(' ') };
}

/** The Request's non-conformities as `JSON-pointer: message` strings (MCP-BINDING 2.1). */
function violations(request, store) {
    const found = INPUT_SCHEMA.required.filter(n => !(n in request)).map(n => `/${n}: required property missing`);
    if ((request.Header ?? HEADER) !== HEADER) found.push(`/Header: must be ${HEADER}`);
    if ((request.Mode ?? 'RQ') !== 'RQ') found.push('/Mode: must be RQ in a Request');
    const turn = request.TurnIndex ?? 0;
    if (!Number.isInteger(turn) || turn < 0 || turn > MAX_TURN) {
        return [...found, '/TurnIndex: must be an integer from 0 to 2^53-1'];
    }
    const id = request.DialogID;
    if (typeof id !== 'string') return [...found, '/DialogID: must be a string'];
    if (store.bound !== null && store.bound !== id) {
        return [...found, `/DialogID: this MCP session's dialogue is ${store.bound}, not ${id}`];
    }
    const dialogue = store.dialogues.get(id);
    if (!dialogue && turn > 0 && !store.sessionful) {
        found.push(`/DialogID: dialogue ${id} is unknown to this server or has expired (TurnIndex ${turn} is not the start of a dialogue)`);
    } else if (dialogue && dialogue.lastTurn !== null && turn <= dialogue.lastTurn) {
        found.push(`/TurnIndex: ${turn} is not greater than the last accepted TurnIndex ${dialogue.lastTurn} of dialogue ${id}`);
    }
    return found;
}

/** The Request's dialogue, made on its first accepted Request; null at the limit. */
function dialogueFor(request, store) {
    const cutoff = Date.now() - IDLE_EXPIRY_MS;
    for (const [id, d] of store.dialogues) if (d.touched < cutoff) store.dialogues.delete(id);
    let dialogue = store.dialogues.get(request.DialogID);
    if (!dialogue) {
        if (store.dialogues.size >= MAX_DIALOGUES) return null;
        dialogue = { lastTurn: null, commitments: new Map(), touched: 0 };
        store.dialogues.set(request.DialogID, dialogue);
        if (store.sessionful) store.bound = request.DialogID;
    }
    dialogue.touched = Date.now();
    return dialogue;
}

/** The PA Status and Reason of one Process Action statement, against retained commitments. */
function judgeStep(statement, dialogue) {
    const words = statement.split(/\s+/).filter(Boolean);
    const preps = {};
    for (let i = 1; i < words.length - 1; i++) {
        if (['Nil', 'At', 'From', 'To', 'Of', 'With'].includes(words[i])) preps[words[i]] = words[i + 1];
    }
    const action = words[0] ?? '';
    const item = preps.Nil;
    const place = action === 'MM-Add' ? preps.At : action === 'MM-Move' ? preps.To : undefined;
    if (!item || (['MM-Add', 'MM-Move'].includes(action) && !place)) {
        return ['FaultyReq', 'the statement names no Item with Nil, or no place for it'];
    }
    for (const [id, c] of dialogue.commitments) {
        const t = c.Status === 'retained' ? triple(c.Statement) : null;
        if (!t || t.subject !== item || !['locatedAt', 'at'].includes(t.predicate) || !place) continue;
        if ((t.negated && t.object === place) || (!t.negated && t.object !== place)) {
            return ['Clash', `it would break commitment ${id} (${c.Statement})`];
        }
    }
    return ['Ack', null];
}

/** The BKN-DAC Response (Mode RS) to a conformant Request; updates the dialogue. */
function answer(request, dialogue) {
    const response = {
        Header: HEADER,
        Mode: 'RS',
        MInstance: request.MInstance,
        UEnvironment: request.UEnvironment,
        SessionID: request.SessionID,
        QueryID: randomUUID(),
        QueryTime: now(),
        DialogID: request.DialogID,
        TurnIndex: request.TurnIndex,
        DataXMData: { DataID: randomUUID(), Source: [{ AIMID: AIM_ID }] },
        RequestID: request.QueryID
    };
    if (request.MInstance !== M_INSTANCE) {
        response.Outcome = 'not_answered';
        response.Answer = { Text: `This Domain Access serves ${M_INSTANCE}.` };
    } else {
        const notes = [];
        for (const id of request.ReleasedCommitmentIDs ?? []) {
            const c = dialogue.commitments.get(id);
            if (c) c.Status = 'released';
        }
        for (const { CommitmentID, Statement } of request.Commitments ?? []) {
            const t = triple(Statement);
            const clash = t && [...dialogue.commitments].some(([oid, old]) => {
                const o = triple(old.Statement);
                return o && old.Status === 'retained' && oid !== CommitmentID && o.subject === t.subject
                    && o.predicate === t.predicate && o.object === t.object && o.negated !== t.negated;
            });
            dialogue.commitments.set(CommitmentID, { Statement, Status: clash ? 'conflicting' : 'retained' });
            notes.push(`${CommitmentID} ${clash ? 'conflicts' : 'retained'}`);
        }
        response.Outcome = 'answered';
        if (request.Kind === 'feasibility') {
            const steps = [...(request.ProcessActions ?? [])].sort((a, b) => a.Step - b.Step).map(pa => {
                const [status, reason] = judgeStep(pa.Statement, dialogue);
                return { Step: pa.Step, PAStatus: status, ...(reason ? { Reason: reason } : {}) };
            });
            if (steps.length > 0) {
                const acks = steps.filter(s => s.PAStatus === 'Ack').length;
                const overall = acks === steps.length ? 'feasible' : acks === 0 ? 'infeasible' : 'partially_feasible';
                response.Feasibility = { Steps: steps, Overall: overall };
                notes.push(`the plan is ${overall}`);
            } else {
                response.Outcome = 'not_answered';
                notes.push('a feasibility Request needs Process Actions');
            }
        }
        response.Answer = { Text: notes.join('; ') || 'Nothing to say about that here.' };
    }
    response.CommitmentStatus = [...dialogue.commitments].map(([id, c]) => ({ CommitmentID: id, Status: c.Status }));
    return response;
}

const toolError = text => ({ content: [{ type: 'text', text }], isError: true });

function bknDac(request, store) {
    const found = violations(request, store);
    if (found.length > 0) return toolError(found.join('\n'));
    const dialogue = dialogueFor(request, store);
    if (!dialogue) return toolError(`/DialogID: this server holds ${MAX_DIALOGUES} dialogues, its limit; it cannot start another`);
    const response = answer(request, dialogue);
    dialogue.lastTurn = request.TurnIndex;
    return { content: [{ type: 'text', text: JSON.stringify(response) }], structuredContent: response };
}

// --- The MCP server --------------------------------------------------------------------------
/** One McpServer instance. `era` is the SDK's: 'modern' instances share the DialogID store,
 * a 'legacy' instance serves one MCP session and gets a store of its own. */
function factory({ era }) {
    const store = era === 'legacy' ? new Store(true) : modern;
    const server = new McpServer({ name: 'ts-dac', version: '0.1' }, { capabilities: { tools: {}, resources: {} } });
    server.registerTool('bkn_dac', {
        description: 'Domain Access (BKN-DAC, PGM-KDA): a whole Request in, a whole Response out',
        inputSchema: fromJsonSchema(INPUT_SCHEMA),
        outputSchema: fromJsonSchema(OUTPUT_SCHEMA)
    }, async args => bknDac(args, store));
    server.registerResource('domain', 'dac://domain', { mimeType: 'application/json' }, async uri => ({
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(DOMAIN) }]
    }));
    return server;
}

// --- HTTP ------------------------------------------------------------------------------------
const jsonError = (status, code, message) => new Response(
    JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }),
    { status, headers: { 'content-type': 'application/json' } });

/** 2025-11-25 over HTTP: one sessionful transport (and McpServer) per Mcp-Session-Id. */
function sessionfulLegacy() {
    const sessions = new Map();
    return async request => {
        const id = request.headers.get('mcp-session-id');
        if (id) return sessions.get(id)?.handleRequest(request) ?? jsonError(404, -32001, 'Session not found');
        if (request.method !== 'POST') return jsonError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        // A new session: the transport answers its opening request (which must be `initialize`).
        const transport = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: sid => { sessions.set(sid, transport); },
            onsessionclosed: sid => { sessions.delete(sid); }
        });
        await factory({ era: 'legacy', requestInfo: request }).connect(transport);
        return transport.handleRequest(request);
    };
}

function mcpFetch(strict) {
    const modernHandler = createMcpHandler(factory, { legacy: 'reject' });
    const legacy = strict ? null : sessionfulLegacy();
    return async request => {
        const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames());
        if (refused) return refused;
        if (new URL(request.url).pathname !== '/mcp') return jsonError(404, -32601, 'Not found: the endpoint is /mcp');
        if (legacy && await isLegacyRequest(request)) return legacy(request);
        return modernHandler.fetch(request);
    };
}

/** node:http <-> fetch: the SDK's handlers take a web Request and give a web Response. */
function serveHttp(strict, port) {
    const handle = mcpFetch(strict);
    const server = http.createServer(async (req, res) => {
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        try {
            const hasBody = !['GET', 'HEAD', 'DELETE'].includes(req.method);
            const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
                method: req.method,
                headers: Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
                body: hasBody ? Readable.toWeb(req) : undefined,
                duplex: 'half',
                signal: abort.signal
            });
            const response = await handle(request);
            res.writeHead(response.status, [...response.headers].flat());
            if (response.body) for await (const chunk of response.body) res.write(chunk);
            res.end();
        } catch (error) {
            if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: String(error) } }));
        }
    });
    server.listen(port, '127.0.0.1', () => {
        console.log(`LISTENING http://127.0.0.1:${server.address().port}/mcp`);
    });
}

const { values: args } = parseArgs({
    options: {
        transport: { type: 'string', default: 'stdio' },
        port: { type: 'string', default: '0' },
        'strict-2026': { type: 'boolean', default: false }
    }
});
const strict = args['strict-2026'];
if (args.transport === 'stdio') {
    serveStdio(factory, { legacy: strict ? 'reject' : 'serve', onerror: e => console.error(`dac_server.mjs: ${e.message}`) });
} else if (args.transport === 'http') {
    serveHttp(strict, Number(args.port));
} else {
    console.error(`dac_server.mjs: --transport must be stdio or http, not ${args.transport}`);
    process.exit(2);
}
