// Review fixes in the AI module: outbound calls pinned to the addresses the SSRF guard checked
// (no second DNS answer), input PostgreSQL cannot store refused as 400, API keys checked for
// what an HTTP header carries, the one-default rule under concurrency, and key-file writes
// that never leave a partial file.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { aiProviders } from "../db/schema";
import { loadKeyFile } from "../src/lib/seal";
import { pinnedTarget } from "../src/lib/ssrf";
import { fakeTranslation, startFakeVendors } from "./fake-vendors";
import { harness, seedProject, type TestHarness, type TestResponse } from "./helpers";
import { PIN_CERT, PIN_KEY } from "./xrt/pin-cert";

// Self-signed, for vendor.pin.test only (valid to 2046): proves the pinned https call still
// verifies the certificate against the provider's host name.

const vendors = await startFakeVendors();
afterAll(() => vendors.stop());

const createProvider = (h: TestHarness, ref: string, body: Record<string, unknown>): Promise<TestResponse> =>
  h.request("POST", `/admin/p/${ref}/ai/providers`, { body: { name: "p", kind: "openai", ...body } });
const translate = (h: TestHarness, ref: string, body: Record<string, unknown> = {}): Promise<TestResponse> =>
  h.request("POST", `/admin/p/${ref}/ai/translate`, { body: { from: "en", to: "fr", text: "Hello", ...body } });

/** A TCP listener on `host`:`port` that accepts each connection and closes it at once (a vendor address that fails); counts them. */
function closingListener(host: string, port: number): { connections: () => number; stop: () => void } {
  let n = 0;
  const l = Bun.listen({
    hostname: host,
    port,
    socket: {
      open(s) {
        n += 1;
        s.end();
      },
      data() {},
    },
  });
  return { connections: () => n, stop: () => l.stop(true) };
}

describe("outbound calls connect to the addresses the guard checked", () => {
  test("pinnedTarget keeps the path, moves the name to Host and (https) to the TLS server name", () => {
    expect(pinnedTarget("https://api.example.com/v1/chat/completions", "93.184.216.34")).toEqual({
      url: "https://93.184.216.34/v1/chat/completions",
      host: "api.example.com",
      serverName: "api.example.com",
    });
    expect(pinnedTarget("https://api.example.com.:8443/v1/messages", "2606:2800:220:1::1")).toEqual({
      url: "https://[2606:2800:220:1::1]:8443/v1/messages",
      host: "api.example.com.:8443",
      serverName: "api.example.com",
    });
    expect(pinnedTarget("http://llm.internal:11434/v1/x", "10.0.0.5")).toEqual({ url: "http://10.0.0.5:11434/v1/x", host: "llm.internal:11434", serverName: null });
    expect(pinnedTarget("https://1.2.3.4/v1", null)).toEqual({ url: "https://1.2.3.4/v1", host: null, serverName: null });
  });

  test("a name is resolved once, by the guard: the vendor call goes to that address, never to a new DNS answer", async () => {
    const dns: Record<string, string[]> = { "llm.pin.example": ["93.184.216.34"] };
    // The public address is out of this machine's reach: the stand-in network carries the call to the loopback vendor.
    const net = vendors.internet({ "llm.pin.example": "openai" });
    const h = await harness({}, { resolveHost: async (host) => dns[host] ?? [], fetch: net.fetch });
    const p = await seedProject(h);
    const created = await createProvider(h, p.id, { base_url: "https://llm.pin.example/v1", api_key: "sk-pin-0123456789abcdef" });
    expect(created.status).toBe(201);

    const before = vendors.requests.length;
    const ok = await translate(h, p.id);
    expect(ok.status).toBe(200);
    expect(ok.json.data.translation).toBe(fakeTranslation("Hello"));
    // The connection target is the checked address; the name travels only in Host and SNI.
    expect(net.dialled).toEqual([{ url: "https://93.184.216.34/v1/chat/completions", host: "llm.pin.example", serverName: "llm.pin.example" }]);
    expect(vendors.requests.slice(before).map((r) => [r.headers.host, r.headers.authorization])).toEqual([["llm.pin.example", "Bearer sk-pin-0123456789abcdef"]]);
  });

  test("several addresses: every one is checked, and the next is tried when a connection fails", async () => {
    const port = Number(new URL(vendors.origin).port);
    const dns: Record<string, string[]> = { "multi.pin.test": ["127.0.0.2", "127.0.0.1"], "down.pin.test": ["127.0.0.2", "127.0.0.3"], "meta.pin.test": ["127.0.0.1", "169.254.169.254"] };
    // The vendor listens on 127.0.0.1 only; on 127.0.0.2 and .3 the same port accepts and closes every connection.
    const closing = [closingListener("127.0.0.2", port), closingListener("127.0.0.3", port)] as const;
    try {
      const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" }, { resolveHost: async (host) => dns[host] ?? [] });
      const p = await seedProject(h);
      const add = async (name: string): Promise<string> => {
        const res = await createProvider(h, p.id, { base_url: `http://${name}:${port}/s/ok`, api_key: "sk-multi-0123456789abcdef" });
        expect(res.status).toBe(201);
        return res.json.data.id;
      };
      const before = vendors.requests.length;
      const ok = await translate(h, p.id, { provider_id: await add("multi.pin.test") });
      expect([ok.status, ok.json.data?.translation]).toEqual([200, fakeTranslation("Hello")]);
      expect(closing.map((c) => c.connections())).toEqual([1, 0]);
      expect(vendors.requests.slice(before).map((r) => r.headers.host)).toEqual([`multi.pin.test:${port}`]);

      // When no address answers, the caller gets the connection error, not a 500.
      const res = await translate(h, p.id, { provider_id: await add("down.pin.test") });
      expect(res.status).toBe(502);
      expect(res.json.error).toEqual({ code: "provider_error", message: "could not reach the provider (connection failed)" });
      expect(closing.map((c) => c.connections())).toEqual([2, 1]);

      // One address the guard refuses (metadata) refuses the name: no connection at all.
      const meta = await createProvider(h, p.id, { base_url: `http://meta.pin.test:${port}/s/ok` });
      expect(meta.status).toBe(400);
      expect(meta.json.error.message).toMatch(/metadata/);
      expect(vendors.requests.length).toBe(before + 1);
    } finally {
      for (const c of closing) c.stop();
    }
  });

  test("real loopback vendor behind a name the system cannot resolve: reached through the guard's answer", async () => {
    // vendor.pin.test exists only in the guard's resolver; without pinning the call would resolve
    // the name itself (and fail, or, with a rebinding DNS server, go somewhere else).
    const port = new URL(vendors.origin).port;
    const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" }, { resolveHost: async (host) => (host === "vendor.pin.test" ? ["127.0.0.1"] : []) });
    const p = await seedProject(h);
    expect((await createProvider(h, p.id, { base_url: `http://vendor.pin.test:${port}/s/ok`, api_key: "sk-loop-0123456789abcdef" })).status).toBe(201);
    const before = vendors.requests.length;
    const res = await translate(h, p.id, { text: "Pinned" });
    expect(res.status).toBe(200);
    expect(res.json.data.translation).toBe(fakeTranslation("Pinned"));
    expect(vendors.requests.length).toBe(before + 1);
    expect(vendors.requests[before]!.headers.host).toBe(`vendor.pin.test:${port}`);
    expect(vendors.requests[before]!.headers.authorization).toBe("Bearer sk-loop-0123456789abcdef");
  });

  test("https: the pinned connection still verifies the certificate against the provider's name", async () => {
    const seenHosts: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: PIN_CERT, key: PIN_KEY },
      fetch(req) {
        seenHosts.push(req.headers.get("host") ?? "");
        return Response.json({ choices: [{ finish_reason: "stop", message: { content: "Bonjour (tls)" } }] });
      },
    });
    try {
      // Trust the test CA; everything else (URL, Host, serverName) is what the driver chose.
      const withCa = ((input: string | URL | Request, init?: RequestInit & { tls?: Record<string, unknown> }) =>
        fetch(input, { ...init, tls: { ...init?.tls, ca: PIN_CERT } } as RequestInit)) as typeof fetch;
      const resolveHost = async (host: string): Promise<string[]> => (host.endsWith(".pin.test") ? ["127.0.0.1"] : []);
      const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" }, { fetch: withCa, resolveHost });
      const p = await seedProject(h);
      const good = await createProvider(h, p.id, { base_url: `https://vendor.pin.test:${server.port}/v1` });
      expect(good.status).toBe(201);
      const res = await translate(h, p.id, { provider_id: good.json.data.id });
      expect(res.status).toBe(200);
      expect(res.json.data.translation).toBe("Bonjour (tls)");
      expect(seenHosts).toEqual([`vendor.pin.test:${server.port}`]);

      // Same address, another name: the certificate does not match, so the call is refused.
      const wrong = await createProvider(h, p.id, { base_url: `https://other.pin.test:${server.port}/v1` });
      expect(wrong.status).toBe(201);
      const refused = await translate(h, p.id, { provider_id: wrong.json.data.id });
      expect(refused.status).toBe(502);
      expect(refused.json.error.code).toBe("provider_error");
      expect(seenHosts).toHaveLength(1);
    } finally {
      server.stop(true);
    }
  });
});

describe("provider input PostgreSQL cannot store is a 400, never a 500", () => {
  test("NUL and unpaired surrogates in name, model and capabilities; nothing written", async () => {
    const h = await harness();
    const p = await seedProject(h);
    const raw = (json: string): Promise<TestResponse> => h.request("POST", `/admin/p/${p.id}/ai/providers`, { raw: json, headers: { "content-type": "application/json" } });
    const cases: Array<[TestResponse, string]> = [
      [await createProvider(h, p.id, { name: "bad\u0000name" }), "name"],
      [await createProvider(h, p.id, { name: "tab\tname" }), "name"],
      [await raw('{"name":"a\\ud800","kind":"openai"}'), "name"],
      [await raw('{"name":"a","kind":"openai","model":"m\\udfff"}'), "model"],
      [await createProvider(h, p.id, { capabilities: { note: "x\u0000y" } }), "capabilities"],
      [await createProvider(h, p.id, { capabilities: { "\u0000": true } }), "capabilities"],
      [await createProvider(h, p.id, { capabilities: { deep: [{ list: ["ok", "\u0000"] }] } }), "capabilities"],
      [await raw('{"name":"a","kind":"openai","capabilities":{"x":"\\ud800"}}'), "capabilities"],
      [await raw('{"name":"a","kind":"openai","capabilities":{"\\udc00":1}}'), "capabilities"],
    ];
    for (const [res, field] of cases) {
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
      expect(res.json.error.details.field.split(".")[0]).toBe(field);
    }
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).toEqual([]);

    // PATCH runs the same checks; the row is unchanged.
    const ok = await createProvider(h, p.id, { name: "kept", capabilities: { translate: true, note: "é ✓" } });
    expect(ok.status).toBe(201);
    const id = ok.json.data.id as string;
    for (const body of [{ name: "b\u0000" }, { model: "m\u0000" }, { capabilities: { x: "\u0000" } }]) {
      const res = await h.request("PATCH", `/admin/ai/providers/${id}`, { body });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
    }
    const [row] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, id));
    expect(row!.name).toBe("kept");
    expect(row!.model).toBeNull();
    expect(row!.capabilities).toEqual({ translate: true, note: "é ✓" });
    expect(h.logs.some((l) => l.includes("unhandled error"))).toBe(false);
  });

  test("api_key must be visible ASCII: a key that cannot travel in a header is refused when stored, not at call time", async () => {
    const h = await harness();
    const p = await seedProject(h);
    for (const api_key of ["sk-abcdefghijklmnop-é", "sk-abcdefghijklmnop€", "sk-abc defghijklmnop", "sk-abcdefghij\u00a0klmnop"]) {
      const res = await createProvider(h, p.id, { api_key });
      expect(res.status).toBe(400);
      expect(res.json.error.details.field).toBe("api_key");
      // The refused key is not echoed.
      expect(res.text).not.toContain("abcdefghij");
    }
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).toEqual([]);
    const ok = await createProvider(h, p.id, { api_key: "  sk-proj_AZaz09-._~+/=  " });
    expect(ok.status).toBe(201);
    expect(ok.json.data.api_key_hint).toBe("sk-…~+/=");
    const patched = await h.request("PATCH", `/admin/ai/providers/${ok.json.data.id}`, { body: { api_key: "sk-ключ-0123456789" } });
    expect(patched.status).toBe(400);
    const read = await h.request("GET", `/admin/ai/providers/${ok.json.data.id}`);
    expect(read.json.data.api_key).toBe("sk-proj_AZaz09-._~+/=");
  });

  test("base_url is limited after normalisation (percent-encoding grows it)", async () => {
    const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" });
    const p = await seedProject(h);
    const res = await createProvider(h, p.id, { base_url: `http://127.0.0.1:9/${"é".repeat(400)}` });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("base_url");
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).toEqual([]);
  });
});

describe("translation output and kinds", () => {
  test("a vendor answer with NUL or unpaired surrogates comes back storable (it may be written to jsonb)", async () => {
    const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" });
    const p = await seedProject(h);
    const nul = await createProvider(h, p.id, { base_url: vendors.base("nul"), api_key: "sk-out-0123456789abcdef" });
    expect(nul.status).toBe(201);
    const res = await translate(h, p.id, { provider_id: nul.json.data.id });
    expect(res.status).toBe(200);
    // The vendor sent "Bon\u0000jour \ud800<b>{name}</b>".
    expect(res.json.data.translation).toBe("Bonjour \ufffd<b>{name}</b>");
    // What an MCP translate_node does with it: store it in a translation (jsonb).
    const node = await h.request("POST", `/admin/p/${p.id}/nodes`, { body: { slug: "n", title: "Hello" } });
    const stored = await h.request("PUT", `/admin/p/${p.id}/nodes/${node.json.data.id}/translations/fr`, { body: { meta: { title: res.json.data.translation } } });
    expect(stored.status).toBe(200);

    // Only NUL: nothing left to return is the empty-content error, not an empty translation.
    const only = await createProvider(h, p.id, { base_url: vendors.base("only-nul"), api_key: "sk-out-0123456789abcdef" });
    const empty = await translate(h, p.id, { provider_id: only.json.data.id });
    expect(empty.status).toBe(502);
    expect(empty.json.error.message).toMatch(/empty content/);
  });

  test("the anthropic kind defaults to a model the vendor still serves (Claude 3.5 Haiku was retired in February 2026)", async () => {
    const h = await harness();
    const kinds = (await h.request("GET", "/admin/ai/kinds")).json.data as Array<{ kind: string; default_model: string }>;
    expect(kinds.find((k) => k.kind === "anthropic")!.default_model).toBe("claude-haiku-4-5");
  });
});

describe("one default provider per project under concurrency", () => {
  const defaults = async (h: TestHarness, projectId: string): Promise<string[]> =>
    (
      await h.deps.db
        .select({ id: aiProviders.id })
        .from(aiProviders)
        .where(and(eq(aiProviders.projectId, projectId), eq(aiProviders.isDefault, true)))
    ).map((r) => r.id);

  test("concurrent first creations: exactly one becomes the default", async () => {
    const h = await harness();
    const p = await seedProject(h);
    const res = await Promise.all(Array.from({ length: 6 }, (_, i) => createProvider(h, p.id, { name: `p${i}` })));
    expect(res.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(res.filter((r) => r.json.data.is_default)).toHaveLength(1);
    expect(await defaults(h, p.id)).toEqual([res.find((r) => r.json.data.is_default)!.json.data.id]);
  });

  test("concurrent set-default PATCHes and creations: never two defaults, never a 500", async () => {
    const h = await harness();
    const p = await seedProject(h);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createProvider(h, p.id, { name: `p${i}` })).json.data.id);
    const results = await Promise.all([
      ...ids.map((id) => h.request("PATCH", `/admin/ai/providers/${id}`, { body: { is_default: true } })),
      ...Array.from({ length: 3 }, (_, i) => createProvider(h, p.id, { name: `n${i}`, is_default: true })),
    ]);
    for (const r of results) expect([200, 201, 409]).toContain(r.status);
    const winners = await defaults(h, p.id);
    expect(winners).toHaveLength(1);
    // The answer of the last successful writer matches the database.
    const list = await h.request("GET", `/admin/p/${p.id}/ai/providers`);
    expect(list.json.data.filter((x: { is_default: boolean }) => x.is_default).map((x: { id: string }) => x.id)).toEqual(winners);
  });
});

describe("the key file is published whole", () => {
  test("first creation and rotation write a complete 0600 file through a temporary file; rotation replaces it by rename", () => {
    const dir = mkdtempSync(join(tmpdir(), "review-keyfile-"));
    try {
      const file = join(dir, "nested", "secret.key");
      const first = loadKeyFile(file);
      expect(first.created).toBe(true);
      expect(first.entries).toHaveLength(1);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(dir, "nested"))).toEqual(["secret.key"]);

      const again = loadKeyFile(file);
      expect(again).toEqual({ entries: first.entries, created: false });

      const inode = statSync(file).ino;
      const rotated = loadKeyFile(file, { prependNew: true });
      expect(rotated.entries).toHaveLength(2);
      expect(rotated.entries[1]).toBe(first.entries[0]);
      expect(readFileSync(file, "utf8")).toBe(`${rotated.entries.join("\n")}\n`);
      // A new file renamed into place: a crash mid-write leaves the old file, never a truncated one.
      expect(statSync(file).ino).not.toBe(inode);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(dir, "nested"))).toEqual(["secret.key"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("cloud metadata addresses beyond AWS are refused even with AI_ALLOW_PRIVATE_URLS", () => {
  test("GCP and Scaleway IPv6 metadata, Oracle classic IPv4 metadata: forbidden, in every spelling", async () => {
    const { checkOutboundUrl, classifyHost } = await import("../src/lib/ssrf");
    for (const host of ["[fd20:ce::254]", "[fd20:00ce:0000::0254]", "[fd00:42::42]", "192.0.0.192", "3221225664", "0xc00000c0"]) {
      expect(`${host}: ${classifyHost(new URL(`https://${host}/`).hostname)}`).toBe(`${host}: forbidden`);
    }
    // Neighbours stay ordinary private addresses.
    for (const host of ["[fd20:ce::253]", "[fd00:42::43]", "192.0.0.193"]) expect(classifyHost(new URL(`https://${host}/`).hostname)).toBe("private");
    const policy = { allowPrivate: true, unresolvable: "refuse" as const, resolve: async (h: string) => (h === "gcp.meta.example" ? ["fd20:ce::254"] : []) };
    const named = await checkOutboundUrl("http://gcp.meta.example/v1", policy);
    expect(named.ok).toBe(false);
    expect(named.ok ? "" : named.reason).toMatch(/metadata/);
    const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" });
    const p = await seedProject(h);
    const res = await createProvider(h, p.id, { base_url: "http://[fd20:ce::254]/computeMetadata/v1" });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/metadata/);
  });
});
