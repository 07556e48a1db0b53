// One project's hostile writes against another project's delivery reads, on a real process
// (`bun src/main.ts`; the embedded database, or a fresh PostgreSQL database when the suite runs on
// one). Validation runs on the event loop every project shares: before its bounds, one 1 MB `uri`
// write held it 10-13 s, one `pattern` value 2-8 s, one 780 KB model 3-4 s (bench/validation).
// The baseline is the same reader while the attacker sends benign writes of the same size (1 MB of
// valid content, the largest model allowed): what a write costs the loop anyway (reading the body;
// on the embedded database, the database itself runs on that loop). The hostile writes may add at
// most 50 ms to the slowest read of the other project. The machine's load moves both phases alike;
// bench/validation/run.ts gives the figures on a quiet machine.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { freshDatabase, migratedDataDir } from "./helpers";
import { serve } from "./service-process";

const TOKEN = `validation-attack-root-token-${crypto.randomUUID()}`;

interface Phase {
  readonly max: number;
  readonly p99: number;
  readonly reads: number;
  readonly answers: number[];
}

/** Reads `page` in a loop while `run` sends its writes; the writes' statuses and the reads' latencies. */
async function phase(page: string, run: () => Promise<number[]>): Promise<Phase> {
  const latencies: number[] = [];
  let on = true;
  const reader = (async () => {
    while (on) {
      const t = performance.now();
      const res = await fetch(page);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      latencies.push(performance.now() - t);
    }
  })();
  const answers = await run();
  on = false;
  await reader;
  latencies.sort((a, b) => a - b);
  return { max: latencies.at(-1) ?? 0, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0, reads: latencies.length, answers };
}

/** The attacker's model: a uri, a catastrophic pattern, and a recursion that doubles at every level. */
const MODEL = {
  block_types: [
    { name: "link", schema: { type: "object", properties: { url: { type: "string", format: "uri" } } } },
    { name: "code", schema: { type: "object", properties: { code: { type: "string", pattern: "^(\\w+\\s?)*$" } } } },
    {
      name: "nest",
      schema: {
        $defs: {
          n: {
            anyOf: [
              { type: "array", items: { $ref: "#/$defs/n" } },
              { type: "array", items: { $ref: "#/$defs/n" } },
            ],
          },
        },
        type: "object",
        properties: { t: { $ref: "#/$defs/n" } },
      },
    },
  ],
};
const props = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`field_${i}`, { type: "string", maxLength: 200, description: "a field of the type, told to editors" }]));
/** `types` node types of `fields` fields each, plus MODEL's block types. */
const model = (types: number, fields: number) => ({
  ...MODEL,
  node_types: Array.from({ length: types }, (_, t) => ({ name: `type_${t}`, description: "a type", fields: { type: "object", properties: props(fields) } })),
});
const node = (blocks: unknown[]) => ({ slug: `n-${crypto.randomUUID()}`, title: "n", blocks });
let deep: unknown = [];
for (let i = 0; i < 24; i++) deep = [deep];

test("a project's hostile writes add at most 50 ms to another project's delivery reads", async () => {
  const pg = process.env.DATABASE_URL?.startsWith("postgres") ? await freshDatabase() : null;
  const dataDir = pg ? undefined : await migratedDataDir();
  const svc = await serve(pg?.url ?? "", TOKEN, 5, { dataDir });
  try {
    const call = async (key: string, method: string, path: string, body?: string): Promise<{ status: number; json: any }> => {
      const res = await fetch(svc.url + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
      return { status: res.status, json: await res.json().catch(() => null) };
    };
    const root = (m: string, path: string, body?: unknown) => call(TOKEN, m, path, body === undefined ? undefined : JSON.stringify(body));
    const a = (await root("POST", "/admin/projects", { slug: "attacker", name: "A", default_locale: "en", locales: ["en"] })).json.data;
    const b = (await root("POST", "/admin/projects", { slug: "victim", name: "B", default_locale: "en", locales: ["en"] })).json.data;
    const home = (await root("POST", "/admin/p/victim/nodes", { slug: "home", title: "Home", blocks: [{ type: "text", data: { body: "hello" } }] })).json.data;
    expect((await root("POST", `/admin/p/victim/nodes/${home.id}/publish`)).status).toBe(200);
    const key = (await root("POST", "/admin/keys", { name: "attacker", scopes: ["model:write", "content:write", "content:read"], project_ids: [a.id] })).json.data.key;
    expect((await call(key, "PUT", "/admin/p/attacker/model", JSON.stringify(MODEL))).status).toBe(200);
    expect((await call(key, "GET", `/admin/p/${b.id}/model`)).status).toBe(404);
    const page = `${svc.url}/api/p/victim/nodes/by-path/home`;
    for (let i = 0; i < 50; i++) expect((await fetch(page)).status).toBe(200);

    // Bodies built before the phases: the reader's process does no work of its own meanwhile.
    const sends = (bodies: [string, string][]) => async () => {
      const out: number[] = [];
      for (const [method, body] of bodies) out.push((await call(key, method, method === "PUT" ? "/admin/p/attacker/model?force=true" : "/admin/p/attacker/nodes", body)).status);
      return out;
    };
    const valid = () => JSON.stringify(node(Array.from({ length: 120 }, () => ({ type: "link", data: { url: `https://a/${"a@".repeat(4000)}` } }))));
    const wide = (schemas: number) => JSON.stringify({ ...MODEL, node_types: [{ name: "wide", fields: { type: "object", properties: props(schemas - 1) } }] });
    // What the limits allow: 1 MB of valid content, the largest model, the largest type.
    const benign = (): [string, string][] => [
      ["POST", valid()],
      ["PUT", JSON.stringify(model(150, 15))],
      ["PUT", wide(100)],
      ["POST", valid()],
    ];
    const hostile = (): [string, string][] => [
      ["POST", JSON.stringify(node(Array.from({ length: 16 }, () => ({ type: "link", data: { url: `https://a/${"a@".repeat(31_000)} ` } }))))],
      ["POST", JSON.stringify(node([{ type: "code", data: { code: `${"a".repeat(28)}!` } }]))],
      ["POST", JSON.stringify(node([{ type: "code", data: { code: "a".repeat(1_000_000) } }]))],
      ["POST", JSON.stringify(node([{ type: "nest", data: { t: deep } }]))],
      ["PUT", JSON.stringify(model(500, 15))],
      ["PUT", wide(101)],
    ];
    // Three rounds of each, alternated; the median of each phase's slowest read is compared, so
    // that one pause of a loaded machine in one phase does not decide.
    const rounds: { benign: Phase; hostile: Phase }[] = [];
    for (let round = 0; round < 3; round++) {
      const calm = await phase(page, sends(benign()));
      expect(calm.answers).toEqual([201, 200, 200, 201]);
      const attack = await phase(page, sends(hostile()));
      expect(attack.answers).toEqual([400, 400, 400, 400, 400, 400]);
      expect(attack.reads).toBeGreaterThan(0);
      rounds.push({ benign: calm, hostile: attack });
    }
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[1] ?? 0;
    const figures = { benign: median(rounds.map((r) => r.benign.max)), hostile: median(rounds.map((r) => r.hostile.max)) };
    console.log(
      `[validation attack] B's slowest read (ms): ${JSON.stringify(figures)}; rounds ${JSON.stringify(rounds.map((r) => [r.benign, r.hostile].map(({ max, p99, reads }) => ({ max: Math.round(max), p99: Math.round(p99), reads }))))}`,
    );
    expect(figures.hostile).toBeLessThanOrEqual(figures.benign + 50);
  } finally {
    await svc.kill();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await pg?.drop();
  }
}, 240_000);
