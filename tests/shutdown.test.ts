// SIGTERM on the real process (`bun src/main.ts`): new connections are refused, a request in
// flight finishes with its answer, the database is closed and the process exits 0.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startFakeVendors } from "./fake-vendors";
import { migratedDataDir, waitFor } from "./helpers";
import { spawnService, untilReady } from "./service-process";

test("SIGTERM drains an in-flight request, then exits 0", async () => {
  const vendors = await startFakeVendors();
  const token = `shutdown-test-root-token-${crypto.randomUUID()}`;
  const dataDir = await migratedDataDir(); // the embedded database, whatever the suite runs on
  const svc = spawnService({ DATABASE_URL: "", DATA_DIR: dataDir, ADMIN_TOKEN: token, AI_ALLOW_PRIVATE_URLS: "true", LOG_LEVEL: "info", SHUTDOWN_GRACE_MS: "10000" });
  const { proc, url: base } = svc;
  try {
    await untilReady(svc, 20_000);
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    expect((await fetch(`${base}/admin/projects`, { method: "POST", headers: auth, body: JSON.stringify({ slug: "drain", name: "drain" }) })).status).toBe(201);
    const prov = await fetch(`${base}/admin/p/drain/ai/providers`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "slow", kind: "openai", api_key: "sk-drain-1234", base_url: vendors.base("slow-ok") }),
    });
    expect(prov.status).toBe(201);

    // The vendor answers 500 ms after it receives the call; SIGTERM arrives while the call is in flight.
    const inFlight = fetch(`${base}/admin/p/drain/ai/translate`, { method: "POST", headers: auth, body: JSON.stringify({ from: "en", to: "fr", text: "Hello" }) });
    await waitFor(() => vendors.received("slow-ok").length > 0, { what: "the vendor to receive the call" });
    proc.kill("SIGTERM");
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect((await res.json()).data.translation).toContain("Hello");
    expect(await proc.exited).toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toMatchObject({ code: "ECONNREFUSED" }); // the port is closed
    expect(svc.output()).toContain('"msg":"shutting down"');
    expect(svc.output()).toContain('"msg":"stopped"');
    expect(svc.output()).not.toContain("sk-drain-1234");
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
    await vendors.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);
