import { afterAll } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { DbHandle, OpenDbOptions } from "../db/client";
import { MIGRATIONS_FOLDER } from "../db/migrate";
import { type App, createApp, type Service } from "../src/app";
import { type Config, loadConfig } from "../src/config";
import type { AppDeps } from "../src/core/deps";
import type { Front } from "../src/delivery/front";
import { createAdminKey } from "../src/keys/service";
import { createLogger, type Logger } from "../src/lib/log";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { createKeyRing, generateKeyEntry, parseKeyEntries } from "../src/lib/seal";

declare global {
  /** tests/helpers.ts: a migrated empty PGlite's files, which freshDatabase loads (once per run). */
  var __freshDump: Promise<Blob> | undefined;
}

export async function testDb(): Promise<DbHandle> {
  if (!globalThis.__testDb) throw new Error("tests/setup.ts was not preloaded");
  return globalThis.__testDb;
}

export interface TestHarness {
  app: App;
  /** The app's front: what the server answers before the app (hot delivery reads). */
  front: Front;
  /** Renders marked stored delivery answers again (the refresher main.ts runs). */
  refreshAnswers: Service["refreshAnswers"];
  deps: AppDeps;
  /** A key with every scope and no project limit. */
  rootKey: string;
  logs: string[];
  request(method: string, path: string, opts?: RequestOpts): Promise<TestResponse>;
}

export interface RequestOpts {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: BodyInit;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export const BASE = "http://localhost";

/** A response read once: status, headers, text, and the JSON body when there is one. */
export async function readReply(res: Response): Promise<TestResponse> {
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function harness(env: Record<string, string> = {}, overrides: Partial<AppDeps> = {}): Promise<TestHarness> {
  const dbHandle = await testDb();
  const config: Config = loadConfig({ LOG_LEVEL: "debug", PUBLIC_URL: BASE, SEED_DEMO: "false", ...env });
  const logs: string[] = [];
  const log: Logger = createLogger("debug", (l) => logs.push(l));
  const keyRing = overrides.keyRing ?? (await createKeyRing(parseKeyEntries(config.secretKeys ?? [generateKeyEntry()])));
  const deps: AppDeps = { config, db: dbHandle.db, dbHandle, fetch: globalThis.fetch, now: () => new Date(), log, keyRing, ...overrides };
  const { app, front, refreshAnswers, answersStored } = createApp(deps);
  const { plaintext } = await createAdminKey(deps.db, { name: "test-root", scopes: [...ADMIN_SCOPES] }, null, new Date());
  const request = async (method: string, path: string, opts: RequestOpts = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? plaintext : opts.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: BodyInit | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const reply = await readReply(await app.handle(new Request(BASE + path, { method, headers, body })));
    // Delivery stores a render after its answer: stored before the test goes on, so that what it reads or counts next does not
    // depend on when the store ran.
    await answersStored();
    return reply;
  };
  return { app, front, refreshAnswers, deps, rootKey: plaintext, logs, request };
}

let counter = 0;
export function uniqueSlug(prefix = "p"): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 6)}`;
}

/** A fresh project (two locales by default) created through the admin API. */
export async function seedProject(h: TestHarness, input: { locales?: string[]; default_locale?: string; public_base_url?: string | null } = {}): Promise<{ id: string; slug: string }> {
  const slug = uniqueSlug();
  const res = await h.request("POST", "/admin/projects", {
    body: { slug, name: slug, default_locale: input.default_locale ?? "en", locales: input.locales ?? ["en", "fr"], public_base_url: input.public_base_url ?? null },
  });
  if (res.status !== 201) throw new Error(`seedProject failed: ${res.status} ${res.text}`);
  return { id: res.json.data.id, slug };
}

/** Creates a node through the admin API, optionally published. */
export async function seedNode(h: TestHarness, ref: string, input: Record<string, unknown> & { slug: string; title?: string }, publish = false): Promise<any> {
  const res = await h.request("POST", `/admin/p/${ref}/nodes`, { body: { title: input.slug, ...input } });
  if (res.status !== 201) throw new Error(`seedNode failed: ${res.status} ${res.text}`);
  if (publish) {
    const p = await h.request("POST", `/admin/p/${ref}/nodes/${res.json.data.id}/publish`);
    if (p.status !== 200) throw new Error(`publish failed: ${p.status} ${p.text}`);
  }
  return res.json.data;
}

/** Published versions for a project's nodes written straight into the tables (bulk fixtures): src/content/publish.ts. */
export { mirrorPublishedVersions as mirrorPublished } from "../src/content/publish";

export async function keyWith(h: TestHarness, scopes: string[], projectIds: string[] | null = null): Promise<string> {
  const { plaintext } = await createAdminKey(h.deps.db, { name: "scoped", scopes, project_ids: projectIds }, null, new Date());
  return plaintext;
}

/**
 * A new PGlite's initdb costs seconds, loading a dump of its files a few hundred ms: the first
 * call of the run migrates an empty database and dumps it, the next ones reuse that dump.
 */
function migratedDump(): Promise<Blob> {
  globalThis.__freshDump ??= (async () => {
    const { openDb } = await import("../db/client");
    const { runMigrations } = await import("../db/migrate");
    const first = await openDb({ databaseUrl: "memory://", dataDir: "" });
    try {
      await runMigrations(first);
      return await (first.db as unknown as { $client: PGlite }).$client.dumpDataDir("none");
    } finally {
      await first.close();
    }
  })();
  return globalThis.__freshDump;
}

/**
 * A DATA_DIR holding a migrated, empty embedded database, for a service process a test starts
 * when its test is not about a first start: the service opens the files instead of running
 * initdb. The caller removes the directory.
 */
export async function migratedDataDir(): Promise<string> {
  const { PGlite } = await import("@electric-sql/pglite");
  const loadDataDir = await migratedDump();
  const dir = mkdtempSync(join(tmpdir(), "cms-data-"));
  const client = new PGlite({ dataDir: dir, loadDataDir });
  await client.waitReady;
  await client.close();
  return dir;
}

/**
 * A database of its own (for tests that need an empty one, e.g. bootstrap): a new PGlite in
 * memory, or, when the run is on PostgreSQL, a new database on the same server, dropped after.
 * `migrationsFolder` (default: db/migrations) lets a test start from an older schema.
 */
export async function freshDatabase(migrationsFolder?: string): Promise<{ handle: DbHandle; url: string | null; drop(): Promise<void> }> {
  const { openDb } = await import("../db/client");
  const { runMigrations } = await import("../db/migrate");
  if (!runPgUrl()) {
    if (migrationsFolder === undefined) {
      const loadDataDir = await migratedDump();
      const handle = await openDb({ databaseUrl: "memory://", dataDir: "", pglite: { loadDataDir } as OpenDbOptions["pglite"] });
      return { handle, url: null, drop: () => handle.close() };
    }
    const handle = await openDb({ databaseUrl: "memory://", dataDir: "" });
    await runMigrations(handle, migrationsFolder);
    return { handle, url: null, drop: () => handle.close() };
  }
  const empty = await emptyPgDatabase();
  const handle = await openDb({ databaseUrl: empty.url, dataDir: "", poolSize: 2 });
  await runMigrations(handle, migrationsFolder);
  return {
    handle,
    url: empty.url,
    async drop() {
      await handle.close();
      await empty.drop();
    },
  };
}

/**
 * Polls `condition` until it returns a truthy value, which it returns; throws when `timeout` ms
 * pass first. Tests wait for what they need, never for a fixed time.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, opts: { timeout?: number; interval?: number; what?: string } = {}): Promise<Exclude<T, false | 0 | "" | null | undefined>> {
  const { timeout = 5000, interval = 10, what = "the condition" } = opts;
  const deadline = performance.now() + timeout;
  for (;;) {
    const value = await condition();
    if (value) return value as Exclude<T, false | 0 | "" | null | undefined>;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await Bun.sleep(interval); // fixed wait: the poll interval of the one wait for a condition
  }
}

/** A port nothing listens on now, for a real service process a test starts. */
export function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port ?? 0;
  s.stop(true);
  return port;
}

/** A migrations folder holding every migration that came before `tag`. */
/**
 * A database created by the schema before the migration whose tag ends with `tagSuffix` (to fill as
 * that version would, then migrate), dropped with its migrations folder after the file's tests.
 */
export async function previousSchemaDatabase(tagSuffix: string): Promise<{ handle: DbHandle; exec(query: string): Promise<unknown> }> {
  const folder = migrationsBefore(tagSuffix);
  const fresh = await freshDatabase(folder);
  afterAll(async () => {
    await fresh.drop();
    rmSync(folder, { recursive: true, force: true });
  });
  return { handle: fresh.handle, exec: async (q) => fresh.handle.db.execute(sql.raw(q)) };
}

function migrationsBefore(tagSuffix: string): string {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, "meta/_journal.json"), "utf8")) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag.endsWith(tagSuffix));
  if (at < 1) throw new Error(`no migration ${tagSuffix} after the first`);
  const dir = mkdtempSync(join(tmpdir(), "cms-old-schema-"));
  mkdirSync(join(dir, "meta"));
  const entries = journal.entries.slice(0, at);
  for (const e of entries) copyFileSync(join(MIGRATIONS_FOLDER, `${e.tag}.sql`), join(dir, `${e.tag}.sql`));
  writeFileSync(join(dir, "meta/_journal.json"), JSON.stringify({ ...journal, entries }));
  return dir;
}

/** The run's PostgreSQL database (DATABASE_URL, as tests/setup.ts leaves it), or null when the run is on the embedded database. */
function runPgUrl(): string | null {
  return process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;
}

/** runPgUrl() when the test files load (after the preload). */
export const pgUrl: string | null = runPgUrl();

/** OAuth rate limits no test reaches (the tests of those limits set their own). */
export const HIGH_LIMITS = { OAUTH_REGISTER_RATE_LIMIT: "1000000", OAUTH_TOKEN_RATE_LIMIT: "1000000", OAUTH_SIGNIN_RATE_LIMIT: "1000000" };

/**
 * An empty database of its own on the run's PostgreSQL server (not migrated: a service started on
 * it migrates it), for a test that terminates its backends or puts a proxy before it. `drop` removes it.
 */
export async function emptyPgDatabase(prefix = "t"): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const base = runPgUrl();
  if (!base) throw new Error("emptyPgDatabase: the run is not on PostgreSQL (DATABASE_URL)");
  const { default: postgres } = await import("postgres");
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      try {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * A request as an API client sends it to a service: `authorization: Bearer <token>`, `body` as JSON
 * (or `raw` as given), given up after `timeoutMs` when set.
 */
export function sendJson(url: string, token: string, method: string, opts: { body?: unknown; raw?: string; timeoutMs?: number } = {}): Promise<Response> {
  const body = opts.body === undefined ? opts.raw : JSON.stringify(opts.body);
  const signal = opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs);
  return fetch(url, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body, signal });
}
