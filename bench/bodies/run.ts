// Anonymous large bodies (issue 36, item 1): starts the real service (`src/main.ts`, embedded
// PGlite, default limits), then sends BENCH_REQUESTS anonymous multipart POSTs of BENCH_MB MB each
// to /admin/p/{ref}/nodes, BENCH_CONCURRENCY at a time, and reads the process's RSS
// (/proc/PID/status) BENCH_SETTLE_S seconds after start, at its peak while they run, once every
// answer is in, and BENCH_SETTLE_S seconds later. Then an authenticated 20 MB upload, timed, with the RSS around it.
// BENCH_SRC runs the service from another checkout (e.g. /work/main, to measure before a change).
// Usage: bun bench/bodies/run.ts  (see bench/README.md)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 60);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 60);
const MB = Number(process.env.BENCH_MB ?? 25);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 5);
const ROOT = process.env.BENCH_SRC ?? join(new URL(".", import.meta.url).pathname, "../..");
const TOKEN = `cms_bench_${"x".repeat(40)}`;

const rssMb = (pid: number): number => {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Math.round(Number(kb) / 1024);
};

/** A multipart body of `bytes` bytes: one file part of noise-like bytes. */
function multipart(bytes: number): { body: Uint8Array<ArrayBuffer>; type: string } {
  const boundary = "----bench-boundary-7MA4YWxkTrZu0gW";
  const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const body = new Uint8Array(bytes);
  body.set(head, 0);
  for (let i = head.length; i < bytes - tail.length; i++) body[i] = (i * 2654435761) >>> 24;
  body.set(tail, bytes - tail.length);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

const port = 20_000 + Math.floor(Math.random() * 20_000);
const base = `http://127.0.0.1:${port}`;
const dataDir = mkdtempSync(join(tmpdir(), "cms-bench-bodies-"));
const server = Bun.spawn([process.execPath, "src/main.ts"], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN, SEED_DEMO: "false", LOG_LEVEL: "warn", DATABASE_URL: "" },
  stdout: "ignore",
  stderr: "inherit",
});
try {
  for (
    let i = 0;
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 600) throw new Error("the service did not start");
    await Bun.sleep(100);
  }
  const auth = { authorization: `Bearer ${TOKEN}` };
  const created = await fetch(`${base}/admin/projects`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ slug: "bench", name: "bench", default_locale: "en", locales: ["en"] }),
  });
  if (created.status !== 201) throw new Error(`project: ${created.status}`);
  await fetch(`${base}/admin/p/bench/nodes`, { headers: auth }).then((r) => r.arrayBuffer());
  // Settling time for the process after start (the embedded database's start-up memory is given back), not a wait for an event.
  await Bun.sleep(SETTLE_S * 1000);
  const before = rssMb(server.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 25);
  const { body, type } = multipart(MB * 1024 * 1024);
  const statuses: Record<string, number> = {};
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      next += 1;
      const status = await fetch(`${base}/admin/p/bench/nodes`, { method: "POST", headers: { "content-type": type }, body }).then(
        async (r) => (await r.arrayBuffer(), String(r.status)),
        (e: unknown) => `error ${(e as Error).name}`,
      );
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = Math.round(performance.now() - started);
  const answered = rssMb(server.pid);
  // Settling time for the process's allocator, not a wait for an event: the figure is what stays.
  await Bun.sleep(SETTLE_S * 1000);
  clearInterval(sampler);
  const settled = rssMb(server.pid);

  const upload = multipart(20 * 1024 * 1024);
  const upStart = performance.now();
  const up = await fetch(`${base}/admin/p/bench/media`, { method: "POST", headers: { ...auth, "content-type": upload.type }, body: upload.body });
  const upJson = (await up.json()) as { error?: { code: string } };
  const upMs = Math.round(performance.now() - upStart);
  const afterUpload = rssMb(server.pid);
  const result = {
    src: ROOT,
    requests: REQUESTS,
    concurrency: CONCURRENCY,
    mb: MB,
    statuses,
    ms: elapsed,
    rss_mb: { before, peak, answered, settled, after_upload: afterUpload },
    peak_growth_mb: peak - before,
    settled_growth_mb: settled - before,
    upload_20mb: { status: up.status, code: upJson.error?.code ?? null, ms: upMs },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  server.kill("SIGKILL");
  await server.exited;
  rmSync(dataDir, { recursive: true, force: true });
}
