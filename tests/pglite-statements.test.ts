// Delivery reads on the embedded database run as named prepared statements (db/pglite-statements.ts):
// seen in pg_prepared_statements, answered as drizzle's own query answers, prepared once per text,
// kept below their bound, prepared again when a table changes under them, never run inside another
// caller's open transaction, and failing as an unnamed statement fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { type DbHandle, openDb } from "../db/client";
import { preparedRows } from "../src/delivery/prepared";
import { isDatabaseUnavailable } from "../src/errors";
import { rows } from "../src/lib/json";

let h: DbHandle;
beforeAll(async () => {
  h = await openDb({ databaseUrl: "memory://", dataDir: "" });
  await h.db.execute(sql`create table t (id int primary key, at timestamptz not null default now(), data jsonb, label text)`);
  await h.db.execute(sql`insert into t (id, data, label) values (1, '{"a": [1, "x"]}', 'one'), (2, null, null)`);
});
afterAll(() => h.close());

/** The PostgreSQL code of an error, or of its cause (drizzle wraps the driver's error). */
const codeOf = (err: unknown): unknown => (err as { code?: unknown }).code ?? (err as { cause?: { code?: unknown } }).cause?.code;

const prepared = async (): Promise<{ name: string; statement: string; generic: number; custom: number }[]> =>
  rows(await h.db.execute(sql`select name, statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements order by prepare_time`));

describe("PGlite: the delivery reads' statements are prepared", () => {
  test("a read is a named statement, prepared once per text and answered as drizzle's unnamed query answers", async () => {
    const read = (id: number) => sql`select id, at, data, label, ${"p"}::text as param, null::int as nothing from t where id >= ${id} order by id`;
    const before = await prepared();
    const first = await preparedRows(h.db, read(1));
    expect(first).toEqual(rows(await h.db.execute(read(1))));
    expect(first[0]).toMatchObject({ id: 1, data: { a: [1, "x"] }, label: "one", param: "p", nothing: null });
    // Timestamps stay text, as drizzle's PGlite driver gives them.
    expect(typeof (first[0] as { at: unknown }).at).toBe("string");
    for (let i = 0; i < 7; i++) expect(await preparedRows(h.db, read(2))).toEqual([{ ...(first[1] as object) }]);
    const after = await prepared();
    const mine = after.filter((s) => s.statement.includes("null::int as nothing"));
    expect(mine).toHaveLength(1);
    expect(after.length).toBe(before.length + 1);
    // Eight runs on one prepared statement: PostgreSQL planned it (custom plans first, then the generic one).
    expect((mine[0]?.generic ?? 0) + (mine[0]?.custom ?? 0)).toBe(8);
  });

  test("a table changed under a statement (its row type): prepared again, answered with the new column", async () => {
    const all = sql`select * from t where id = ${1}`;
    expect(Object.keys((await preparedRows<object>(h.db, all))[0] ?? {})).toEqual(["id", "at", "data", "label"]);
    await h.db.execute(sql`alter table t add column extra text not null default 'added'`);
    const [row] = await preparedRows<{ extra: string }>(h.db, all);
    expect(row?.extra).toBe("added");
    await h.db.execute(sql`alter table t drop column extra`);
    expect(Object.keys((await preparedRows<object>(h.db, all))[0] ?? {})).toEqual(["id", "at", "data", "label"]);
  });

  test("past 200 texts the least recently used are closed, and run again when asked", async () => {
    for (let i = 0; i < 230; i++) await preparedRows(h.db, sql`select ${i}::int + ${sql.raw(String(i))} as n`);
    const kept = await prepared();
    expect(kept.length).toBeLessThanOrEqual(200);
    expect(kept.some((s) => s.statement.includes("+ 229 as n"))).toBe(true);
    expect(kept.some((s) => s.statement.includes("+ 0 as n"))).toBe(false);
    expect(await preparedRows(h.db, sql`select ${0}::int + ${sql.raw("0")} as n`)).toEqual([{ n: 0 }]);
  });

  test("a read waits for a transaction in progress and never runs inside it", async () => {
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inside = false;
    const tx = h.db
      .transaction(async (t) => {
        await t.execute(sql`insert into t (id, label) values (3, 'uncommitted')`);
        inside = true;
        await gate;
        throw new Error("rolled back");
      })
      .catch((err: Error) => err.message);
    // fixed wait: a poll until the transaction holds its uncommitted row.
    while (!inside) await Bun.sleep(1);
    let settled = false;
    const read = preparedRows<{ n: number }>(h.db, sql`select count(*)::int as n from t where label = ${"uncommitted"}`).finally(() => {
      settled = true;
    });
    // fixed wait: a read run inside the open transaction would have settled well within it.
    await Bun.sleep(50);
    expect(settled).toBe(false);
    release();
    expect(await tx).toBe("rolled back");
    // Inside the transaction it would have counted the uncommitted row.
    expect(await read).toEqual([{ n: 0 }]);
  });

  test("errors are the database's, and the next statement runs", async () => {
    const bad = await preparedRows(h.db, sql`select * from t where id = ${"not a number"}::int`).catch((err: unknown) => err);
    expect(codeOf(bad)).toBe("22P02");
    const syntax = await preparedRows(h.db, sql`select from where ${1}`).catch((err: unknown) => err);
    expect(codeOf(syntax)).toBe("42601");
    expect(await preparedRows(h.db, sql`select count(*)::int as n from t`)).toEqual([{ n: 2 }]);
  });
});

test("PGlite closed: a read fails as the database being unavailable", async () => {
  const own = await openDb({ databaseUrl: "memory://", dataDir: "" });
  expect(await preparedRows(own.db, sql`select ${1}::int as n`)).toEqual([{ n: 1 }]);
  await own.close();
  const err = await preparedRows(own.db, sql`select ${1}::int as n`).catch((e: unknown) => e);
  expect(isDatabaseUnavailable(err)).toBe(true);
});
