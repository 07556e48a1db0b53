// porsager/postgres#1199 reproduced on the driver alone, each scenario in a process of its own
// (the bug throws from a setImmediate, out of every try/catch). db/patch-postgres.mjs is the fix.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;

interface Report {
  after: { ok: number; failed: string[]; ms: number };
  uncaught: string[];
  acknowledged?: number;
  kills?: number;
  lost?: number;
  transaction?: string;
  reserved?: string;
}

/** Runs the fixture against a database of its own, since it terminates every backend of it. */
async function runScenario(scenario: string): Promise<{ code: number | null; stderr: string; report: Report | null }> {
  const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} });
  const name = `t_drv_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(pgUrl!);
  url.pathname = `/${name}`;
  try {
    const child = Bun.spawn(["bun", join(import.meta.dir, "postgres-driver.fixture.ts"), url.toString(), scenario], {
      stdout: "pipe",
      stderr: "pipe",
      timeout: 40_000,
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const line = stdout.trim().split("\n").at(-1) ?? "";
    return { code, stderr, report: line.startsWith("{") ? (JSON.parse(line) as Report) : null };
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

function expectSurvivedAndServes(run: { code: number | null; stderr: string; report: Report | null }): Report {
  expect(run.stderr).not.toContain("socket.write");
  expect(run.code).toBe(0);
  expect(run.report).not.toBeNull();
  const report = run.report!;
  expect(report.uncaught).toEqual([]);
  // Every one of 20 parallel queries right after the fault answers, and fast (no 10 s CONNECT_TIMEOUT).
  expect(report.after.failed).toEqual([]);
  expect(report.after.ok).toBe(20);
  expect(report.after.ms).toBeLessThan(2000);
  return report;
}

test("the installed postgres.js carries db/patch-postgres.mjs (postinstall) in every build of it", async () => {
  const root = join(import.meta.dir, "..", "node_modules", "postgres");
  for (const dir of ["src", "cjs/src", "cf/src"]) {
    const connection = await Bun.file(join(root, dir, "connection.js")).text();
    const index = await Bun.file(join(root, dir, "index.js")).text();
    const marks = (text: string, mark: string): number => text.split(mark).length - 1;
    expect({
      dir,
      connection: marks(connection, "patched: porsager/postgres#1199"),
      round2: marks(connection, "patched (2): porsager/postgres#1199"),
      index: marks(index, "patched: porsager/postgres#1199"),
    }).toEqual({ dir, connection: 4, round2: 1, index: 2 });
  }
});

describe.if(pgUrl !== null)("postgres.js with terminated backends, porsager/postgres#1199 (PostgreSQL only: needs DATABASE_URL)", () => {
  test("a transaction whose backend is terminated fails cleanly; the pool serves at once", async () => {
    const report = expectSurvivedAndServes(await runScenario("transaction"));
    expect(report.transaction).toBe("CONNECTION_CLOSED");
  });

  test("a reserved connection released after its backend was terminated does not poison the pool", async () => {
    const report = expectSurvivedAndServes(await runScenario("reserve"));
    expect(report.reserved).toBe("CONNECTION_CLOSED");
  });

  test("10 writers in transactions while every backend is terminated every 100 ms", async () => {
    const report = expectSurvivedAndServes(await runScenario("load"));
    expect(report.kills).toBeGreaterThan(10);
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.lost).toBe(0);
  });
});
