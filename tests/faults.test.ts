// Database faults on PostgreSQL, against the real process (`bun src/main.ts`): a driver error that
// escapes every try/catch ends a process, and an in-process app would hide that.
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { openDb } from "../db/client";
import { createApp } from "../src/app";
import { harness } from "./helpers";
import { type Served, serve } from "./service-process";

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;

// These faults need a PostgreSQL server to take away; CI's PostgreSQL pass runs them.
describe.if(pgUrl !== null)("database faults (PostgreSQL only: needs DATABASE_URL; terminates the server's backends)", () => {
  test("backends terminated inside transactions under 10 writers: the process lives, /readyz tells, the pool recovers, no acknowledged write is lost", async () => {
    // A database of its own: every backend of it is terminated, and only of it.
    const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} });
    const name = `t_flt_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.unsafe(`create database ${name}`);
    const dbUrl = new URL(pgUrl!);
    dbUrl.pathname = `/${name}`;
    const token = `faults-test-root-token-${crypto.randomUUID()}`;
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const control = postgres(dbUrl.toString(), { max: 1, onnotice: () => {} });
    let svc: Served | null = null;
    try {
      svc = await serve(dbUrl.toString(), token, 10);
      const base = svc.url;
      const call = (method: string, path: string, body?: unknown): Promise<Response> =>
        fetch(base + path, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(15_000) });

      // One project per writer: each writer's theme PUTs are sequential, so the last one it saw
      // acknowledged must be the stored one (or a later attempt that failed after its commit).
      const refs: string[] = [];
      for (let w = 0; w < 10; w++) {
        const r = await call("POST", "/admin/projects", { slug: `${name.replaceAll("_", "-")}-${w}`, name: `w${w}`, default_locale: "en", locales: ["en"] });
        expect(r.status).toBe(201);
        refs.push((await r.json()).data.slug);
      }
      const controlPid = Number((await control`select pg_backend_pid() as pid`)[0]!.pid);

      let stop = false;
      const unexpected: string[] = [];
      const ackedNodes: { ref: string; id: string }[] = [];
      const themes = refs.map(() => ({ acked: null as string | null, attemptedAfter: [] as string[] }));
      let failed = 0;
      const slow: string[] = [];
      let faultsEnd = Date.now() + 1e9;
      const writer = async (w: number): Promise<void> => {
        for (let seq = 0; !stop; seq++) {
          const isTheme = seq % 2 === 0;
          const color = `#${(w * 4096 + seq).toString(16).padStart(6, "0")}`;
          if (isTheme) themes[w]!.attemptedAfter.push(color);
          let r: Response;
          const t0 = Date.now();
          try {
            r = isTheme
              ? await call("PUT", `/admin/p/${refs[w]}/theme`, { accent_color: color })
              : await call("POST", `/admin/p/${refs[w]}/nodes`, { slug: `n${seq}`, title: `node ${seq}`, blocks: [{ type: "text", data: { text: "x" } }] });
          } catch (e) {
            unexpected.push(`${w}/${seq}: ${String(e)} after ${Date.now() - t0} ms`);
            continue;
          }
          if (Date.now() - t0 > 4000) slow.push(`${w}/${seq}: ${r.status} after ${Date.now() - t0} ms, ${t0 - faultsEnd} ms from the end of faults`);
          const body = (await r.json().catch(() => null)) as { data?: { id?: string }; error?: { code?: string } } | null;
          if (r.ok) {
            if (isTheme) themes[w] = { acked: color, attemptedAfter: [] };
            else ackedNodes.push({ ref: refs[w]!, id: body!.data!.id! });
          } else if (r.status === 503 && body?.error?.code === "service_unavailable" && r.headers.get("retry-after") === "1") {
            failed++;
          } else {
            unexpected.push(`${w}/${seq}: ${r.status} ${JSON.stringify(body)}`);
          }
        }
      };
      const writers = Array.from({ length: 10 }, (_, w) => writer(w));

      // /readyz, polled all along: it must say 503 at some point while the pool is being broken.
      const readyDuringFaults: number[] = [];
      let faulting = true;
      const readyPoll = (async () => {
        while (faulting) {
          readyDuringFaults.push(
            await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
              (r) => r.status,
              () => 0,
            ),
          );
          await Bun.sleep(50);
        }
      })();

      // Every ~300 ms for 6 s: terminate the service's backends, whatever they are doing.
      const killedStates: string[] = [];
      faultsEnd = Date.now() + 6000;
      while (Date.now() < faultsEnd) {
        const rows = await control`select state, pg_terminate_backend(pid) as ok from pg_stat_activity
          where datname = ${name} and pid <> ${controlPid} and backend_type = 'client backend'`;
        for (const r of rows) killedStates.push(String(r.state));
        await Bun.sleep(300);
      }
      const stoppedAt = Date.now();
      faulting = false;
      stop = true;
      await readyPoll;

      // The faults reached transactions, not only idle connections.
      expect(killedStates.filter((s) => s === "active" || s.startsWith("idle in transaction")).length).toBeGreaterThan(0);
      // The output is shown when it died: the driver's uncaught error is the usual reason.
      expect({ alive: svc.alive(), output: svc.alive() ? "" : svc.output().slice(-4000) }).toEqual({ alive: true, output: "" });
      expect(svc.output()).not.toContain("socket.write");
      expect(unexpected).toEqual([]);
      expect(readyDuringFaults).toContain(503);

      // Within 5 s of the last fault: /readyz 200, then 30 parallel admin reads all 200, quickly.
      let readyAt = 0;
      while (Date.now() - stoppedAt < 5000) {
        if (
          (await fetch(`${base}/readyz`).then(
            (r) => r.status,
            () => 0,
          )) === 200
        ) {
          readyAt = Date.now();
          break;
        }
        await Bun.sleep(50);
      }
      // On failure the service's output and the slow requests are shown beside the verdict.
      expect({ ready: readyAt > 0, output: readyAt ? "" : svc.output().slice(-3000), slow: readyAt ? [] : slow }).toEqual({ ready: true, output: "", slow: [] });
      const t0 = performance.now();
      const burst = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call("GET", i % 2 ? `/admin/p/${refs[i % 10]}/nodes` : `/admin/p/${refs[i % 10]}/theme`).then(
            (r) => r.status,
            (e) => String(e),
          ),
        ),
      );
      const burstMs = performance.now() - t0;
      expect(burst).toEqual(Array(30).fill(200));
      expect(burstMs).toBeLessThan(3000);
      expect(Date.now() - stoppedAt).toBeLessThan(5000 + 3000);
      // No write waited long either, even one caught in the faults (a reconnect backoff grown to 7 s did).
      await Promise.all(writers);
      expect(slow).toEqual([]);
      expect(svc.alive()).toBe(true);

      // Every acknowledged write is in the database.
      expect(ackedNodes.length).toBeGreaterThan(20);
      expect(failed).toBeGreaterThan(0); // the faults did hit requests
      const ids = (await control`select id::text from nodes`).map((r) => r.id as string);
      const stored = new Set(ids);
      expect(ackedNodes.filter((n) => !stored.has(n.id))).toEqual([]);
      const colors = await control`select p.slug, t.accent_color from themes t join projects p on p.id = t.project_id`;
      const byRef = new Map(colors.map((r) => [r.slug as string, r.accent_color as string]));
      expect(themes.filter((t) => t.acked !== null).length).toBeGreaterThan(5);
      for (let w = 0; w < 10; w++) {
        const { acked, attemptedAfter } = themes[w]!;
        if (acked === null) continue;
        expect({ w, stored: byRef.get(refs[w]!), ok: [acked, ...attemptedAfter].includes(byRef.get(refs[w]!) ?? "") }).toMatchObject({ ok: true });
      }
      console.log(
        `faults: ${killedStates.length} backends terminated, ${ackedNodes.length} nodes acknowledged, ${failed} writes 503, readyz during faults ${readyDuringFaults.filter((s) => s === 503).length}/${readyDuringFaults.length} 503, ready ${readyAt - stoppedAt} ms after, 30 reads in ${Math.round(burstMs)} ms`,
      );
    } finally {
      await svc?.kill();
      await control.end({ timeout: 1 });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }, 60_000);
});

// No server needed: nothing listens on port 1, on either pass.
test("an unreachable database: /readyz 503 and requests 503, not 500", async () => {
  const handle = await openDb({ databaseUrl: "postgres://postgres@127.0.0.1:1/unreachable", dataDir: "", poolSize: 1 });
  try {
    const good = await harness();
    const app = createApp({ ...good.deps, db: handle.db, dbHandle: handle }).app;
    const ready = await app.handle(new Request("http://localhost/readyz"));
    expect(ready.status).toBe(503);
    const r = await app.handle(new Request("http://localhost/admin/projects", { headers: { authorization: `Bearer ${good.rootKey}` } }));
    expect(r.status).toBe(503);
    expect((await r.json()).error.code).toBe("service_unavailable");
  } finally {
    await handle.close();
  }
});
