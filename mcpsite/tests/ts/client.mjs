// Drives the official TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in scripts/node-tools) against
// an MCP server, for mcpsite/tests/test_ts_client.py. Usage: NODE_TOOLS=<dir with node_modules> node client.mjs CASE
// URL KEY [JSON arguments]; prints one JSON line per event ({"event": ...}) and a last line {"done": <the case's
// result>} or {"error": ...}. Each case is a small async function below: add one per behaviour a test needs.
import { createRequire } from 'node:module';
import path from 'node:path';

// The client lives in the tools directory (.tools/), not beside this script.
const require = createRequire(path.join(process.env.NODE_TOOLS, 'node_modules', 'noop.js'));
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');

const [caseName, url, key, rawArgs] = process.argv.slice(2);
const args = rawArgs ? JSON.parse(rawArgs) : {};
const emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');

async function connect(options = {}) {
  const client = new Client({ name: 'mcpsite-ts-test', version: '1.0.0' }, {
    versionNegotiation: { mode: 'auto' },
    ...options,
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  return client;
}

const cases = {
  // tools/list, then tools/call of args.name with args.arguments, on the negotiated revision.
  async list_and_call() {
    const client = await connect();
    const tools = await client.listTools();
    const result = await client.callTool({ name: args.name, arguments: args.arguments ?? {} });
    const protocolVersion = client.getNegotiatedProtocolVersion();
    await client.close();
    return { protocolVersion, tools: tools.tools.map((t) => t.name), result };
  },
};

try {
  const run = cases[caseName];
  if (!run) throw new Error(`unknown case ${caseName}; known: ${Object.keys(cases).join(', ')}`);
  emit({ done: await run() });
} catch (error) {
  emit({ error: { name: error?.name, message: error?.message, code: error?.code, data: error?.data } });
  process.exitCode = 1;
}
