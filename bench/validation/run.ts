// Validation under attack (issue 36, item 4): how long a hostile write holds the event loop every
// tenant shares, seen as another project's delivery latency. Starts the real service
// (`src/main.ts`) on an embedded PGlite data directory (or the PostgreSQL database at
// BENCH_DATABASE_URL); project B has a published page that a reader fetches in a loop (one request
// at a time, every latency kept); project A (the attacker: a key with `model:write` and
// `content:write` on A only) sends, one after the other:
//   uri      a ~1 MB node write of 16 `uri` values of 62,000 characters (the demo model's format);
//   pattern  a write whose value meets a catastrophic `pattern` (^(\w+\s?)*$) at its worst;
//   model    a ~780 KB content model (500 node types of 15 fields).
// Each phase reports the attacker's answer and time, and B's p50 / p99 / max latency while it ran,
// against a quiet phase first and a benign one (~1 MB of valid content: what any write costs).
// Usage: bun bench/validation/run.ts  (BENCH_ROUNDS, default 3; BENCH_QUIET_MS, default 3000)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { migratedDataDir } from "../../tests/helpers";
import { serve } from "../../tests/service-process";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUIET_MS = Number(process.env.BENCH_QUIET_MS ?? 3000);
const TOKEN = `bench-validation-root-token-${crypto.randomUUID()}`;
const PATTERN_INPUT = Number(process.env.BENCH_PATTERN_INPUT ?? 26);

type Reply = { status: number; json: any; ms: number };

export async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const t = performance.now();
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, ms: performance.now() - t };
}

/** The attacker's model: a block type with a uri, one with a catastrophic pattern. */
export const ATTACK_MODEL = {
  block_types: [
    { name: "link", schema: { type: "object", properties: { url: { type: "string", format: "uri" } } } },
    { name: "code", schema: { type: "object", properties: { code: { type: "string", pattern: "^(\\w+\\s?)*$" } } } },
  ],
};

/** ~1 MB of uri values that the RFC 3986 regex of ajv-formats spends the longest on. */
export const uriBlocks = (): unknown[] => Array.from({ length: 16 }, () => ({ type: "link", data: { url: `https://a/${"a@".repeat(31_000)} ` } }));
/** ~1 MB of valid content (120 uri values of 8,000 characters): what a write may cost anyway. */
export const validBlocks = (): unknown[] => Array.from({ length: 120 }, () => ({ type: "link", data: { url: `https://a/${"a@".repeat(4000)}` } }));
/** A value the pattern backtracks on exponentially (words, then a character no branch takes). */
export const patternBlocks = (n = PATTERN_INPUT): unknown[] => [{ type: "code", data: { code: `${"a".repeat(n)}!` } }];
/** A model of about 780 KB: 500 node types of 15 fields. */
export function bigModel(types = 500, fields = 15): unknown {
  const field = { type: "string", maxLength: 200, description: "a field of the type, told to editors" };
  const props = Object.fromEntries(Array.from({ length: fields }, (_, i) => [`field_${i}`, field]));
  return { node_types: Array.from({ length: types }, (_, t) => ({ name: `type_${t}`, description: "a type", fields: { type: "object", properties: props } })) };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0);
};
export const summary = (xs: number[]): { n: number; p50: number; p99: number; max: number } => ({
  n: xs.length,
  p50: Number(pct(xs, 50).toFixed(2)),
  p99: Number(pct(xs, 99).toFixed(2)),
  max: Number(Math.max(0, ...xs).toFixed(2)),
});

/** Reads B's page in a loop until stopped; every latency in ms. */
export function reader(url: string): { stop: () => Promise<number[]> } {
  const lat: number[] = [];
  let on = true;
  const done = (async () => {
    while (on) {
      const t = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`delivery read answered ${res.status}`);
      lat.push(performance.now() - t);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await done;
      return lat;
    },
  };
}

async function main(): Promise<void> {
  const dataDir = process.env.BENCH_DATABASE_URL ? undefined : await migratedDataDir();
  const svc = await serve(process.env.BENCH_DATABASE_URL ?? "", TOKEN, 5, { dataDir });
  const root = (m: string, p: string, b?: unknown) => call(svc.url, TOKEN, m, p, b);
  try {
    const a = (await root("POST", "/admin/projects", { slug: `attacker-${Date.now()}`, name: "A", default_locale: "en", locales: ["en"] })).json.data;
    const b = (await root("POST", "/admin/projects", { slug: `victim-${Date.now()}`, name: "B", default_locale: "en", locales: ["en"] })).json.data;
    const home = (await root("POST", `/admin/p/${b.slug}/nodes`, { slug: "home", title: "Home", blocks: [{ type: "text", data: { body: "hello" } }] })).json.data;
    await root("POST", `/admin/p/${b.slug}/nodes/${home.id}/publish`);
    const key = (await root("POST", "/admin/keys", { name: "attacker", scopes: ["model:write", "content:write", "content:read"], project_ids: [a.id] })).json.data.key;
    const attacker = (m: string, p: string, body?: unknown) => call(svc.url, key, m, p, body);
    const m = await attacker("PUT", `/admin/p/${a.slug}/model`, ATTACK_MODEL);
    if (m.status !== 200) throw new Error(`model: ${m.status} ${JSON.stringify(m.json)}`);
    const page = `${svc.url}/api/p/${b.slug}/nodes/by-path/home`;
    for (let i = 0; i < 50; i++) await (await fetch(page)).arrayBuffer();

    const results: Record<string, unknown> = { at: new Date().toISOString(), commit: process.env.BENCH_COMMIT ?? null, database: process.env.BENCH_DATABASE_URL ? "postgres" : "pglite" };
    const quiet = reader(page);
    await new Promise((r) => setTimeout(r, QUIET_MS)); // the quiet phase lasts a fixed time: it is the baseline
    results.quiet = summary(await quiet.stop());
    const phases: [string, () => Promise<Reply>][] = [
      ["benign", () => attacker("POST", `/admin/p/${a.slug}/nodes`, { slug: `b-${crypto.randomUUID()}`, title: "b", blocks: validBlocks() })],
      ["uri", () => attacker("POST", `/admin/p/${a.slug}/nodes`, { slug: `u-${crypto.randomUUID()}`, title: "u", blocks: uriBlocks() })],
      ["pattern", () => attacker("POST", `/admin/p/${a.slug}/nodes`, { slug: `p-${crypto.randomUUID()}`, title: "p", blocks: patternBlocks() })],
      ["model", () => attacker("PUT", `/admin/p/${a.slug}/model`, bigModel())],
    ];
    for (const [name, attack] of phases) {
      const r = reader(page);
      const writes: { status: number; code: unknown; ms: number }[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const w = await attack();
        writes.push({ status: w.status, code: w.json?.error?.code ?? null, ms: Number(w.ms.toFixed(1)) });
      }
      results[name] = { writes, b: summary(await r.stop()) };
      console.log(`[bench] ${name}: ${JSON.stringify(results[name])}`);
    }
    console.log(`[bench] quiet: ${JSON.stringify(results.quiet)}`);
    const out = process.env.BENCH_OUT ?? join(import.meta.dir, "results.json");
    writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await svc.kill();
  }
}

if (import.meta.main) await main();
