// Run as its own process by postgres-driver.test.ts: the driver bug it reproduces ends the process.
// Usage: bun tests/postgres-driver.fixture.ts <database url> <transaction|reserve|load>
// Prints one JSON line with what it saw; exits 0 when the pool served again afterwards.
import postgres from "postgres";

const [url, scenario] = process.argv.slice(2) as [string, string];
// Whether Bun ends the process on an uncaught error depends on where it is thrown; record every one.
const uncaught: string[] = [];
process.on("uncaughtException", (e) => void uncaught.push(String(e)));
const control = postgres(url, { max: 1, onnotice: () => {} });
const sql = postgres(url, { max: 3, onnotice: () => {}, connect_timeout: 3 });
const controlPid = Number((await control`select pg_backend_pid() as pid`)[0]!.pid);

/** Terminates this database's backends other than the control connection. */
async function terminateAll(): Promise<number> {
  const rows = await control`select pg_terminate_backend(pid) as ok from pg_stat_activity
    where datname = current_database() and pid <> ${controlPid} and backend_type = 'client backend'`;
  return rows.length;
}

async function waitForActive(marker: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const rows = await control`select 1 from pg_stat_activity where datname = current_database() and state = 'active' and query like ${`%${marker}%`} and pid <> ${controlPid}`;
    if (rows.length > 0) return;
    await Bun.sleep(20); // fixed wait: the poll interval of this wait for a condition (no bun:test here for waitFor)
  }
  throw new Error(`no backend ran ${marker}`);
}

/** After the fault: every one of 20 parallel queries must answer, and quickly. */
async function poolServes(): Promise<{ ok: number; failed: string[]; ms: number }> {
  const t0 = performance.now();
  const out = await Promise.allSettled(
    Array.from({ length: 20 }, () => Promise.race([sql`select 1 as one`, /* fixed wait: a deadline */ Bun.sleep(5000).then(() => Promise.reject(new Error("TIMEOUT")))])),
  );
  const failed = out.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason?.code ?? (r as PromiseRejectedResult).reason?.message));
  return { ok: out.length - failed.length, failed, ms: Math.round(performance.now() - t0) };
}

const report: Record<string, unknown> = { scenario };
if (scenario === "transaction") {
  // A transaction whose backend is terminated mid-statement: postgres.js then sends ROLLBACK on the dead connection.
  const tx = sql
    .begin(async (t) => t`select pg_sleep(5) -- tx-marker`)
    .then(
      () => "committed",
      (e: { code?: string }) => e.code ?? "error",
    );
  await waitForActive("tx-marker");
  await terminateAll();
  report.transaction = await tx;
} else if (scenario === "reserve") {
  // porsager/postgres#1199: a reserved connection released after its backend was terminated.
  const reserved = await sql.reserve();
  const q = reserved`select pg_sleep(5) -- reserve-marker`.then(
    () => "done",
    (e: { code?: string }) => e.code ?? "error",
  );
  await waitForActive("reserve-marker");
  await terminateAll();
  report.reserved = await q;
  reserved.release();
} else {
  // Load: 10 writers in transactions while every backend is terminated every 100 ms for 2 s.
  await sql`create table if not exists driver_faults (id text primary key)`;
  const acked: string[] = [];
  let stop = false;
  let n = 0;
  const writer = async (w: number): Promise<void> => {
    while (!stop) {
      const id = `${w}-${n++}`;
      try {
        await sql.begin(async (t) => {
          await t`insert into driver_faults (id) values (${id})`;
          await t`select pg_sleep(0.005)`;
        });
        acked.push(id);
      } catch {
        await Bun.sleep(5); // fixed wait: the writers' pace after a failure (the load)
      }
    }
  };
  const writers = Array.from({ length: 10 }, (_, w) => writer(w));
  const until = Date.now() + 2000;
  let kills = 0;
  while (Date.now() < until) {
    kills += await terminateAll();
    await Bun.sleep(100); // fixed wait: the fault schedule (every backend terminated every 100 ms for 2 s)
  }
  stop = true;
  await Promise.all(writers);
  const stored = new Set((await control`select id from driver_faults`).map((r) => r.id as string));
  report.acknowledged = acked.length;
  report.kills = kills;
  report.lost = acked.filter((id) => !stored.has(id)).length;
}
report.after = await poolServes();
report.uncaught = uncaught;
console.log(JSON.stringify(report));
await sql.end({ timeout: 1 });
await control.end({ timeout: 1 });
process.exit(0);
