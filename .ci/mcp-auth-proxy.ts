// CI only: the MCP conformance suite has no option to send an Authorization header, and /mcp
// answers 401 without one. This loopback proxy adds the bearer of an MCP token to every request
// and passes everything else through untouched (Host and Origin included, so the suite's DNS
// rebinding probes reach the service as sent).
// Usage: UPSTREAM=http://127.0.0.1:PORT MCP_TOKEN=cms_mcp_… [LISTEN_PORT=…] bun .ci/mcp-auth-proxy.ts (prints its port)
const upstream = new URL(process.env.UPSTREAM ?? "");
const token = process.env.MCP_TOKEN ?? "";
if (!upstream.host || !token.startsWith("cms_mcp_")) {
  console.error("UPSTREAM and MCP_TOKEN (cms_mcp_…) are required");
  process.exit(2);
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.LISTEN_PORT ?? 0),
  async fetch(req) {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.set("authorization", `Bearer ${token}`);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
    const res = await fetch(`${upstream.origin}${url.pathname}${url.search}`, { method: req.method, headers, body, redirect: "manual" });
    return new Response(res.body, { status: res.status, headers: res.headers });
  },
});
console.log(server.port);
