import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { aiProviders } from "../db/schema";
import { resealProviderKeys } from "../src/ai/service";
import { createApp } from "../src/app";
import { runCli } from "../src/cli";
import { loadConfig } from "../src/config";
import { createAdminKey } from "../src/keys/service";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { createKeyRing, generateKeyEntry, parseKeyEntries, SealError, sealedKeyId } from "../src/lib/seal";
import { openRuntime } from "../src/runtime";
import { fakeTranslation, startFakeVendors } from "./fake-vendors";
import { harness, seedProject } from "./helpers";

const vendors = await startFakeVendors();
afterAll(() => vendors.stop());

describe("sealing (AES-256-GCM key ring)", () => {
  test("round trip, fresh nonce, additional data binding, tamper and unknown key fail closed", async () => {
    const ring = await createKeyRing(parseKeyEntries([generateKeyEntry()]));
    const a = await ring.seal("sk-secret-value", "row-1");
    const b = await ring.seal("sk-secret-value", "row-1");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(a.includes("sk-secret")).toBe(false);
    expect(await ring.open(a, "row-1")).toBe("sk-secret-value");
    const reason = async (p: Promise<unknown>): Promise<string> => {
      try {
        await p;
        return "opened";
      } catch (e) {
        return e instanceof SealError ? e.reason : "other";
      }
    };
    expect(await reason(ring.open(a, "row-2"))).toBe("not_authentic");
    const parts = a.split(":");
    const ct = Buffer.from(parts[3]!, "base64url");
    ct[0]! ^= 1;
    expect(await reason(ring.open([...parts.slice(0, 3), ct.toString("base64url")].join(":"), "row-1"))).toBe("not_authentic");
    expect(await reason(ring.open(a.replace(/^v1:[^:]+/, "v1:other"), "row-1"))).toBe("unknown_key");
    expect(await reason(ring.open("v2:x:y:z", "row-1"))).toBe("malformed");
    expect(await reason(ring.open("plaintext-key", "row-1"))).toBe("malformed");
    const stranger = await createKeyRing(parseKeyEntries([`${ring.currentId}:${Buffer.alloc(32, 7).toString("base64")}`]));
    expect(await reason(stranger.open(a, "row-1"))).toBe("not_authentic");
  });

  test("a ring opens values sealed under its older keys and seals under the first", async () => {
    const oldEntry = generateKeyEntry();
    const newEntry = `knew:${Buffer.alloc(32, 1).toString("base64")}`;
    const oldRing = await createKeyRing(parseKeyEntries([oldEntry]));
    const ring = await createKeyRing(parseKeyEntries([newEntry, oldEntry]));
    const sealedOld = await oldRing.seal("k", "ad");
    expect(await ring.open(sealedOld, "ad")).toBe("k");
    expect(sealedKeyId(await ring.seal("k", "ad"))).toBe("knew");
    expect(ring.currentId).toBe("knew");
    expect(() => parseKeyEntries(["nocolon"])).toThrow("secret key entries must be id:base64key");
    expect(() => parseKeyEntries([`short:${Buffer.alloc(16).toString("base64")}`])).toThrow("secret key short must be base64 of 32 bytes");
    expect(() => parseKeyEntries([newEntry, newEntry])).toThrow("secret key id knew appears twice");
    expect(() => parseKeyEntries([])).toThrow("the key ring is empty");
  });

  test("rotation re-seals every provider under the current key and each stays usable", async () => {
    const oldEntry = generateKeyEntry();
    const newEntry = generateKeyEntry();
    const env = { AI_ALLOW_PRIVATE_URLS: "true" };
    const before = await harness(env, { keyRing: await createKeyRing(parseKeyEntries([oldEntry])) });
    const p = await seedProject(before);
    const made: Array<{ id: string; key: string; kind: string }> = [];
    for (const kind of ["openai", "anthropic", "groq"]) {
      const key = `sk-rot-${crypto.randomUUID()}`;
      const res = await before.request("POST", `/admin/p/${p.id}/ai/providers`, { body: { name: kind, kind, api_key: key, base_url: vendors.base("ok") } });
      made.push({ id: res.json.data.id, key, kind });
    }
    const both = await harness(env, { keyRing: await createKeyRing(parseKeyEntries([newEntry, oldEntry])) });
    const report = await resealProviderKeys(both.deps);
    for (const m of made) expect(report.failed).not.toContain(m.id);
    expect(report.resealed).toBeGreaterThanOrEqual(3);

    const after = await harness(env, { keyRing: await createKeyRing(parseKeyEntries([newEntry])) });
    for (const m of made) {
      const [row] = await after.deps.db.select().from(aiProviders).where(eq(aiProviders.id, m.id));
      expect(sealedKeyId(row!.apiKeySealed!)).toBe(parseKeyEntries([newEntry])[0]!.id);
      expect((await after.request("GET", `/admin/ai/providers/${m.id}`)).json.data.api_key).toBe(m.key);
      const tr = await after.request("POST", `/admin/p/${p.id}/ai/translate`, { body: { provider_id: m.id, from: "en", to: "fr", text: "Hi" } });
      expect(tr.json.data.translation).toBe(fakeTranslation("Hi"));
      const sent = vendors.requests.at(-1)!;
      expect(m.kind === "anthropic" ? sent.headers["x-api-key"] : sent.headers.authorization).toBe(m.kind === "anthropic" ? m.key : `Bearer ${m.key}`);
      // The retired key alone no longer opens it.
      expect((await before.request("GET", `/admin/ai/providers/${m.id}`)).status).toBe(500);
    }
    const again = await resealProviderKeys(both.deps);
    for (const m of made) expect(again.failed).not.toContain(m.id);
    expect(again.resealed).toBe(0);
  });
});

describe("key file and `npm run cli -- secrets:rotate` (embedded database on disk)", () => {
  test("first start writes DATA_DIR/secret.key 0600; rotate --new-key and SECRET_KEYS rotation keep the provider usable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cms-secrets-"));
    const out: string[] = [];
    const cli = (argv: string[], env: Record<string, string> = {}): Promise<number> => runCli(argv, { DATA_DIR: dir, SEED_DEMO: "false", ...env }, (s) => out.push(s));
    try {
      const apiKey = `sk-file-${crypto.randomUUID()}`;
      let providerId = "";
      {
        const deps = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent", SEED_DEMO: "false" }));
        const file = join(dir, "secret.key");
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(1);
        const app = createApp(deps).app;
        const { plaintext } = await createAdminKey(deps.db, { name: "t", scopes: [...ADMIN_SCOPES] }, null, new Date());
        const auth = { authorization: `Bearer ${plaintext}`, "content-type": "application/json" };
        const proj = await app.handle(new Request("http://localhost/admin/projects", { method: "POST", headers: auth, body: JSON.stringify({ slug: "s", name: "s" }) }));
        const projectId = (await proj.json()).data.id;
        const prov = await app.handle(
          new Request(`http://localhost/admin/p/${projectId}/ai/providers`, { method: "POST", headers: auth, body: JSON.stringify({ name: "o", kind: "openai", api_key: apiKey }) }),
        );
        providerId = (await prov.json()).data.id;
        await deps.dbHandle.close();
      }
      const firstId = readFileSync(join(dir, "secret.key"), "utf8").split(":")[0];

      expect(await cli(["secrets:rotate", "--new-key"])).toBe(0);
      const lines = readFileSync(join(dir, "secret.key"), "utf8").trim().split("\n");
      expect(lines).toHaveLength(2);
      expect(statSync(join(dir, "secret.key")).mode & 0o777).toBe(0o600);
      const newId = lines[0]!.split(":")[0];
      expect(newId).not.toBe(firstId);
      expect(JSON.parse(out.at(-1)!)).toEqual({ current_key: newId, resealed: 1, already_current: 0, failed: [] });
      expect(await cli(["secrets:rotate"])).toBe(0);
      expect(JSON.parse(out.at(-1)!)).toMatchObject({ resealed: 0, already_current: 1 });

      // Operator moves to SECRET_KEYS: a fresh key first, the file's keys after it.
      expect(await cli(["secrets:generate"])).toBe(0);
      const fresh = out.at(-1)!;
      expect(() => loadConfig({ SECRET_KEYS: fresh })).not.toThrow();
      expect(await cli(["secrets:rotate", "--new-key"], { SECRET_KEYS: fresh })).toBe(2);
      expect(await cli(["secrets:rotate"], { SECRET_KEYS: [fresh, ...lines].join(",") })).toBe(0);
      expect(JSON.parse(out.at(-1)!)).toMatchObject({ current_key: fresh.split(":")[0], resealed: 1 });

      const deps = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent", SEED_DEMO: "false", SECRET_KEYS: fresh }));
      try {
        const [row] = await deps.db.select().from(aiProviders).where(eq(aiProviders.id, providerId));
        expect(sealedKeyId(row!.apiKeySealed!)).toBe(fresh.split(":")[0]!);
        expect(row!.apiKeySealed!.includes(apiKey)).toBe(false);
        const { plaintext } = await createAdminKey(deps.db, { name: "t2", scopes: [...ADMIN_SCOPES] }, null, new Date());
        const res = await createApp(deps).app.handle(new Request(`http://localhost/admin/ai/providers/${providerId}`, { headers: { authorization: `Bearer ${plaintext}` } }));
        expect((await res.json()).data.api_key).toBe(apiKey);
      } finally {
        await deps.dbHandle.close();
      }
      expect(out.join("\n").includes(apiKey)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
