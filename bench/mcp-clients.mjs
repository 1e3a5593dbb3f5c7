// The two MCP clients the MCP benches compare, connected to the server at
// url: this package's session (its echo through the kernel) and the
// official TypeScript SDK's client. Imported on the call, so a bench may
// replace globalThis.fetch first (bench/mcp-stub.mjs does).
export async function echoClients(url) {
  const { createSession } = await import('../npm/src/entry-node.mjs');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const s = await createSession({ mcpServers: [{ name: 'everything', url }] });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const clients = {
    wasm: async (i) => {
      const r = await s.tool('mcp__everything__echo', { message: `m${i}` });
      if (r.output !== `Echo: m${i}`) throw new Error(r.output);
    },
    sdk: async (i) => {
      const r = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
      if (r.content[0].text !== `Echo: m${i}`) throw new Error(r.content[0].text);
    },
  };
  const close = async () => {
    await s.close();
    await client.close();
  };
  return { clients, close };
}
