import { mkdirSync } from "node:fs";
import { type Extensions, PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";
import { type SQL, sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite, PgliteSession } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres, PostgresJsSession } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type DataDirLock, DataDirUnusableError, lockDataDir } from "./lock";
import { pgliteStatements } from "./pglite-statements";
import * as schema from "./schema";

export type Schema = typeof schema;
const embedded = new WeakSet<object>();
/**
 * Whether `db` is an embedded PGlite database (whose queries run on the serving thread), or an app's
 * view of one (src/lib/commits.ts ownDb): told by its client, not a transaction of one.
 */
export const isEmbeddedDb = (db: Db): boolean => {
  const client = (db as { $client?: unknown }).$client;
  return typeof client === "object" && client !== null && embedded.has(client);
};

/** Both drivers' databases (and their transactions) are PgDatabases over one schema. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface DbHandle {
  readonly db: Db;
  readonly driver: "postgres" | "pglite";
  /** Subscribe to a NOTIFY channel; returns the unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Run fn while holding a session-level advisory lock (migrations from several instances). */
  withLock<T>(lockId: number, fn: (db: Db) => Promise<T>): Promise<T>;
}

export interface OpenDbOptions {
  databaseUrl: string | null;
  dataDir: string;
  poolSize?: number;
  /**
   * PostgreSQL: false prepares no statement at all (postgres.js `prepare: false` overrides every
   * query's own, so neither the transactions' statements nor the delivery reads are named), for a
   * pooler that cannot keep them (pgbouncer before 1.21 in transaction pooling). Default true.
   */
  preparedStatements?: boolean;
  /** `extensions`: the contrib builds search needs (pg_trgm, unaccent), from elsewhere than next to PGlite's module (the single binary). */
  pglite?: { pgliteWasmModule?: WebAssembly.Module; initdbWasmModule?: WebAssembly.Module; fsBundle?: Blob; extensions?: Extensions };
  /** Who opens an embedded DATA_DIR (named to the next process that finds it locked), e.g. "the service on port 3000". */
  holder?: string;
  /** Told once when the platform has no flock and the directory stays unguarded. */
  onUnguarded?: () => void;
}

/**
 * Embedded PostgreSQL lives in the process's memory. initdb's 128 MB of shared_buffers (a page
 * cache inside the WebAssembly heap, on top of the kernel's page cache of the data files) made
 * most of the ~300-470 MiB an idle embedded instance held; with 64 MB it rests near 230 MiB and
 * cache misses are no slower (16 MB: 175 MiB, but misses on a 90 MB site cost 20% more CPU).
 * Figures: bench/README.md.
 */
const PGLITE_PARAMS = ["-c", "shared_buffers=64MB"];

export async function openDb(opts: OpenDbOptions): Promise<DbHandle> {
  if (opts.databaseUrl?.startsWith("postgres")) return openPostgres(opts.databaseUrl, opts.poolSize ?? 10, opts.preparedStatements ?? true);
  const inMemory = opts.databaseUrl === "memory://";
  let lock: DataDirLock | null = null;
  if (!inMemory) {
    try {
      mkdirSync(opts.dataDir, { recursive: true });
    } catch (err) {
      throw new DataDirUnusableError(
        `DATA_DIR ${opts.dataDir} cannot be created (${(err as NodeJS.ErrnoException).code ?? String(err)}): create it and give the service's user write access, or set DATA_DIR to a writable directory`,
      );
    }
    // One process at a time: two PGlite instances over the same files lose acknowledged writes.
    lock = await lockDataDir(opts.dataDir, opts.holder ?? `process ${process.argv.slice(1).join(" ")}`);
    if (!lock) opts.onUnguarded?.();
  }
  // Search folds accents and matches trigrams (migration 0017): PGlite's builds of unaccent and pg_trgm.
  const client = new PGlite({ dataDir: inMemory ? undefined : opts.dataDir, startParams: [...PGlite.defaultStartParams, ...PGLITE_PARAMS], extensions: { pg_trgm, unaccent }, ...opts.pglite });
  try {
    await client.waitReady;
  } catch (err) {
    lock?.release();
    throw err;
  }
  yieldBeforeTransactions(client);
  nameEmbeddedStatements();
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  embedded.add(client);
  return {
    db,
    driver: "pglite",
    async listen(channel, onPayload) {
      const unsub = await client.listen(channel, onPayload);
      return async () => unsub();
    },
    async ping() {
      await client.query("select 1");
    },
    async close() {
      try {
        if (!client.closed) await client.close();
      } finally {
        lock?.release();
      }
    },
    // PGlite is single-connection and in-process: there is no other instance to race.
    withLock: (_lockId, fn) => fn(db),
  };
}

/**
 * drizzle sends every statement unnamed, so PostgreSQL parses and plans it at each execution. Inside
 * a transaction (the writes: a content write is some ten statements of a few fixed shapes)
 * statements are prepared instead: postgres.js names them and keeps them per connection, so the
 * next write parses nothing and plans with the cached plan (the admin write bench: bench/README.md).
 * Reads outside a transaction stay unnamed: some carry literals (the by-field entries read writes
 * its collection into the statement), which would pile up as prepared statements. A client opened
 * with `preparedStatements: false` names none of them (postgres.js `prepare: false` wins).
 */
let preparing = false;
function prepareInTransactions(): void {
  if (preparing) return;
  preparing = true;
  const proto = PostgresJsSession.prototype;
  const unnamed = proto.prepareQuery;
  proto.prepareQuery = function (this: PostgresJsSession<postgres.Sql, Record<string, unknown>, never>, query, fields, name, ...rest) {
    // Only a transaction's sql (postgres.js begin) has savepoint; a name, even empty, makes drizzle prepare.
    const inTransaction = typeof (this.client as { savepoint?: unknown }).savepoint === "function";
    return unnamed.call(this, query, fields, name ?? (inTransaction ? "" : undefined), ...rest);
  } as typeof unnamed;
}

/**
 * A statement drizzle is asked to prepare under a name (the delivery reads: src/delivery/prepared.ts)
 * runs on PGlite as a named prepared statement (./pglite-statements.ts), as postgres.js runs it on
 * PostgreSQL; inside a transaction (its client is the transaction's, not the PGlite) it stays unnamed.
 */
let naming = false;
function nameEmbeddedStatements(): void {
  if (naming) return;
  naming = true;
  const proto = PgliteSession.prototype;
  const unnamed = proto.prepareQuery;
  proto.prepareQuery = function (this: PgliteSession<Record<string, unknown>, never>, query, fields, name, ...rest) {
    const prepared = unnamed.call(this, query, fields, name, ...rest);
    const client = (this as unknown as { client: object }).client;
    if (name !== undefined && embedded.has(client)) (prepared as unknown as { client: unknown }).client = pgliteStatements(client as PGlite);
    return prepared;
  } as typeof unnamed;
}

/**
 * PGlite runs each query on this thread, and a transaction waiting for the connection starts the
 * moment the one before it ends, without a turn of the event loop in between: under a stream of
 * writes, nothing else that waits for the loop (an answer to send, a webhook's response, a timer)
 * gets it until the writes stop. Each transaction begins with one turn of the loop.
 */
function yieldBeforeTransactions(client: PGlite): void {
  const transaction = client.transaction.bind(client);
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  client.transaction = (callback) =>
    transaction(async (tx) => {
      await turn();
      return callback(tx);
    });
}

function openPostgres(url: string, poolSize: number, prepare: boolean): DbHandle {
  const client = postgres(url, {
    max: poolSize,
    prepare,
    onnotice: () => {},
    connect_timeout: 10,
    idle_timeout: 60,
    // A dead backend (terminated, failover) is dropped and a fresh one opened on next use.
    max_lifetime: 60 * 30,
    // Seconds before a closed connection reconnects. The driver's default grows 3^n with the
    // failures of the whole pool (7 s after six) and holds the query waiting on it that long;
    // capped at 1 s, a query waits at most about a second once the server is back.
    backoff: (attempt: number) => Math.min(0.02 * 2 ** attempt, 1) * (0.5 + Math.random() / 2),
    // No JIT: it compiles a statement on every execution (prepared ones too) once its estimated
    // cost passes jit_above_cost, and estimates of set-returning functions (jsonb_path_query in a
    // page's references) pass it on a handful of rows: 50-55 ms of compiling for a render of 1 ms.
    // Every statement here is a short one on indexed rows.
    connection: { jit: "off" },
  });
  if (prepare) prepareInTransactions();
  const db = drizzlePostgres(client, { schema }) as unknown as Db;
  return {
    db,
    driver: "postgres",
    async listen(channel, onPayload) {
      const sub = await client.listen(channel, onPayload);
      return async () => sub.unlisten();
    },
    async ping() {
      await client`select 1`;
    },
    async close() {
      await client.end({ timeout: 5 });
    },
    async withLock(lockId, fn) {
      const one = postgres(url, { max: 1, prepare, onnotice: () => {} });
      try {
        await one`select pg_advisory_lock(${lockId})`;
        return await fn(drizzlePostgres(one, { schema }) as unknown as Db);
      } finally {
        await one`select pg_advisory_unlock(${lockId})`.catch(() => {});
        await one.end({ timeout: 5 });
      }
    },
  };
}

/** The one place pg_notify is written: a NOTIFY as an expression, for a statement that sends one beside its own work. */
export const notifyCall = (channel: string, payload: string): SQL => sql`pg_notify(${channel}, ${payload})`;

/** NOTIFY on `channel`; inside a transaction it is delivered at commit. */
export async function notify(db: Db, channel: string, payload: string): Promise<void> {
  await db.execute(sql`select ${notifyCall(channel, payload)}`);
}
