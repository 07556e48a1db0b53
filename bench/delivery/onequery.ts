// The one-round-trip reference for cache misses: a bare Bun.serve doing one trivial postgres.js
// query per request (the pool size of the service), answering a small JSON body.
// Usage: bun bench/delivery/onequery.ts DATABASE_URL PORT [POOL]
import postgres from "postgres";

const [url, port, pool] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4] ?? 4)];
const sql = postgres(url, { max: pool, onnotice: () => {} });
const headers = { "content-type": "application/json; charset=utf-8" };
Bun.serve({
  port,
  hostname: "127.0.0.1",
  async fetch() {
    const [row] = await sql`select 1 as one`;
    return new Response(JSON.stringify(row), { headers });
  },
});
console.log(`one-query server on ${port}`);
