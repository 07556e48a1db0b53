// Media delivery benchmark (issue 26): starts the real service (`src/main.ts`, default
// configuration: access log on, embedded PGlite, local disk storage) pinned to CPU 0, uploads a
// 12-megapixel JPEG and a page through the admin API, times the cold renders of its variants
// (first request: decode, resize, encode, store), then drives with wrk (pinned to CPU 1) a hot page
// read and a stored variant, back to back, BENCH_REPS times (the best of each kept).
// Usage: bun bench/media/run.ts  (see bench/README.md)
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";

for (const tool of ["wrk", "taskset"]) if (!Bun.which(tool)) throw new Error(`${tool} is not installed: apt-get install -y wrk (taskset comes with util-linux)`);

const PORT = 3921;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const HERE = new URL(".", import.meta.url).pathname;
const ROOT = join(HERE, "../..");
const TOKEN = `cms_bench_${"x".repeat(40)}`;
const base = `http://127.0.0.1:${PORT}`;
const log = (line: string): void => console.error(`[bench] ${line}`);

interface Wrk {
  rps: number;
  p50: string;
  p99: string;
  errors: string | null;
}

async function wrk(url: string, seconds: number, headers: string[] = []): Promise<Wrk> {
  const args = ["taskset", "-c", "1", "wrk", "-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", ...headers.flatMap((h) => ["-H", h]), url];
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN),
    p50: /\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? "",
    p99: /\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? "",
    errors: out.match(/Socket errors:[^\n]*|Non-2xx or 3xx responses:[^\n]*/g)?.join("; ") ?? null,
  };
}

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${TOKEN}` } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const res = await fetch(base + path, init);
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

const dataDir = mkdtempSync(join(tmpdir(), "cms-bench-media-"));
const server = Bun.spawn(["taskset", "-c", "0", process.execPath, "src/main.ts"], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN, SEED_DEMO: "false", LOG_LEVEL: "info", DATABASE_URL: "" },
  stdout: "ignore",
  stderr: "inherit",
});
try {
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 600) throw new Error("the service did not start");
    await Bun.sleep(100);
  }
  await api("POST", "/admin/projects", { slug: "bench", name: "bench", default_locale: "en", locales: ["en", "fr"] });
  const page = await api("POST", "/admin/p/bench/nodes", { slug: "about", title: "About", blocks: [{ type: "text", data: { text: "x".repeat(1500) } }] });
  await api("POST", `/admin/p/bench/nodes/${page.id}/publish`);
  const photo = await sharp({ create: { width: 4000, height: 3000, channels: 3 as const, background: { r: 0, g: 0, b: 0 }, noise: { type: "gaussian" as const, mean: 120, sigma: 18 } } })
    .jpeg({ quality: 85 })
    .toBuffer();
  const form = new FormData();
  form.set("file", new File([photo], "photo.jpg"));
  form.set("alt", "A photo");
  let t0 = performance.now();
  const item = await api("POST", "/admin/p/bench/media", form);
  const uploadMs = performance.now() - t0;
  log(`uploaded ${photo.length} bytes (${item.width}×${item.height}) in ${Math.round(uploadMs)} ms`);

  const cold: Record<string, number> = {};
  for (const [w, fm] of [
    [800, "webp"],
    [1280, "webp"],
    [800, "avif"],
    [800, "jpeg"],
  ] as const) {
    t0 = performance.now();
    const res = await fetch(`${item.url}&w=${w}&fm=${fm}`);
    await res.arrayBuffer();
    cold[`w${w}.${fm}`] = Math.round(performance.now() - t0);
  }
  log(`cold renders (ms): ${JSON.stringify(cold)}`);
  const variantUrl = `${item.url}&w=800&fm=webp`;
  const variantBytes = (await (await fetch(variantUrl)).arrayBuffer()).byteLength;
  const pageUrl = `${base}/api/p/bench/nodes/by-path/about`;
  const pageBytes = (await (await fetch(pageUrl)).arrayBuffer()).byteLength;

  let bestPage: Wrk | null = null;
  let bestVariant: Wrk | null = null;
  for (let rep = 0; rep < REPS; rep++) {
    log(`hot page read (run ${rep + 1}/${REPS})`);
    await wrk(pageUrl, WARMUP_S);
    const p = await wrk(pageUrl, DURATION_S);
    log(`stored variant (run ${rep + 1}/${REPS})`);
    await wrk(variantUrl, WARMUP_S);
    const v = await wrk(variantUrl, DURATION_S);
    if (!bestPage || p.rps > bestPage.rps) bestPage = p;
    if (!bestVariant || v.rps > bestVariant.rps) bestVariant = v;
  }
  const results = {
    date: new Date().toISOString(),
    connections: CONNECTIONS,
    duration_s: DURATION_S,
    reps: REPS,
    upload_12mp_ms: Math.round(uploadMs),
    cold_render_ms: cold,
    page: { bytes: pageBytes, ...bestPage },
    variant: { bytes: variantBytes, ...bestVariant },
    ratio_variant_to_page: Math.round(((bestVariant?.rps ?? 0) / (bestPage?.rps ?? 1)) * 100) / 100,
  };
  console.log(JSON.stringify(results, null, 2));
  writeFileSync(join(HERE, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  server.kill();
  await server.exited;
}
