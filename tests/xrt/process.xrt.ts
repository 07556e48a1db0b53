// Cross-runtime: the process edges. One process per embedded DATA_DIR (a second start refuses
// with a clear message; kill -9 of the holder does not block the next start), and SIGTERM lets an
// in-flight request finish before the process exits 0.
import { afterAll, describe, expect, test } from "bun:test";
import { startFakeVendors } from "../fake-vendors";
import { seedProject } from "./seed";
import { DB, describeRun, signal, startService, stopAll, waitFor } from "./service";

describe(`process edges: ${describeRun()}`, () => {
  afterAll(stopAll);

  // The lock guards the embedded database only; on PostgreSQL several instances share one database.
  test.skipIf(DB !== "pglite")(
    "data-dir lock (embedded database only: on PostgreSQL several processes share one database): a second process on a held DATA_DIR exits 2 naming it; after kill -9 of the holder the next start works",
    async () => {
      const holder = await startService();
      const kept = await seedProject(holder);
      const holderPid = holder.servicePid();

      const second = await startService({ dataDir: holder.dataDir, ready: false });
      const code = await Promise.race([second.exited, Bun.sleep(60_000).then(() => "still running after 60 s")]);
      expect(code).toBe(2); // the documented start-up refusal (npm passes the service's exit code on)
      const line = second.output().trim();
      expect(line).toContain(`DATA_DIR ${holder.dataDir} is in use by the service`);
      expect(line).toContain(`pid ${holderPid}`);
      expect(line).not.toMatch(/\bat .*\.[jt]s:\d+/); // a message, not a stack trace
      expect((await fetch(`${holder.base}/readyz`)).status).toBe(200);

      signal(holderPid, "SIGKILL");
      await holder.exited;
      const next = await startService({ dataDir: holder.dataDir });
      const projects = await next.admin("GET", "/admin/projects");
      expect(projects.status).toBe(200);
      expect(projects.json.data.map((p: { slug: string }) => p.slug)).toEqual([kept.slug]);
    },
    180_000,
  );

  test("SIGTERM: an in-flight request completes with its answer, the process exits 0 and its port is closed", async () => {
    const vendors = await startFakeVendors();
    try {
      const svc = await startService({ env: { AI_ALLOW_PRIVATE_URLS: "true", SHUTDOWN_GRACE_MS: "10000" } });
      const p = await seedProject(svc);
      const prov = await svc.admin("POST", `/admin/p/${p.slug}/ai/providers`, { name: "slow", kind: "openai", api_key: "sk-xrt-drain", base_url: vendors.base("slow-ok") });
      expect(prov.status).toBe(201);
      // The vendor answers 500 ms after it receives the call; SIGTERM arrives while the call is in flight.
      const inFlight = svc.admin("POST", `/admin/p/${p.slug}/ai/translate`, { from: "en", to: "fr", text: "Hello" });
      await waitFor(() => vendors.received("slow-ok").length > 0, "the vendor to receive the call");
      signal(svc.servicePid(), "SIGTERM");
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.json.data.translation).toBe("[translated] Hello");
      expect(await Promise.race([svc.exited, Bun.sleep(30_000).then(() => "still running after 30 s")])).toBe(0);
      await expect(fetch(`${svc.base}/healthz`)).rejects.toThrow();
      expect(svc.output()).toContain('"msg":"stopped"');
      expect(svc.output()).not.toContain("sk-xrt-drain");
    } finally {
      await vendors.stop();
    }
  }, 120_000);
});
