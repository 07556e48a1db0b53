// The text and parameters of a prepared delivery statement (src/delivery/prepared.ts builds them
// without drizzle's builder for the chunks our statements hold) against drizzle's PostgreSQL
// dialect: equal on 3,000 random statements of text, nested statements, joins, lists, parameters
// and gaps, and on statements holding what only drizzle builds (tables, columns, names,
// placeholders, inlined parameters), which go to it.
import { describe, expect, test } from "bun:test";
import { Param, type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Db } from "../db/client";
import { nodes } from "../db/schema";
import { toQuery } from "../src/delivery/prepared";

const dialect = new PgDialect();
/** A database whose dialect is drizzle's, and one whose dialect refuses: the fast path must not need it. */
const withDrizzle = { dialect } as unknown as Db;
const refusing = {
  dialect: {
    sqlToQuery: () => {
      throw new Error("built by drizzle");
    },
  },
} as unknown as Db;

/** xorshift32: the same statements every run. */
function random(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const values: unknown[] = ["", "it's", "$1", "é ß 😀", 0, -1.5, 42, true, false, null, "2026-11-30"];
const texts = ["select ", " from t where a = ", ", ", " and (", ")", "", " $x ", "'lit'", "\n  "];

/** A random statement of the chunks the fast path builds, `depth` levels deep at most. */
function statement(next: (n: number) => number, depth: number): SQL {
  const part = (): unknown => {
    const kind = depth === 0 ? next(3) : next(8);
    switch (kind) {
      case 0:
        return values[next(values.length)];
      case 1:
        return sql.raw(texts[next(texts.length)] ?? "");
      case 2:
        return new Param(values[next(values.length)]);
      case 3:
        return statement(next, depth - 1);
      case 4:
        return sql.join(
          Array.from({ length: next(4) }, () => statement(next, depth - 1)),
          next(2) === 0 ? sql`, ` : undefined,
        );
      case 5:
        return Array.from({ length: 1 + next(3) }, () => (next(2) === 0 ? values[next(values.length)] : statement(next, depth - 1)));
      case 6:
        return sql.empty();
      default:
        return undefined;
    }
  };
  const n = next(5);
  const strings = Array.from({ length: n + 1 }, () => texts[next(texts.length)] ?? "");
  return sql(Object.assign(strings, { raw: strings }) as unknown as TemplateStringsArray, ...Array.from({ length: n }, part));
}

describe("prepared statements' text and parameters", () => {
  test("3,000 random statements build as drizzle builds them, without drizzle", () => {
    const next = random(20261130);
    let params = 0;
    for (let i = 0; i < 3000; i++) {
      const q = statement(next, 1 + (i % 6));
      const expected = dialect.sqlToQuery(q);
      const built = toQuery(refusing, q);
      expect({ sql: built.sql, params: built.params }).toEqual({ sql: expected.sql, params: expected.params });
      params += built.params.length;
    }
    expect(params).toBeGreaterThan(3000);
  });

  test("what only drizzle builds goes to it, and comes out as it builds it", () => {
    const cases: SQL[] = [
      sql`select ${nodes.id} from ${nodes} where ${nodes.slug} = ${"home"}`,
      sql`select * from ${sql.identifier("nodes")} where id = ${sql.placeholder("id")}`,
      sql`select ${"a"}, ${new Param(sql.placeholder("id"))}`,
      sql`select ${1}, ${sql`${"a"}`.inlineParams()}`,
      sql`select ${sql`x = ${"y"}`}, ${sql.param("z", nodes.slug)}, ${nodes.title}`,
    ];
    for (const q of cases) {
      const expected = dialect.sqlToQuery(q);
      expect(toQuery(withDrizzle, q)).toEqual(expected);
      expect(() => toQuery(refusing, q)).toThrow("built by drizzle");
    }
  });
});
