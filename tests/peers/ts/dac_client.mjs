// A BKN-DAC client of someone else's, written with the official MCP TypeScript SDK v2
// (`@modelcontextprotocol/client`, pinned in package.json; tests/peers/install.sh installs it and
// Node 22 into $BKN_PEERS_HOME/ts, outside the repository). Run it with that Node 22.
//
// The TypeScript twin of ../py_dac_client.py: one three-turn dialogue, then ONE JSON line
//   {"protocol": "<negotiated version>", "turns": [{"isError", "structuredContent", "text"}, ...]}
// (a turn answered with a JSON-RPC error is `{"error": {code, message, data}}`):
//   turn 0  Kind commitment: retain c1 "Avatar#7 not locatedAt MLoc:Square.Stage"
//   turn 1  Kind feasibility: "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage",
//           which breaks c1: a server that kept the dialogue's state answers PA Status Clash
//   turn 2  the same Request with TurnIndex 1 again: must be refused with a tool error
//
//   usage: node dac_client.mjs [--protocol auto|2026-07-28|2025-11-25] --url URL
//          node dac_client.mjs [--protocol ...] [--transport stdio] -- COMMAND [ARG ...]
//
// --protocol maps onto the SDK's `versionNegotiation.mode`: auto -> 'auto' (a `server/discover`
// probe, falling back to `initialize`; note the SDK's own default, without the option, is
// 'legacy'), 2026-07-28 -> { pin: '2026-07-28' } (no fallback), 2025-11-25 -> 'legacy'.

import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

// The SDK lives in the peers' cache, not beside this file: load it from there.
const sdkHome = join(process.env.BKN_PEERS_HOME ?? join(homedir(), '.cache', 'bkn-peers'), 'ts');
const sdk = createRequire(join(sdkHome, 'package.json'));
const { Client, ProtocolError, StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/client');
const { StdioClientTransport } = sdk('@modelcontextprotocol/client/stdio');

const HEADER = 'PGM-KDA-V1.0';
const COMMITMENT = { CommitmentID: 'c1', Statement: 'Avatar#7 not locatedAt MLoc:Square.Stage' };
const BREAKING_STEP = 'MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage';

/** The BKN-DAC tool: by the Header const of its inputSchema first, by name otherwise. */
function findDacTool(tools) {
    const byConst = tools.find(t => t.inputSchema?.properties?.Header?.const === HEADER);
    if (byConst) return byConst.name;
    if (tools.some(t => t.name === 'bkn_dac')) return 'bkn_dac';
    throw new Error('the server offers no BKN-DAC tool');
}

/** MInstance and UEnvironment from `dac://domain`, or the reference domain's. */
async function identity(client) {
    const found = { MInstance: 'MI:PublicSquare', UEnvironment: 'UE:Square' };
    try {
        const { resources } = await client.listResources();
        if (resources.some(r => r.uri === 'dac://domain')) {
            const domain = JSON.parse((await client.readResource({ uri: 'dac://domain' })).contents[0].text);
            for (const k of Object.keys(found)) if (typeof domain[k] === 'string') found[k] = domain[k];
        }
    } catch (error) {
        console.error(`dac_client.mjs: dac://domain not read (${error.message}); using ${JSON.stringify(found)}`);
    }
    return found;
}

/** A complete BKN-DAC Request (Mode RQ). */
const request = (ident, dialogId, turn, kind, rest) => ({
    Header: HEADER, Mode: 'RQ', ...ident, SessionID: 'AUS:1',
    QueryID: randomUUID(), QueryTime: new Date().toISOString(), DialogID: dialogId, TurnIndex: turn,
    DataXMData: { DataID: randomUUID(), Source: [{ AIMID: 'TS-CLIENT' }] },
    Kind: kind, ...rest
});

/** One turn, as the line shows it. */
async function call(client, tool, args) {
    try {
        const result = await client.callTool({ name: tool, arguments: args });
        const text = result.content.filter(c => c.type === 'text').map(c => c.text).join('\n');
        return { isError: Boolean(result.isError), structuredContent: result.structuredContent ?? null, text };
    } catch (error) {
        if (!(error instanceof ProtocolError)) throw error;
        return { error: { code: error.code, message: error.message, data: error.data ?? null } };
    }
}

async function run(transport, protocol) {
    const mode = { auto: 'auto', '2026-07-28': { pin: '2026-07-28' }, '2025-11-25': 'legacy' }[protocol];
    const client = new Client({ name: 'ts-dac-client', version: '0.1' }, { versionNegotiation: { mode } });
    await client.connect(transport);
    try {
        const tool = findDacTool((await client.listTools()).tools);
        const ident = await identity(client);
        const dialogId = randomUUID();
        const plan = { ProcessActions: [{ Step: 0, Statement: BREAKING_STEP }] };
        const turns = [
            await call(client, tool, request(ident, dialogId, 0, 'commitment',
                { Question: "Keep Ana's avatar off the stage.", Commitments: [COMMITMENT] })),
            await call(client, tool, request(ident, dialogId, 1, 'feasibility',
                { Question: "Can Ana's avatar go on stage?", ...plan })),
            await call(client, tool, request(ident, dialogId, 1, 'feasibility',
                { Question: 'And again, same turn?', ...plan }))
        ];
        return { protocol: client.getNegotiatedProtocolVersion(), turns };
    } finally {
        await client.close();
    }
}

// Everything after `--` is the stdio server's command.
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const command = dash >= 0 ? argv.slice(dash + 1) : [];
const { values: opts } = parseArgs({
    args: dash >= 0 ? argv.slice(0, dash) : argv,
    options: {
        transport: { type: 'string' },
        url: { type: 'string' },
        protocol: { type: 'string', default: 'auto' }
    }
});
const usage = message => { console.error(`dac_client.mjs: ${message}`); process.exit(2); };
if (!['auto', '2026-07-28', '2025-11-25'].includes(opts.protocol)) usage('--protocol must be auto, 2026-07-28 or 2025-11-25');
const transportName = opts.transport ?? (opts.url ? 'http' : 'stdio');
let transport;
if (transportName === 'http') {
    if (!opts.url) usage('--transport http needs --url URL');
    transport = new StreamableHTTPClientTransport(new URL(opts.url));
} else if (transportName === 'stdio') {
    if (command.length === 0) usage("stdio needs the server's command after --");
    transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'inherit' });
} else {
    usage('--transport must be stdio or http');
}
try {
    console.log(JSON.stringify(await run(transport, opts.protocol)));
} catch (error) {
    // A connection or negotiation failure: say it, print no line.
    const detail = error.code !== undefined ? ` (code ${error.code}, data ${JSON.stringify(error.data ?? null)})` : '';
    console.error(`dac_client.mjs: ${error.name}: ${error.message}${detail}`);
    process.exitCode = 1;
}
