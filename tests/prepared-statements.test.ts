// DATABASE_PREPARED_STATEMENTS, seen on the wire. A statement reaches PostgreSQL in a Parse message
// (extended query protocol) that names it: an empty name is the unnamed statement, parsed for this
// execution only; any other name is a prepared statement the server keeps on that connection,
// which a pooler in transaction mode before pgbouncer 1.21 cannot follow. A loopback proxy reads
// every Parse the service sends while it writes and serves delivery reads.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";
import { generateKeyEntry } from "../src/lib/seal";
import { openRuntime } from "../src/runtime";
import { harness, pgUrl, seedNode, seedProject } from "./helpers";
import { pgProxyFor } from "./pg-proxy";

test("DATABASE_PREPARED_STATEMENTS is a boolean, true by default; anything else is a start-up problem", () => {
  expect(loadConfig({}).databasePreparedStatements).toBe(true);
  for (const off of ["false", "0", "no", "FALSE"]) expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: off }).databasePreparedStatements).toBe(false);
  for (const on of ["true", "1", "yes"]) expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: on }).databasePreparedStatements).toBe(true);
  let thrown: unknown = null;
  try {
    loadConfig({ DATABASE_PREPARED_STATEMENTS: "off", PORT: "x" });
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  expect((thrown as ConfigError).problems).toEqual(["PORT must be an integer between 0 and 65535", "DATABASE_PREPARED_STATEMENTS must be true or false"]);
});

/** The SQL of the Parse messages the clients of one proxy sent, by whether the statement was named (prepared) or not. */
interface Parses {
  unnamed: string[];
  named: string[];
  /** A connection asked for TLS or GSS encryption: what it sent after may be unreadable here. */
  encrypted: boolean;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** A reader of one connection's client bytes: the untyped start-up messages, then typed messages (type byte, int32 length). */
function parseReader(seen: Parses): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) seen.encrypted = true;
        else started = true;
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      if (pending[0] === 0x50 /* 'P': Parse */) {
        const body = pending.subarray(5, 1 + length);
        const nameEnd = body.indexOf(0);
        const name = body.subarray(0, nameEnd).toString("utf8");
        const query = body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString("utf8");
        (name === "" ? seen.unnamed : seen.named).push(query.trim());
      }
      pending = pending.subarray(1 + length);
    }
  };
}

/**
 * Starts the app as the service does (loadConfig, openRuntime, createApp) on PostgreSQL through the
 * proxy, with DATABASE_PREPARED_STATEMENTS as given, and runs writes (transactions) and delivery
 * reads (a cache miss is the prepared chain read). Answers the Parse messages it sent.
 */
async function parsesOfService(preparedStatements: string): Promise<Parses> {
  const seen: Parses = { unnamed: [], named: [], encrypted: false };
  const proxy = await pgProxyFor(pgUrl!, { tap: () => parseReader(seen) });
  const env = {
    DATABASE_URL: proxy.url,
    DATABASE_PREPARED_STATEMENTS: preparedStatements,
    DB_POOL_SIZE: "2",
    SECRET_KEYS: generateKeyEntry(),
    LOG_LEVEL: "silent",
  };
  const deps = await openRuntime(loadConfig(env));
  try {
    const h = await harness(env, { db: deps.db, dbHandle: deps.dbHandle, keyRing: deps.keyRing });
    const p = await seedProject(h, { locales: ["en"] });
    for (const slug of ["about", "team", "contact"]) {
      const node = await seedNode(h, p.slug, { slug, title: slug, blocks: [{ type: "text", data: { text: `<p>${slug}</p>` } }] }, true);
      // A write after publishing and its publication: more transactions of the same shapes, then the fresh read.
      expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: `${slug} again` } })).status).toBe(200);
      expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`)).status).toBe(200);
      const read = await h.request("GET", `/api/p/${p.slug}/nodes/by-path/${slug}`, { key: null });
      expect(read.status).toBe(200);
      expect(read.json.data.title).toBe(`${slug} again`);
    }
  } finally {
    await deps.dbHandle.close();
    await proxy.close();
  }
  return seen;
}

describe.if(pgUrl !== null)("prepared statements on PostgreSQL, the Parse messages on the wire (PostgreSQL only: needs DATABASE_URL; the embedded database has no wire)", () => {
  test("DATABASE_PREPARED_STATEMENTS=false: every statement is sent unnamed, the writes' and the delivery reads' too", async () => {
    const seen = await parsesOfService("false");
    expect(seen.encrypted).toBe(false);
    expect(seen.named).toEqual([]);
    expect(seen.unnamed.some((q) => q.startsWith('insert into "nodes"'))).toBe(true);
    expect(seen.unnamed.some((q) => q.startsWith("with recursive"))).toBe(true);
  });

  test("by default the writes' statements (in transactions) and the delivery chain read are prepared", async () => {
    const seen = await parsesOfService("true");
    expect(seen.encrypted).toBe(false);
    expect(seen.named.some((q) => q.startsWith('insert into "nodes"'))).toBe(true);
    expect(seen.named.some((q) => q.startsWith("with recursive"))).toBe(true);
  });
});
