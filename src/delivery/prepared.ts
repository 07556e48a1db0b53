// Delivery reads as named prepared statements. drizzle's `db.execute(sql)` sends every statement
// unprepared (postgres.js `unsafe` with prepare: false), so PostgreSQL parses and plans the
// recursive chain query on every cache miss: on the bench data set planning took ~1.1 ms and
// execution ~0.4 ms. Prepared, the plan is made once per connection and reused (postgres.js keys
// statements by their text and re-prepares after a schema change). PGlite runs the same text.
import type { SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";

interface Internals {
  dialect: { sqlToQuery(sql: SQL): { sql: string; params: unknown[] } };
  session: {
    prepareQuery(query: { sql: string; params: unknown[] }, fields: undefined, name: string | undefined, isResponseInArrayMode: boolean): { execute(): Promise<unknown> };
  };
}

/** The rows of `query`, run as a prepared statement (the statement's text is its identity). */
export async function preparedRows<T>(db: Db, query: SQL): Promise<T[]> {
  const internals = db as unknown as Internals;
  const q = internals.dialect.sqlToQuery(query);
  // A name makes drizzle's postgres.js driver pass prepare: true; postgres.js names the statement itself.
  return rows<T>(await internals.session.prepareQuery(q, undefined, "delivery", false).execute());
}
