import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openDb } from "../db/client";
import { adminKeys, nodes, projects, users } from "../db/schema";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";
import { createKeyRing, generateKeyEntry, parseKeyEntries } from "../src/lib/seal";
import { hashToken } from "../src/lib/tokens";
import { verifyUser } from "../src/users/service";
import { freshDatabase } from "./helpers";

describe("first-start bootstrap", () => {
  test("configuration problems are all listed", () => {
    expect(() => loadConfig({ PORT: "x", ADMIN_TOKEN: "short", LOG_LEVEL: "loud" })).toThrow(/PORT[\s\S]*ADMIN_TOKEN[\s\S]*LOG_LEVEL/);
  });

  test("an ADMIN_TOKEN longer than the 512 characters a bearer may have is refused at start, not accepted and never usable", () => {
    expect(() => loadConfig({ ADMIN_TOKEN: "a".repeat(513) })).toThrow("ADMIN_TOKEN must be 32 to 512 characters");
    expect(loadConfig({ ADMIN_TOKEN: "a".repeat(512) }).adminToken).toBe("a".repeat(512));
  });

  test.concurrent("creates owner, root key and demo once; generated secrets are returned once and stored hashed", async () => {
    const fresh = await freshDatabase();
    try {
      const db = fresh.handle.db;
      const config = loadConfig({ SEED_DEMO: "true" });
      const first = await bootstrap(db, config, new Date());
      expect(first).not.toBeNull();
      expect(first!.password).toHaveLength(24);
      expect(first!.rootKey).toMatch(/^cms_ak_/);
      expect(await bootstrap(db, config, new Date())).toBeNull();
      expect(await db.select().from(users)).toHaveLength(1);
      const keys = await db.select().from(adminKeys);
      expect(keys).toHaveLength(1);
      expect(keys[0]!.keyHash).toBe(hashToken(first!.rootKey!));
      expect(await verifyUser(db, first!.email, first!.password!)).not.toBeNull();
      expect(await verifyUser(db, first!.email, "wrong-password")).toBeNull();
      const [demo] = await db.select().from(projects).where(eq(projects.slug, "demo"));
      expect(demo!.locales).toEqual(["en", "fr"]);
      const demoNodes = await db.select().from(nodes).where(eq(nodes.projectId, demo!.id));
      expect(demoNodes.filter((n) => n.status === "published").length).toBeGreaterThanOrEqual(5);
      // The root key works against the admin API.
      const keyRing = await createKeyRing(parseKeyEntries([generateKeyEntry()]));
      const deps = { config, db, dbHandle: fresh.handle, fetch, now: () => new Date(), log: silentLogger, keyRing };
      const res = await createApp(deps).app.handle(new Request("http://localhost/admin/projects", { headers: { authorization: `Bearer ${first!.rootKey}` } }));
      expect(res.status).toBe(200);
    } finally {
      await fresh.drop();
    }
  });

  test.concurrent("takes ADMIN_EMAIL, ADMIN_PASSWORD and ADMIN_TOKEN from the environment, echoing none", async () => {
    const fresh = await freshDatabase();
    try {
      const token = "provisioned-root-token-0123456789abcdef";
      const config = loadConfig({ ADMIN_EMAIL: "Ops@Example.com", ADMIN_PASSWORD: "correct horse", ADMIN_TOKEN: token, SEED_DEMO: "false" });
      const first = await bootstrap(fresh.handle.db, config, new Date());
      expect(first).toEqual({ email: "Ops@Example.com", password: null, rootKey: null });
      const [key] = await fresh.handle.db.select().from(adminKeys);
      expect(key!.keyHash).toBe(hashToken(token));
      expect(key!.scopes.length).toBe(13); // every admin scope (content:publish, webhooks:write, media:write and theme:write among them)
      expect(key!.scopes).toContain("theme:write");
      expect(key!.scopes).toContain("users:write");
      expect(await verifyUser(fresh.handle.db, "ops@example.com", "correct horse")).not.toBeNull();
      expect(await fresh.handle.db.select().from(projects).where(eq(projects.slug, "demo"))).toHaveLength(0);
      const deps = { config, db: fresh.handle.db, dbHandle: fresh.handle, fetch, now: () => new Date(), log: silentLogger, keyRing: await createKeyRing(parseKeyEntries([generateKeyEntry()])) };
      const res = await createApp(deps).app.handle(new Request("http://localhost/admin/projects", { headers: { authorization: `Bearer ${token}` } }));
      expect(res.status).toBe(200);
    } finally {
      await fresh.drop();
    }
  });
});

describe("CLI", () => {
  // Mostly waiting on its CLI processes, so it runs beside the bootstrap tests (test.concurrent).
  test.concurrent("users:create, keys:create, keys:list, keys:revoke against the configured database", async () => {
    // PostgreSQL: a database of its own; embedded: the CLI's own DATA_DIR (an in-memory one would go unused).
    const fresh = process.env.DATABASE_URL?.startsWith("postgres") ? await freshDatabase() : null;
    const dir = mkdtempSync(join(tmpdir(), "cms-cli-"));
    const env: Record<string, string> = { ...(process.env as Record<string, string>), SEED_DEMO: "false", LOG_LEVEL: "silent" };
    if (fresh?.url) env.DATABASE_URL = fresh.url;
    else {
      delete env.DATABASE_URL;
      env.DATA_DIR = dir;
    }
    const cli = async (...args: string[]): Promise<{ code: number; out: string }> => {
      const stdin = args[0] === "--stdin" ? new Blob([args.splice(0, 2)[1]!]) : "ignore";
      const p = Bun.spawn([process.execPath, "src/cli.ts", ...args], { env, stdin, stdout: "pipe", stderr: "pipe", cwd: join(import.meta.dir, "..") });
      const out = await new Response(p.stdout).text();
      return { code: await p.exited, out };
    };
    try {
      const u = await cli("users:create", "--email", "ed@example.com", "--password", "a-long-password", "--role", "member");
      expect(u.code).toBe(0);
      expect(JSON.parse(u.out)).toMatchObject({ email: "ed@example.com", role: "member", memberships: [] });
      const fromStdin = await cli("--stdin", "piped-password-123\n", "users:create", "--email", "piped@example.com", "--role", "owner");
      expect(fromStdin.code).toBe(0);
      const k = await cli("keys:create", "--name", "deploy", "--scopes", "content:read,content:write");
      expect(k.code).toBe(0);
      const created = JSON.parse(k.out);
      expect(created.key).toMatch(/^cms_ak_/);
      expect(created.scopes).toEqual(["content:read", "content:write"]);
      const l = await cli("keys:list");
      expect(l.out).toContain(created.id);
      expect(l.out).not.toContain(created.key);
      expect((await cli("keys:revoke", created.id)).code).toBe(0);
      expect((await cli("keys:list")).out).toMatch(/"revoked_at":"\d{4}-/);
      expect((await cli("users:create", "--email", "bad", "--password", "x")).code).toBe(1);
      expect((await cli("nonsense")).code).toBe(2);
      // The password read from standard input is the one stored.
      const check = fresh ? fresh.handle : await openDb({ databaseUrl: null, dataDir: dir });
      expect(await verifyUser(check.db, "piped@example.com", "piped-password-123")).not.toBeNull();
      if (!fresh) await check.close();
    } finally {
      if (fresh) await fresh.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000); // nine CLI processes, each opening the database: slow beside a parallel worker
});

test("PUBLIC_URL is canonicalised (it is the OAuth issuer and MCP resource)", () => {
  expect(loadConfig({ PUBLIC_URL: "HTTPS://CMS.Example.com:443/" }).publicUrl).toBe("https://cms.example.com");
  expect(loadConfig({ PUBLIC_URL: "http://localhost:8080/base/" }).publicUrl).toBe("http://localhost:8080/base");
  expect(loadConfig({ PORT: "4000" }).publicUrl).toBe("http://localhost:4000");
});
