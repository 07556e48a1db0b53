// Delivery reads as named prepared statements. drizzle's `db.execute(sql)` sends every statement
// unprepared (postgres.js `unsafe` with prepare: false), so PostgreSQL parses and plans the
// recursive chain query on every cache miss: on the bench data set planning took ~1.1 ms and
// execution ~0.4 ms. Prepared, the plan is made once per connection and reused (postgres.js keys
// statements by their text and re-prepares after a schema change). On PGlite, db/client.ts names
// them alike (db/pglite-statements.ts).
import { Param, Placeholder, SQL, StringChunk } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";

interface Internals {
  dialect: { sqlToQuery(sql: SQL): Query };
  session: {
    prepareQuery(query: Query, fields: undefined, name: string | undefined, isResponseInArrayMode: boolean): { execute(): Promise<unknown> };
  };
}
interface Query {
  sql: string;
  params: unknown[];
}

/**
 * Appends the text and parameters of `chunks` as drizzle's PostgreSQL dialect builds them (`$n`
 * placeholders, lists in parentheses), for what our raw statements hold: text, nested statements,
 * parameters and lists. Anything else (a table, a column, a name, a placeholder, an encoder's SQL,
 * inlined parameters): false, and drizzle builds the statement. drizzle's own builder copies its
 * options and allocates a result per chunk at every level: a search's statement took it 50-65 µs,
 * this 5-6 µs (measured on bench/search's 60 search statements).
 */
function append(chunks: readonly unknown[], out: Query): boolean {
  for (const chunk of chunks) {
    if (chunk instanceof StringChunk) out.sql += chunk.value.join("");
    else if (chunk instanceof SQL) {
      if ((chunk as unknown as { shouldInlineParams: boolean }).shouldInlineParams || !append(chunk.queryChunks, out)) return false;
    } else if (chunk === undefined) continue;
    else if (Array.isArray(chunk)) {
      out.sql += "(";
      for (let i = 0; i < chunk.length; i++) {
        if (i > 0) out.sql += ", ";
        if (!append([chunk[i]], out)) return false;
      }
      out.sql += ")";
    } else if (chunk instanceof Param) {
      if (chunk.value instanceof Placeholder) return false;
      const value = chunk.value === null ? null : chunk.encoder.mapToDriverValue(chunk.value);
      if (value instanceof SQL) return false;
      out.params.push(value);
      out.sql += `$${out.params.length}`;
    } else if (chunk === null || (typeof chunk !== "object" && typeof chunk !== "function")) {
      out.params.push(chunk);
      out.sql += `$${out.params.length}`;
    } else return false;
  }
  return true;
}

/** `query`'s text and parameters, as `db`'s dialect builds them. */
export function toQuery(db: Db, query: SQL): Query {
  const out: Query = { sql: "", params: [] };
  return append([query], out) ? out : (db as unknown as Internals).dialect.sqlToQuery(query);
}

/** The rows of `query`, run as a prepared statement (the statement's text is its identity). */
export async function preparedRows<T>(db: Db, query: SQL): Promise<T[]> {
  // A name makes drizzle's postgres.js driver pass prepare: true; postgres.js names the statement itself.
  return rows<T>(await (db as unknown as Internals).session.prepareQuery(toQuery(db, query), undefined, "delivery", false).execute());
}
