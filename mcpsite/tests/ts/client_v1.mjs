// Drives the TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.x, pinned in scripts/node-tools: protocol
// 2025-11-25, `initialize` and a session) against an MCP server, for mcpsite/tests/test_balanced.py. Usage as
// client.mjs: NODE_TOOLS=<dir with node_modules> node client_v1.mjs CASE URL KEY [JSON arguments]; prints one JSON
// line per event ({"event": ...}) and a last line {"done": <the case's result>} or {"error": ...}.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_TOOLS, 'node_modules', 'noop.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema, ResourceUpdatedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const [caseName, url, key, rawArgs] = process.argv.slice(2);
const args = rawArgs ? JSON.parse(rawArgs) : {};
const emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const stdinLine = () => new Promise((resolve) => process.stdin.once('data', (data) => resolve(String(data).trim())));

// An MCP Apps host's declaration (SEP-1865), in `initialize`'s capabilities.
const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

async function connect(capabilities = {}) {
  const client = new Client({ name: 'mcpsite-ts-v1-test', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

// Ends the session (DELETE), so the key's sessions do not pile up on the servers, then closes the client.
async function finish({ client, transport }) {
  await transport.terminateSession();
  await client.close();
}

function failure(error) {
  return { name: error?.name, message: error?.message, code: error?.code, data: error?.data, cause: String(error?.cause) };
}

const cases = {
  // tools/call of args.name with args.arguments, answering every elicitation/create with args.answer ("accept" with
  // confirm: true, "decline" or "cancel"); returns the questions asked and the result.
  async call_answering() {
    const connection = await connect({ elicitation: { form: {} } });
    const asked = [];
    connection.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return args.answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: args.answer };
    });
    const result = await connection.client.callTool({ name: args.name, arguments: args.arguments });
    await finish(connection);
    return { asked, result, protocolVersion: connection.transport.protocolVersion };
  },

  // resources/subscribe to args.uri: emits {"event": "subscribed", sessionId} once subscribed, then
  // {"event": "updated", uri} for the first resources/updated notification, and ends.
  async subscribe() {
    const connection = await connect();
    let heard;
    const updated = new Promise((resolve) => (heard = resolve));
    connection.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      emit({ event: 'updated', uri: notification.params.uri });
      heard();
    });
    await connection.client.subscribeResource({ uri: args.uri });
    emit({ event: 'subscribed', sessionId: connection.transport.sessionId });
    await updated;
    await finish(connection);
    return { updates: 1 };
  },

  // tools/call of args.name with a progress handler: returns the progress notifications and the result.
  async progress() {
    const connection = await connect();
    const reports = [];
    const result = await connection.client.callTool({ name: args.name, arguments: args.arguments }, undefined, {
      onprogress: ({ progress, total }) => reports.push([progress, total]),
    });
    await finish(connection);
    return { reports, result };
  },

  // tools/call of args.name, aborted (the client sends notifications/cancelled) when the test writes "abort" on
  // stdin; "finish" lets it run to its end. Emits {"event": "calling"} once the request is sent.
  async abortable_call() {
    const connection = await connect();
    const controller = new AbortController();
    const call = connection.client
      .callTool({ name: args.name, arguments: args.arguments }, undefined, { signal: controller.signal, timeout: 120000 })
      .then((result) => ({ result }), (error) => ({ error: failure(error) }));
    emit({ event: 'calling' });
    if ((await stdinLine()) === 'abort') controller.abort('the test aborted');
    const answer = await call;
    process.stdin.destroy();
    await finish(connection);
    return { aborted: controller.signal.aborted, answer };
  },

  // tools/list as a host that declares MCP Apps (args.apps) or not: each tool's name and _meta.
  async list_tools() {
    const connection = await connect(args.apps ? APPS : {});
    const { tools } = await connection.client.listTools();
    await finish(connection);
    return { tools: Object.fromEntries(tools.map((tool) => [tool.name, tool._meta ?? null])) };
  },

  // A session that loses its process: tools/list, {"event": "ready", sessionId}, and on "next" (written once the
  // test has stopped the session's process) tools/list again, which fails with the server's answer (404: unknown
  // session); then a new session (a new initialize) lists the tools.
  async survive_a_lost_process() {
    const first = await connect();
    const before = (await first.client.listTools()).tools.length;
    emit({ event: 'ready', sessionId: first.transport.sessionId });
    await stdinLine();
    process.stdin.destroy();
    let lost = null;
    try {
      await first.client.listTools();
    } catch (error) {
      lost = failure(error);
    }
    await first.client.close();
    const second = await connect();
    const after = (await second.client.listTools()).tools.length;
    const sessionId = second.transport.sessionId;
    await finish(second);
    return { before, lost, after, firstSessionId: first.transport.sessionId, sessionId };
  },
};

try {
  const run = cases[caseName];
  if (!run) throw new Error(`unknown case ${caseName}; known: ${Object.keys(cases).join(', ')}`);
  emit({ done: await run() });
} catch (error) {
  emit({ error: failure(error) });
  process.exitCode = 1;
}
