// Shared by the delivery test files.
import { type Db, type DbHandle, openDb } from "../db/client";
import { freshDatabase, type TestHarness, type TestResponse } from "./helpers";
import { pgProxy } from "./pg-proxy";

/** An anonymous delivery read (no admin key). */
export function get(h: TestHarness, path: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return h.request("GET", path, { key: null, headers });
}

/** Writes a translation, published unless `body.status` says draft (a working copy only, then). */
export async function translate(h: TestHarness, ref: string, nodeId: string, locale: string, body: Record<string, unknown>): Promise<void> {
  const res = await h.request("PUT", `/admin/p/${ref}/nodes/${nodeId}/translations/${locale}`, { body: { status: "published", ...body } });
  if (res.status !== 200) throw new Error(`translate failed: ${res.status} ${res.text}`);
}

export async function transition(h: TestHarness, ref: string, nodeId: string, action: "publish" | "unpublish" | "archive" | "restore"): Promise<void> {
  const res = await h.request("POST", `/admin/p/${ref}/nodes/${nodeId}/${action}`);
  if (res.status !== 200) throw new Error(`${action} failed: ${res.status} ${res.text}`);
}

/** An editor's edit of a page: the working copy changes and, when the node is published, the change is published too. */
export async function patchNode(h: TestHarness, ref: string, nodeId: string, body: Record<string, unknown>): Promise<void> {
  const res = await h.request("PATCH", `/admin/p/${ref}/nodes/${nodeId}`, { body });
  if (res.status !== 200) throw new Error(`patch failed: ${res.status} ${res.text}`);
  if (res.json.data.status === "published") await transition(h, ref, nodeId, "publish");
}

/** Polls `read` until `done` holds or `ms` pass; returns the last value and the time it took. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<{ value: T; elapsed: number }> {
  const start = performance.now();
  for (;;) {
    const value = await read();
    const elapsed = performance.now() - start;
    if (done(value) || elapsed > ms) return { value, elapsed };
    await new Promise((r) => setTimeout(r, 20)); // fixed wait: the poll's interval, not a wait for something to happen
  }
}

/**
 * A small XML well-formedness check (enough for sitemaps): one root, balanced and properly nested
 * tags, quoted attributes without duplicates, only the five predefined entities or character
 * references, no stray `<` or `&`. Returns the problem, or null.
 */
export function xmlProblem(xml: string): string | null {
  let i = 0;
  if (xml.startsWith("<?xml")) {
    const end = xml.indexOf("?>");
    if (end < 0) return "unterminated XML declaration";
    i = end + 2;
  }
  const stack: string[] = [];
  let roots = 0;
  const NAME = /^[A-Za-z_][\w.:-]*/;
  const textOk = (s: string): boolean => !/[<>]/.test(s) && !/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(s);
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    const text = lt < 0 ? xml.slice(i) : xml.slice(i, lt);
    if (!textOk(text)) return `bad character data near ${i}`;
    if (text.trim() !== "" && stack.length === 0) return `text outside the root near ${i}`;
    if (lt < 0) break;
    const gt = xml.indexOf(">", lt);
    if (gt < 0) return `unterminated tag at ${lt}`;
    const tag = xml.slice(lt + 1, gt);
    i = gt + 1;
    if (tag.startsWith("/")) {
      const name = tag.slice(1).trim();
      if (stack.pop() !== name) return `mismatched </${name}> at ${lt}`;
      continue;
    }
    const selfClosing = tag.endsWith("/");
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const m = NAME.exec(body);
    if (!m) return `bad tag name at ${lt}`;
    const attrs = body.slice(m[0].length);
    const seen = new Set<string>();
    const ATTR = /\s+([A-Za-z_][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/y;
    let pos = 0;
    while (pos < attrs.trimEnd().length) {
      ATTR.lastIndex = pos;
      const a = ATTR.exec(attrs);
      if (!a) return `bad attribute syntax in <${m[0]}> at ${lt}`;
      if (seen.has(a[1]!)) return `duplicate attribute ${a[1]} at ${lt}`;
      seen.add(a[1]!);
      if (!textOk(a[3] ?? a[4] ?? "")) return `bad attribute value at ${lt}`;
      pos = ATTR.lastIndex;
    }
    if (stack.length === 0) roots += 1;
    if (roots > 1) return "more than one root element";
    if (!selfClosing) stack.push(m[0]);
  }
  if (stack.length > 0) return `unclosed <${stack[stack.length - 1]}>`;
  return roots === 1 ? null : "no root element";
}

function decodeXml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[e]!);
}

/** The <url> entries of a urlset: loc, lastmod and the hreflang → href alternates. */
export function urlsOf(xml: string): { loc: string; lastmod: string; alternates: Record<string, string> }[] {
  return [...xml.matchAll(/<url>([\s\S]*?)<\/url>/g)].map((m) => {
    const alternates: Record<string, string> = {};
    for (const l of m[1]!.matchAll(/<xhtml:link rel="alternate" hreflang="([^"]+)" href="([^"]+)"\/>/g)) alternates[decodeXml(l[1]!)] = decodeXml(l[2]!);
    return {
      loc: decodeXml(/<loc>([^<]*)<\/loc>/.exec(m[1]!)?.[1] ?? ""),
      lastmod: /<lastmod>([^<]*)<\/lastmod>/.exec(m[1]!)?.[1] ?? "",
      alternates,
    };
  });
}

/** What runs a prepared statement (drizzle's PreparedQuery): each call is one statement sent. */
const RUNS: ReadonlySet<string | symbol> = new Set(["execute", "all", "values", "get", "iterator"]);

/** A hook that sees each statement before it is sent; a promise it returns is waited for first. */
type Before = () => void | Promise<void>;

const gated = (before: Before, run: () => unknown): unknown => {
  const gate = before();
  return gate ? gate.then(run) : run();
};

/** A session whose prepared statements are seen by `before` each time they run. */
function watchedSession(session: object, before: Before): object {
  return new Proxy(session, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== "prepareQuery" || typeof v !== "function") return v;
      return (...args: unknown[]) =>
        new Proxy((v as (...a: unknown[]) => object).apply(receiver, args), {
          get(q, p, r) {
            const run = Reflect.get(q, p, r);
            return RUNS.has(p) && typeof run === "function" ? (...a: unknown[]) => gated(before, () => run.apply(q, a)) : run;
          },
        });
    },
  });
}

/**
 * The Db with every statement it sends seen first by `before` (which counts them, or takes the
 * database away at a chosen one): the query builder's select, insert, update and delete, execute,
 * the relational queries (db.query), the prepared statements delivery runs through the session, and
 * transactions (their BEGIN, then every statement inside, savepoints included). Each goes through the
 * session, which the proxy replaces wherever the Db hands it out.
 */
function watchedDb(db: Db, before: Before): Db {
  let session: object | null = null;
  const watchedQuery = (query: object): object =>
    new Proxy(query, {
      get: (t, table, r) => new Proxy(Reflect.get(t, table, r) as object, { get: (b, prop, rb) => (prop === "session" ? Reflect.get(proxy, "session") : Reflect.get(b, prop, rb)) }),
    });
  const proxy: Db = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "session") {
        session ??= watchedSession(Reflect.get(target, prop, target) as object, before);
        return session;
      }
      if (prop === "query") return watchedQuery(Reflect.get(target, prop, target) as object);
      if (prop === "transaction") {
        return (fn: (tx: Db) => Promise<unknown>, config?: unknown) =>
          gated(before, () => (target.transaction as (f: (tx: Db) => Promise<unknown>, c?: unknown) => Promise<unknown>).call(target, (tx) => fn(watchedDb(tx, before)), config));
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return proxy;
}

/** The Db with its statements counted. */
export function countingDb(db: Db): { db: Db; calls: () => number } {
  let n = 0;
  return { db: watchedDb(db, () => void (n += 1)), calls: () => n };
}

/** The same database with NOTIFY never delivered: only the version check or the writer's own announcement refreshes. */
export function deafHandle(handle: DbHandle): DbHandle {
  return { ...handle, listen: async () => async () => {} };
}

/**
 * A database of its own that really goes away under the app. PostgreSQL: reached through the
 * loopback proxy (tests/pg-proxy.ts), whose cut resets every connection and refuses new ones, and
 * whose restore lets them through again. The embedded database: the PGlite closed under the app,
 * which does not come back (`restore` is null). `db` counts the app's statements (`calls`) and can
 * take the database away just before one (`cutAfter`).
 */
export interface OutageDb {
  /** The app's handle (through the proxy on PostgreSQL). */
  readonly handle: DbHandle;
  /** The app's Db: handle.db, its statements counted. */
  readonly db: Db;
  /** A handle that does not go through the proxy (a writer that is not cut off); the same handle on PGlite. */
  readonly direct: DbHandle;
  calls(): number;
  cut(): Promise<void>;
  restore: (() => Promise<void>) | null;
  /** Once `allowed` more statements have run, the database is taken away before the next one is sent; null: never. */
  cutAfter(allowed: number | null): void;
  drop(): Promise<void>;
}

export async function outageDatabase(): Promise<OutageDb> {
  const fresh = await freshDatabase();
  if (!fresh.url)
    return outageOf(
      fresh.handle,
      fresh.handle,
      () => fresh.handle.close(),
      null,
      () => fresh.drop(),
    );
  const direct = new URL(fresh.url);
  const proxy = await pgProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const via = new URL(fresh.url);
  via.hostname = "127.0.0.1";
  via.port = String(proxy.port);
  const handle = await openDb({ databaseUrl: via.toString(), dataDir: "", poolSize: 3 });
  return outageOf(handle, fresh.handle, proxy.cut, proxy.restore, async () => {
    await proxy.restore().catch(() => {});
    await handle.close();
    await proxy.close();
    await fresh.drop();
  });
}

function outageOf(handle: DbHandle, direct: DbHandle, cut: () => Promise<void>, restore: (() => Promise<void>) | null, drop: () => Promise<void>): OutageDb {
  let n = 0;
  let left: number | null = null;
  const db = watchedDb(handle.db, () => {
    n += 1;
    if (left === null || left-- > 0) return;
    left = null;
    return cut();
  });
  return { handle, db, direct, calls: () => n, cut, restore, cutAfter: (allowed) => void (left = allowed), drop };
}
