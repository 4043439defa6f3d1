// A minimal MCP Apps host for the browser tests (mcpsite/tests/appshost.py): the official TypeScript client
// (@modelcontextprotocol/client) talks to the live server; AppBridge (@modelcontextprotocol/ext-apps/app-bridge) talks
// to the view. Bundled by esbuild (both pinned in scripts/node-tools) when a test needs it.
//
// The view runs in the ext-apps double iframe: an outer "sandbox proxy" page on another origin, served with the
// Content-Security-Policy built from the resource's _meta.ui.csp, holds an inner srcdoc iframe (sandbox without
// allow-same-origin: an opaque origin that inherits that policy) with the view's HTML, and relays postMessage between
// the two. The view's tools/call and resources/read go through AppBridge to the client, as a chat host's do.
//
// window.appsHost.open(tool, arguments) calls the tool, reads its UI resource, renders the view and resolves once the
// view has initialized and been sent the tool's input and result; window.appsHost.events records what happened.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const EXTENSION = 'io.modelcontextprotocol/ui';
const HOST_INFO = { name: 'mcpsite-apps-test-host', version: '1.0.0' };
const config = window.APPS_HOST_CONFIG; // {mcpUrl, key, sandboxUrl, locale}
const events = [];
const note = (event, detail = {}) => events.push({ event, ...detail });

// `promise`, or an error naming `what` after 30 s (a view that never answers must fail the test, not hang it).
function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within 30 s`)), 30_000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function connect() {
  const client = new Client(HOST_INFO, {
    versionNegotiation: { mode: 'auto' },
    capabilities: { extensions: { [EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
  });
  const transport = new StreamableHTTPClientTransport(new URL(config.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${config.key}` } },
  });
  await client.connect(transport);
  return client;
}

// The tool's UI resource: its HTML and its declared CSP domains (none declared: no other origin at all).
async function readView(client, uri) {
  const { contents } = await client.readResource({ uri });
  if (contents.length !== 1) throw new Error(`${uri}: ${contents.length} contents`);
  const [content] = contents;
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri}: MIME type ${content.mimeType}`);
  const html = 'blob' in content ? new TextDecoder().decode(Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0))) : content.text;
  return { html, csp: content._meta?.ui?.csp ?? {}, meta: content._meta ?? null };
}

// The outer sandbox iframe, resolved once its relay says it is ready.
function sandboxProxy(container, csp) {
  const outer = document.createElement('iframe');
  outer.id = 'view';
  outer.title = 'MCP App';
  outer.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  const url = new URL(config.sandboxUrl);
  url.searchParams.set('csp', JSON.stringify(csp));
  url.searchParams.set('host', location.origin);
  const ready = new Promise((resolve) => {
    const listener = ({ source, data }) => {
      if (source === outer.contentWindow && data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve(outer);
      }
    };
    window.addEventListener('message', listener);
  });
  outer.src = url.href;
  container.replaceChildren(outer);
  return ready;
}

function bridgeFor(client, outer) {
  const server = client.getServerCapabilities() ?? {};
  const bridge = new AppBridge(
    client,
    HOST_INFO,
    { openLinks: {}, serverTools: server.tools ?? {}, serverResources: server.resources ?? {}, logging: {} },
    {
      hostContext: {
        locale: config.locale,
        theme: 'light',
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        platform: 'web',
        containerDimensions: { maxHeight: 2000, width: outer.clientWidth || 800 },
      },
    },
  );
  bridge.onsizechange = async ({ height }) => {
    if (height !== undefined) outer.style.height = `${height}px`;
  };
  bridge.onmessage = async (params) => {
    note('message', { params });
    return {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    note('model-context', { params });
    return {};
  };
  bridge.onopenlink = async (params) => {
    note('open-link', { params });
    return {};
  };
  bridge.onloggingmessage = (params) => note('log', { params });
  return bridge;
}

async function open(name, args = {}) {
  const client = window.appsHost.client ?? (window.appsHost.client = await connect());
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name} names no UI resource`);
  const result = await client.callTool({ name, arguments: args });
  note('tool-result', { name, result });
  const view = await readView(client, uri);
  const outer = await within(sandboxProxy(document.getElementById('host'), view.csp), 'the sandbox proxy');
  const bridge = bridgeFor(client, outer);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(outer.contentWindow, outer.contentWindow));
  await bridge.sendSandboxResourceReady({ html: view.html, sandbox: 'allow-scripts allow-forms' });
  await within(initialized, 'the view (ui/initialize)');
  note('initialized', { app: bridge.getAppVersion() ?? null });
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  window.appsHost.bridge = bridge;
  return { uri, result, csp: view.csp, meta: view.meta };
}

window.appsHost = { open, events, client: null, bridge: null, connect };
