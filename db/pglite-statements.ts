// Named prepared statements on the embedded database. PGlite's `query` sends every statement
// unnamed (Parse, Describe, Bind, Describe, Execute, Sync: five calls into the WebAssembly
// module), so PostgreSQL parses, analyses and plans it again each time; a search statement spent
// a fifth of its time there (bench/search, 60 queries: 190-223 ms unnamed, 121 ms prepared). Here
// a statement is parsed and described once per text, under a name, and each execution is one call
// (Bind, Execute, Sync), with the plan PostgreSQL caches for the statement (custom plans at first,
// then the generic one where it costs no more). The texts are the delivery reads' (src/delivery/
// prepared.ts): a few shapes each, but some hold data (a collection's path), so the least recently
// used are closed past MAX_STATEMENTS.
import { type PGlite, parse, type Results, protocol as wire } from "@electric-sql/pglite";

const protocol = wire.serialize;

/** Statements kept prepared per database, at most. */
const MAX_STATEMENTS = 200;
/** PostgreSQL's feature_not_supported: a prepared statement whose tables changed their row type ("cached plan must not change result type"). */
const STALE_PLAN = "0A000";

type Message = Awaited<ReturnType<PGlite["execProtocolStream"]>>[number];
interface Statement {
  readonly name: string;
  /** The parameters' type OIDs, as PostgreSQL inferred them. */
  readonly types: number[];
  /** The statement's RowDescription (none for a statement that returns no rows). */
  readonly description: Message | undefined;
}

interface Internals {
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
}

/** The parsers drizzle's PGlite driver gives its queries (timestamps and dates as text). */
type QueryOptions = Parameters<typeof parse.parseResults>[2];

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

class Statements {
  readonly #known = new Map<string, Statement>();
  #next = 0;
  constructor(private readonly client: PGlite) {}

  async #prepare(text: string): Promise<Statement> {
    const known = this.#known.get(text);
    if (known) {
      // Most recently used last: a Map iterates in insertion order.
      this.#known.delete(text);
      this.#known.set(text, known);
      return known;
    }
    const name = `s${this.#next++}`;
    const messages = await this.#send([protocol.parse({ name, text }), protocol.describe({ type: "S", name })]);
    const statement = { name, types: parse.parseDescribeStatementResults(messages), description: messages.find((m) => m.name === "rowDescription") };
    this.#known.set(text, statement);
    if (this.#known.size > MAX_STATEMENTS) {
      const [oldest, old] = this.#known.entries().next().value as [string, Statement];
      this.#known.delete(oldest);
      await this.#send([protocol.close({ type: "S", name: old.name })]);
    }
    return statement;
  }

  #send(messages: Uint8Array[]): Promise<Message[]> {
    return this.client.execProtocolStream(concat([...messages, protocol.sync()]), { syncToFs: false });
  }

  async #run(text: string, params: readonly unknown[], options: QueryOptions): Promise<Results> {
    const statement = await this.#prepare(text);
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const type = statement.types[i] ?? 0;
      const serialize = options?.serializers?.[type] ?? this.client.serializers[type];
      return serialize ? serialize(v) : String(v);
    });
    const messages = await this.#send([protocol.bind({ statement: statement.name, values }), protocol.execute({})]);
    const [result] = parse.parseResults(statement.description ? [statement.description, ...messages] : messages, this.client.parsers, options);
    return result ?? { rows: [], fields: [] };
  }

  /** `text` with `params`, as `PGlite.query` answers it: run when no transaction is open and no other query runs. */
  query(text: string, params: readonly unknown[], options: QueryOptions): Promise<Results> {
    // Closed, before or while waiting for its turn: PGlite's own error (read as the database being unavailable).
    const closed = (): Error | null => (this.client.closed ? new Error("PGlite is closed") : null);
    const before = closed();
    if (before) return Promise.reject(before);
    const client = this.client as unknown as Internals;
    return client._runExclusiveTransaction(() =>
      client._runExclusiveQuery(async () => {
        const meanwhile = closed();
        if (meanwhile) throw meanwhile;
        try {
          return await this.#run(text, params, options);
        } catch (err) {
          if ((err as { code?: unknown }).code !== STALE_PLAN) throw err;
          // A migration changed a table under the statement: prepared again, once.
          const stale = this.#known.get(text);
          this.#known.delete(text);
          if (stale) await this.#send([protocol.close({ type: "S", name: stale.name })]);
          return await this.#run(text, params, options);
        } finally {
          await this.client.syncToFs();
        }
      }),
    );
  }
}

const byClient = new WeakMap<PGlite, Statements>();
/** The prepared statements of `client`. */
export function pgliteStatements(client: PGlite): Statements {
  let s = byClient.get(client);
  if (!s) byClient.set(client, (s = new Statements(client)));
  return s;
}
