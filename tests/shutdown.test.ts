// SIGTERM on the real process (`bun src/main.ts`): new connections are refused, a request in
// flight finishes with its answer, the database is closed and the process exits 0.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startFakeVendors } from "./fake-vendors";
import { freePort, migratedDataDir, waitFor } from "./helpers";

test("SIGTERM drains an in-flight request, then exits 0", async () => {
  const vendors = await startFakeVendors();
  const port = freePort();
  const token = `shutdown-test-root-token-${crypto.randomUUID()}`;
  const dataDir = await migratedDataDir(); // the embedded database, whatever the suite runs on
  const proc = Bun.spawn([process.execPath, "src/main.ts"], {
    cwd: join(import.meta.dir, ".."),
    env: {
      ...process.env,
      DATABASE_URL: "",
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_TOKEN: token,
      SEED_DEMO: "false",
      AI_ALLOW_PRIVATE_URLS: "true",
      LOG_LEVEL: "info",
      SHUTDOWN_GRACE_MS: "10000",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  void (async () => {
    for await (const c of proc.stdout) out += new TextDecoder().decode(c);
  })();
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      () =>
        fetch(`${base}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      { timeout: 20_000, interval: 100, what: "the service to be ready" },
    );
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
    expect(out).toContain('"msg":"shutting down"');
    expect(out).toContain('"msg":"stopped"');
    expect(out).not.toContain("sk-drain-1234");
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
    await vendors.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);
