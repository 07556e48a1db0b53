import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { aiProviders } from "../db/schema";
import { rows } from "../src/lib/json";
import { createKeyRing, generateKeyEntry, parseKeyEntries, sealedKeyId } from "../src/lib/seal";
import { harness, keyWith, type RequestOpts, seedProject, type TestResponse } from "./helpers";

const FAKE_DNS: Record<string, string[]> = {
  "api.vendor.example": ["93.184.216.34"],
  "rebind.example": ["10.1.2.3"],
  "v6-metadata.example": ["fd00:ec2::254"],
  "mixed.example": ["93.184.216.34", "127.0.0.1"],
};
const resolveHost = async (host: string): Promise<string[]> => FAKE_DNS[host] ?? [];

describe("AI providers admin API", async () => {
  const h = await harness({}, { resolveHost });
  // Every response body except the single unmasked read, scanned for keys at the end.
  const seen: string[] = [];
  const keys: string[] = [];
  const call = async (method: string, path: string, opts: RequestOpts = {}): Promise<TestResponse> => {
    const res = await h.request(method, path, opts);
    seen.push(res.text, JSON.stringify(Object.fromEntries(res.headers)));
    return res;
  };
  const newKey = (): string => {
    const k = `sk-test-${crypto.randomUUID().replace(/-/g, "")}`;
    keys.push(k);
    return k;
  };
  const create = (ref: string, body: Record<string, unknown>): Promise<TestResponse> => call("POST", `/admin/p/${ref}/ai/providers`, { body });

  test("kinds lists the six kinds with default base URL and model", async () => {
    const res = await call("GET", "/admin/ai/kinds");
    expect(res.status).toBe(200);
    const byKind = Object.fromEntries(res.json.data.map((k: any) => [k.kind, k]));
    expect(Object.keys(byKind).sort()).toEqual(["anthropic", "gemini", "groq", "mistral", "openai", "openrouter"]);
    expect(byKind.anthropic).toMatchObject({ driver: "anthropic-messages", default_base_url: "https://api.anthropic.com", aliases: ["claude"] });
    expect(byKind.openai).toMatchObject({ driver: "openai-compatible", default_base_url: "https://api.openai.com/v1" });
    expect(byKind.groq.default_base_url).toBe("https://api.groq.com/openai/v1");
    for (const k of res.json.data) expect(k.default_model.length).toBeGreaterThan(0);
    expect((await call("GET", "/admin/ai/kinds", { key: await keyWith(h, ["content:read"]) })).status).toBe(403);
  });

  test("create masks the key, list shows the hint, GET by id shows the key, the row holds ciphertext", async () => {
    const p = await seedProject(h);
    const apiKey = newKey();
    const created = await create(p.slug, { name: "Claude", kind: "claude", api_key: apiKey, model: "claude-x", capabilities: { translate: true } });
    expect(created.status).toBe(201);
    const d = created.json.data;
    expect(d).toMatchObject({
      project_id: p.id,
      name: "Claude",
      kind: "anthropic",
      model: "claude-x",
      base_url: null,
      effective_base_url: "https://api.anthropic.com",
      capabilities: { translate: true },
      is_default: true,
    });
    expect(d.api_key_hint).toBe(`sk-…${apiKey.slice(-4)}`);
    expect("api_key" in d).toBe(false);

    const list = await call("GET", `/admin/p/${p.id}/ai/providers`);
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0].api_key_hint).toBe(d.api_key_hint);
    expect("api_key" in list.json.data[0]).toBe(false);

    const one = await h.request("GET", `/admin/ai/providers/${d.id}`);
    expect(one.status).toBe(200);
    expect(one.json.data.api_key).toBe(apiKey);
    expect(one.headers.get("cache-control")).toBe("no-store");

    const [row] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, d.id));
    expect(row!.apiKeySealed).toMatch(/^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(sealedKeyId(row!.apiKeySealed!)).toBe(h.deps.keyRing.currentId);
    const raw = rows<Record<string, unknown>>(await h.deps.db.execute(sql`select * from ai_providers where id = ${d.id}`));
    expect(JSON.stringify(raw).includes(apiKey)).toBe(false);
    expect(JSON.stringify(raw).includes(apiKey.slice(8, 20))).toBe(false);
  });

  test("ai:read lists and reads kinds but cannot read the unmasked key, nor write", async () => {
    const p = await seedProject(h);
    const created = await create(p.id, { name: "OpenAI", kind: "openai", api_key: newKey() });
    const id = created.json.data.id;
    const reader = await keyWith(h, ["ai:read"]);
    expect((await call("GET", `/admin/p/${p.id}/ai/providers`, { key: reader })).status).toBe(200);
    const denied = await call("GET", `/admin/ai/providers/${id}`, { key: reader });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe("insufficient_scope");
    expect((await call("POST", `/admin/p/${p.id}/ai/providers`, { key: reader, body: { name: "x", kind: "openai" } })).status).toBe(403);
    expect((await call("PATCH", `/admin/ai/providers/${id}`, { key: reader, body: { name: "y" } })).status).toBe(403);
    expect((await call("DELETE", `/admin/ai/providers/${id}`, { key: reader })).status).toBe(403);
    expect((await call("GET", `/admin/ai/providers/${id}`, { key: null })).status).toBe(401);
    const contentOnly = await keyWith(h, ["content:read", "content:write"]);
    expect((await call("GET", `/admin/p/${p.id}/ai/providers`, { key: contentOnly })).status).toBe(403);
  });

  test("another project's provider is 404 on every route for a project-limited key", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    const inB = (await create(b.id, { name: "B", kind: "mistral", api_key: newKey() })).json.data.id;
    const onlyA = await keyWith(h, ["ai:read", "ai:write"], [a.id]);
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { name: "stolen" }],
      ["DELETE", undefined],
    ] as const) {
      const res = await call(method, `/admin/ai/providers/${inB}`, { key: onlyA, body });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("not_found");
    }
    expect((await call("GET", `/admin/p/${b.id}/ai/providers`, { key: onlyA })).status).toBe(404);
    expect((await call("POST", `/admin/p/${b.id}/ai/providers`, { key: onlyA, body: { name: "x", kind: "openai" } })).status).toBe(404);
    const [row] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, inB));
    expect(row!.name).toBe("B");
    expect((await call("GET", `/admin/ai/providers/00000000-0000-7000-8000-000000000000`)).status).toBe(404);
  });

  test("PATCH: omitted api_key keeps it, a new one re-seals, null clears; kind alias, model and base_url", async () => {
    const p = await seedProject(h);
    const first = newKey();
    const id = (await create(p.id, { name: "P", kind: "openai", api_key: first })).json.data.id;
    const [before] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, id));

    const renamed = await call("PATCH", `/admin/ai/providers/${id}`, { body: { name: "Renamed", model: "gpt-x", base_url: "https://api.vendor.example/v1/" } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.data).toMatchObject({ name: "Renamed", model: "gpt-x", base_url: "https://api.vendor.example/v1", effective_model: "gpt-x", api_key_hint: `sk-…${first.slice(-4)}` });
    const [kept] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, id));
    expect(kept!.apiKeySealed).toBe(before!.apiKeySealed);

    const second = newKey();
    const rekeyed = await call("PATCH", `/admin/ai/providers/${id}`, { body: { api_key: second, kind: "Claude" } });
    expect(rekeyed.json.data).toMatchObject({ kind: "anthropic", api_key_hint: `sk-…${second.slice(-4)}` });
    expect((await h.request("GET", `/admin/ai/providers/${id}`)).json.data.api_key).toBe(second);

    const cleared = await call("PATCH", `/admin/ai/providers/${id}`, { body: { api_key: null, model: null, base_url: null } });
    expect(cleared.json.data).toMatchObject({ api_key_hint: null, model: null, base_url: null, effective_base_url: "https://api.anthropic.com" });
    expect((await h.request("GET", `/admin/ai/providers/${id}`)).json.data.api_key).toBeNull();
    const [after] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, id));
    expect(after!.apiKeySealed).toBeNull();
    expect(after!.apiKeyHint).toBeNull();

    expect((await call("DELETE", `/admin/ai/providers/${id}`)).status).toBe(204);
    expect((await call("GET", `/admin/ai/providers/${id}`)).status).toBe(404);
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, id))).toHaveLength(0);
  });

  test("one default per project: first provider is default, setting another clears it, the database refuses two", async () => {
    const p = await seedProject(h);
    const a = (await create(p.id, { name: "A", kind: "openai" })).json.data;
    expect(a.is_default).toBe(true);
    const b = (await create(p.id, { name: "B", kind: "groq" })).json.data;
    expect(b.is_default).toBe(false);
    const c = (await create(p.id, { name: "C", kind: "gemini", is_default: true })).json.data;
    expect(c.is_default).toBe(true);
    const defaults = async (): Promise<string[]> => (await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).filter((r) => r.isDefault).map((r) => r.id);
    expect(await defaults()).toEqual([c.id]);
    expect((await call("PATCH", `/admin/ai/providers/${b.id}`, { body: { is_default: true } })).json.data.is_default).toBe(true);
    expect(await defaults()).toEqual([b.id]);
    // Concurrent defaults still leave exactly one.
    await Promise.all([a.id, c.id].map((id) => call("PATCH", `/admin/ai/providers/${id}`, { body: { is_default: true } })));
    expect(await defaults()).toHaveLength(1);
    // Enforced by the database too, not only by the service.
    const other = (await defaults())[0] === a.id ? c.id : a.id;
    const refused = await h.deps.db
      .update(aiProviders)
      .set({ isDefault: true })
      .where(eq(aiProviders.id, other))
      .then(
        () => null,
        (err: { cause?: { code?: string; message?: string } }) => err.cause,
      );
    // The one-default unique index, not any error.
    expect(refused?.code).toBe("23505");
    expect(refused?.message).toContain('unique constraint "ai_providers_one_default_uq"');
    expect(await defaults()).toHaveLength(1);
    expect((await call("PATCH", `/admin/ai/providers/${b.id}`, { body: { is_default: false } })).json.data.is_default).toBe(false);
  });

  test("bad input is 400 with the field, and nothing is written", async () => {
    const p = await seedProject(h);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "x", kind: "llama" }, "kind"],
      [{ kind: "openai" }, "name"],
      [{ name: "", kind: "openai" }, "name"],
      [{ name: "x", kind: "openai", api_key: "has space inside" }, "api_key"],
      [{ name: "x", kind: "openai", api_key: "" }, "api_key"],
      [{ name: "x", kind: "openai", base_url: "not a url" }, "base_url"],
      [{ name: "x", kind: "openai", base_url: "ftp://api.vendor.example" }, "base_url"],
      [{ name: "x", kind: "openai", base_url: "https://api.vendor.example/v1?key=1" }, "base_url"],
      [{ name: "x", kind: "openai", base_url: "https://user:pw@api.vendor.example/v1" }, "base_url"],
      [{ name: "x", kind: "openai", capabilities: ["translate"] }, "capabilities"],
      [{ name: "x", kind: "openai", is_default: "yes" }, "is_default"],
    ];
    for (const [body, field] of cases) {
      const res = await create(p.id, body);
      if (res.status !== 400) throw new Error(`${JSON.stringify(body)} gave ${res.status}`);
      expect(res.json.error.code).toBe("invalid_request");
      expect(res.json.error.details.field).toBe(field);
    }
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).toHaveLength(0);
    // Unknown fields are refused by name (invalid_input), never written.
    const refused = await create(p.id, { name: "x", kind: "openai", id: "00000000-0000-7000-8000-000000000001", project_id: "nope", api_key_sealed: "v1:x:y:z" });
    expect([refused.status, refused.json.error.code, refused.json.error.details.fields]).toEqual([400, "invalid_input", ["id", "project_id", "api_key_sealed"]]);
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).toHaveLength(0);
    const res = await create(p.id, { name: "x", kind: "openai" });
    expect(res.status).toBe(201);
    expect(res.json.data.api_key_hint).toBeNull();
    const bad = await call("PATCH", `/admin/ai/providers/${res.json.data.id}`, { body: { kind: "nope" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.field).toBe("kind");
    expect((await call("GET", `/admin/ai/providers/not-a-uuid`)).status).toBe(400);
  });

  test("a ciphertext copied to another row, or tampered with, fails closed", async () => {
    const p = await seedProject(h);
    const q = await seedProject(h);
    const secretA = newKey();
    const a = (await create(p.id, { name: "A", kind: "openai", api_key: secretA })).json.data.id;
    const b = (await create(p.id, { name: "B", kind: "openai", api_key: newKey() })).json.data.id;
    const c = (await create(q.id, { name: "C", kind: "openai", api_key: newKey() })).json.data.id;
    const [rowA] = await h.deps.db.select().from(aiProviders).where(eq(aiProviders.id, a));
    for (const target of [b, c]) {
      await h.deps.db.update(aiProviders).set({ apiKeySealed: rowA!.apiKeySealed }).where(eq(aiProviders.id, target));
      const res = await call("GET", `/admin/ai/providers/${target}`);
      expect(res.status).toBe(500);
      expect(res.json.error.code).toBe("internal");
      expect(res.text.includes(secretA)).toBe(false);
      const tr = await call("POST", `/admin/p/${target === b ? p.id : q.id}/ai/translate`, { body: { provider_id: target, from: "en", to: "fr", text: "Hello" } });
      expect(tr.status).toBe(500);
    }
    const flipped = rowA!.apiKeySealed!.slice(0, -2) + (rowA!.apiKeySealed!.endsWith("AA") ? "BA" : "AA");
    await h.deps.db.update(aiProviders).set({ apiKeySealed: flipped }).where(eq(aiProviders.id, a));
    expect((await call("GET", `/admin/ai/providers/${a}`)).status).toBe(500);
    // A ring without the sealing key cannot open it either.
    const other = await harness({}, { keyRing: await createKeyRing(parseKeyEntries([generateKeyEntry()])) });
    const fresh = newKey();
    await call("PATCH", `/admin/ai/providers/${a}`, { body: { api_key: fresh } });
    const res = await other.request("GET", `/admin/ai/providers/${a}`, { key: other.rootKey });
    expect(res.status).toBe(500);
    expect(res.text.includes(fresh)).toBe(false);
    expect(h.logs.some((l) => l.includes("provider key cannot be opened"))).toBe(true);
  });

  test("base_url guard at create and update: https and public only by default", async () => {
    const p = await seedProject(h);
    const refused = [
      "http://api.vendor.example/v1",
      "https://127.0.0.1/v1",
      "https://2130706433/v1",
      "https://0x7f.0.0.1/v1",
      "https://0177.0.0.1/v1",
      "https://[::1]/v1",
      "https://[::ffff:127.0.0.1]/v1",
      "https://[::ffff:a9fe:a9fe]/v1",
      "https://10.0.0.8/v1",
      "https://192.168.1.1/v1",
      "https://169.254.169.254/latest",
      "https://[fd00:ec2::254]/v1",
      "https://[fe80::1]/v1",
      "https://[2002:7f00:1::]/v1",
      "https://[64:ff9b::7f00:1]/v1",
      "https://localhost/v1",
      "https://metadata.google.internal/v1",
      "https://rebind.example/v1",
      "https://v6-metadata.example/v1",
      "https://mixed.example/v1",
    ];
    for (const base_url of refused) {
      const res = await create(p.id, { name: "x", kind: "openai", base_url });
      if (res.status !== 400) throw new Error(`${base_url} was accepted`);
      expect(res.json.error.details.field).toBe("base_url");
    }
    const ok = await create(p.id, { name: "ok", kind: "openai", base_url: "https://api.vendor.example/v1" });
    expect(ok.status).toBe(201);
    const patched = await call("PATCH", `/admin/ai/providers/${ok.json.data.id}`, { body: { base_url: "https://[::ffff:10.0.0.1]/v1" } });
    expect(patched.status).toBe(400);
    expect(await h.deps.db.select().from(aiProviders).where(eq(aiProviders.projectId, p.id))).toHaveLength(1);
  });

  test("AI_ALLOW_PRIVATE_URLS=true allows http and private addresses, never metadata", async () => {
    const priv = await harness({ AI_ALLOW_PRIVATE_URLS: "true" }, { resolveHost });
    const p = await seedProject(priv);
    for (const base_url of ["http://127.0.0.1:11434/v1", "http://10.0.0.8/v1", "https://rebind.example/v1", "http://[::1]:8080"]) {
      expect((await priv.request("POST", `/admin/p/${p.id}/ai/providers`, { body: { name: "local", kind: "openai", base_url } })).status).toBe(201);
    }
    for (const base_url of [
      "http://169.254.169.254/",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://metadata.google.internal/",
      "http://[::ffff:169.254.169.254]/",
      "http://v6-metadata.example/",
    ]) {
      const res = await priv.request("POST", `/admin/p/${p.id}/ai/providers`, { body: { name: "meta", kind: "openai", base_url } });
      if (res.status !== 400) throw new Error(`${base_url} was accepted`);
    }
  });

  // Runs last: every key used above, in no response (bar the unmasked reads) and no log line.
  test("no API key appears in any response body, header or log line", () => {
    expect(keys.length).toBeGreaterThan(5);
    expect(seen.length).toBeGreaterThan(50);
    expect(h.logs.length).toBeGreaterThan(50);
    for (const k of keys) {
      expect(seen.filter((text) => text.includes(k))).toEqual([]);
      expect(h.logs.filter((line) => line.includes(k))).toEqual([]);
    }
  });
});
