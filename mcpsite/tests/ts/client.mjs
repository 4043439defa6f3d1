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

// A form-elicitation capability and an answer for every elicitation/create: args.answer is "accept" (confirm: true),
// "decline" or "cancel". Each question is emitted as an event.
function answering(client, answer) {
  client.setRequestHandler('elicitation/create', async (request) => {
    emit({ event: 'asked', message: request.params.message });
    return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: answer };
  });
}

// The first round of a multi round-trip call, by hand: the input_required result with its state.
async function firstRound(client) {
  const asked = await client.callTool({ name: args.name, arguments: args.arguments }, { allowInputRequired: true });
  if (asked.resultType !== 'input_required') throw new Error(`expected input_required, got ${JSON.stringify(asked)}`);
  return asked;
}

function accepted(asked) {
  const key = Object.keys(asked.inputRequests)[0];
  return { [key]: { action: 'accept', content: { confirm: true } } };
}

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error: { name: error?.name, message: error?.message, code: error?.code, data: error?.data } };
  }
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

  // tools/call of args.name with args.arguments, answering every confirmation with args.answer (the client's own
  // multi round-trip driver on 2026-07-28).
  async call_answering() {
    const client = await connect({ capabilities: { elicitation: { form: {} } } });
    answering(client, args.answer);
    const result = await client.callTool({ name: args.name, arguments: args.arguments });
    await client.close();
    return result;
  },

  // The rounds by hand: the question, then the same accepted retry twice (a client retrying after a lost reply).
  async accept_twice() {
    const client = await connect({ capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false } });
    const asked = await firstRound(client);
    const retry = { name: args.name, arguments: args.arguments, inputResponses: accepted(asked), requestState: asked.requestState };
    const first = await outcome(client.callTool(retry));
    const second = await outcome(client.callTool(retry));
    await client.close();
    return { first, second };
  },

  // The accepted retry with a requestState changed in transit (one character of it): refused.
  async forged_state() {
    const client = await connect({ capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false } });
    const asked = await firstRound(client);
    const state = asked.requestState;
    const middle = Math.floor(state.length / 2);
    const forged = state.slice(0, middle) + (state[middle] === 'A' ? 'B' : 'A') + state.slice(middle + 1);
    const retry = { name: args.name, arguments: args.arguments, inputResponses: accepted(asked), requestState: forged };
    const answer = await outcome(client.callTool(retry));
    await client.close();
    return answer;
  },

  // A listen stream for args.uri: emits {"event": "listening"} once acknowledged, then {"event": "updated", uri}
  // for each resources/updated notification, and ends after args.updates of them.
  async listen() {
    const client = await connect();
    let seen = 0;
    let finish;
    const enough = new Promise((resolve) => (finish = resolve));
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      emit({ event: 'updated', uri: notification.params.uri });
      if (++seen >= (args.updates ?? 1)) finish();
    });
    const subscription = await client.listen({ resourceSubscriptions: [args.uri] });
    emit({ event: 'listening', honored: subscription.honoredFilter });
    await enough;
    await subscription.close();
    await client.close();
    return { updates: seen };
  },

  // tools/call of args.name, aborted (its request's stream closed: 2026-07-28's cancellation) when the test writes
  // "abort" on stdin; "finish" lets it run to its end. Emits {"event": "calling"} once the request is sent.
  async abortable_call() {
    const client = await connect();
    const controller = new AbortController();
    const call = outcome(client.callTool({ name: args.name, arguments: args.arguments }, { signal: controller.signal }));
    emit({ event: 'calling' });
    const order = await new Promise((resolve) => process.stdin.once('data', (data) => resolve(String(data).trim())));
    if (order === 'abort') controller.abort();
    const answer = await call;
    process.stdin.destroy();
    await client.close();
    return { aborted: controller.signal.aborted, answer };
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
