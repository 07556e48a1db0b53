// The suite's own rules (tests/README.md): the lists tests/run.ts splits the files by name test files
// that exist; a file run on PGlite only never reaches the database the suite runs on; and no test
// waits a fixed time unless a `fixed wait:` comment beside it says why.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { NO_DATABASE, plan, SERIAL } from "./run";

const root = join(import.meta.dir, "..");
const read = (file: string): string => readFileSync(join(root, file), "utf8");

/**
 * Files whose fixed waits other branches of issue 35 are removing at the time of writing; the
 * lead takes each out of this list when merging them.
 */
const PENDING = new Set<string>([]);

test("the serial and PGlite-only lists name test files that exist, each once", () => {
  const all = [...new Bun.Glob("tests/*.test.ts").scanSync({ cwd: root })];
  for (const list of [SERIAL, NO_DATABASE]) {
    expect(list.filter((f) => !all.includes(f))).toEqual([]);
    expect(new Set(list).size).toBe(list.length);
  }
  // PGlite runs every file; PostgreSQL every file but the PGlite-only ones; serial ones alone.
  const pglite = plan(false);
  const pg = plan(true);
  expect([...pglite.parallel, ...pglite.serial].sort()).toEqual(all.sort());
  expect([...pg.parallel, ...pg.serial].sort()).toEqual(all.filter((f) => !NO_DATABASE.includes(f)).sort());
  expect(pglite.serial.sort()).toEqual([...SERIAL].sort());
});

test("a file run on PGlite only never reaches the suite's database (it names neither DATABASE_URL nor a database helper)", () => {
  // serve() starts a service on the suite's database; spawnService() passes the suite's environment on
  // unless its call takes DATABASE_URL away (on the call's own line).
  const reaches = /DATABASE_URL|\b(harness|testDb|freshDatabase|previousSchemaDatabase|openDb|serve)\(|loadConfig\(process\.env|__testDb|\.\/pg-proxy/;
  // Taking DATABASE_URL away from a process it starts is how such a file keeps to its own database.
  const clears = /delete env\.DATABASE_URL|DATABASE_URL: (""|undefined)/g;
  const found = NO_DATABASE.map((f) => {
    const text = read(f);
    const spawned = /spawnService\((?![^\n]*DATABASE_URL: (""|undefined))/.exec(text)?.[0];
    return { f, reaches: spawned ?? reaches.exec(text.replace(clears, ""))?.[0] ?? null };
  }).filter((x) => x.reaches !== null);
  expect(found).toEqual([]);
});

test("no fixed wait without a `fixed wait:` comment on its line or the three above saying why", () => {
  const wait = /Bun\.sleep\(|setTimeout\(\s*(r|resolve)\b/;
  const untagged: string[] = [];
  for (const file of new Bun.Glob("tests/**/*.ts").scanSync({ cwd: root })) {
    if (file.includes("node_modules") || PENDING.has(file)) continue;
    const lines = read(file).split("\n");
    lines.forEach((line, i) => {
      if (wait.test(line) && !lines.slice(Math.max(0, i - 3), i + 1).some((l) => l.includes("fixed wait:"))) untagged.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(untagged).toEqual([]);
});
