// tests/delivery.helpers.ts counts an app's statements (the delivery tests' "no query on a hot read",
// the outage tests' "cut before the Nth statement"): every way a statement can run is counted once.
import { expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { projects } from "../db/schema";
import { preparedRows } from "../src/delivery/prepared";
import { countingDb } from "./delivery.helpers";
import { testDb, uniqueSlug } from "./helpers";

test("builder, relational, raw, prepared and transactional statements are each counted once", async () => {
  const c = countingDb((await testDb()).db);
  const sent = async (f: () => Promise<unknown>): Promise<number> => {
    const n = c.calls();
    await f();
    return c.calls() - n;
  };
  const slug = uniqueSlug("count");
  expect(await sent(() => c.db.insert(projects).values({ id: crypto.randomUUID(), slug, name: slug, defaultLocale: "en", locales: ["en"] }))).toBe(1);
  expect(await sent(() => c.db.select().from(projects).where(eq(projects.slug, slug)))).toBe(1);
  expect(await sent(() => c.db.query.projects.findFirst({ where: eq(projects.slug, slug) }))).toBe(1);
  expect(await sent(() => c.db.execute(sql`select 1`))).toBe(1);
  expect(await sent(() => preparedRows(c.db, sql`select 2`))).toBe(1);
  expect(await sent(() => c.db.update(projects).set({ name: "renamed" }).where(eq(projects.slug, slug)))).toBe(1);
  // BEGIN, two statements, a savepoint and the statement in it.
  expect(
    await sent(() =>
      c.db.transaction(async (tx) => {
        await tx.select().from(projects).where(eq(projects.slug, slug));
        await tx.query.projects.findFirst({ where: eq(projects.slug, slug) });
        await tx.transaction(async (inner) => void (await inner.execute(sql`select 3`)));
      }),
    ),
  ).toBe(5);
  expect(await sent(() => c.db.delete(projects).where(eq(projects.slug, slug)))).toBe(1);
});
