// A web page's MCP client for the CORS browser test (mcpsite/tests/test_cors_browser.py): the official TypeScript
// client (@modelcontextprotocol/client, pinned in scripts/node-tools), bundled by esbuild, on an origin other than
// the server's. window.mcpFromPage(url, key, tool, args) connects, lists the tools and calls one.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

window.mcpFromPage = async (url, key, tool, args) => {
  const client = new Client({ name: 'mcpsite-cors-test-page', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const result = await client.callTool({ name: tool, arguments: args });
    return { ok: true, tools: tools.map((t) => t.name), result };
  } catch (error) {
    return { ok: false, error: String(error) };
  } finally {
    await client.close().catch(() => {});
  }
};
