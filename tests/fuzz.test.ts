// Property-based fuzzing of every route in the OpenAPI document: random and boundary values for
// every path, query, header and body field. Seeded and bounded for CI; for a longer local run:
//   FUZZ_RUNS=500 FUZZ_SEED=$RANDOM bun test tests/fuzz.test.ts
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { nodes, projects } from "../db/schema";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { BASE, harness, keyWith, seedNode, seedProject } from "./helpers";

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);

const SECRET_TITLE = "B-SECRET-TITLE-7f3a";
const SECRET_PROVIDER_KEY = "sk-B-SECRET-PROVIDER-KEY-91c2";

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; enum?: unknown[]; format?: string };

const weird = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "..",
    "../..",
    "..%2f..",
    "%00",
    "%",
    "%zz",
    "%E0%A4%A",
    "\u0000",
    "null",
    "-1",
    "0",
    "1e309",
    "NaN",
    "true",
    "[]",
    "{}",
    "<script>alert(1)</script>",
    "' or 1=1 --",
    "a".repeat(5000),
    "🦄".repeat(300),
    "\ud800",
  ),
);

function fromSchema(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 4) return fc.jsonValue({ maxDepth: 2 });
  if (s.anyOf) return fc.oneof(...s.anyOf.map((x) => fromSchema(x, depth + 1)), fc.constant(null));
  if (s.enum) return fc.oneof(fc.constantFrom(...s.enum), weird);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "string":
      return fc.oneof(weird, s.format === "uuid" ? fc.uuid() : fc.constantFrom("fr", "en", "#aabbcc", "https://example.com/x", "page", "hello-world"));
    case "integer":
    case "number":
      return fc.oneof(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), fc.constantFrom(0, -1, 1, 100, 101, 2 ** 31, Number.MAX_SAFE_INTEGER, 1.5), weird);
    case "boolean":
      return fc.oneof(fc.boolean(), weird);
    case "array":
      return fc.array(fromSchema(s.items, depth + 1), { maxLength: 4 });
    case "object": {
      const props = Object.entries(s.properties ?? {});
      if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      return fc.record(Object.fromEntries(props.map(([k, v]) => [k, fromSchema(v, depth + 1)])), { requiredKeys: [] });
    }
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

describe("fuzzing every OpenAPI route", async () => {
  // A high failure limit: the fuzzer sends garbage keys on purpose and must keep reaching every route.
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true", ADMIN_AUTH_FAILURE_LIMIT: "1000000" });
  const a = await seedProject(h);
  const b = await seedProject(h);
  const nodeA = await seedNode(h, a.slug, { slug: "home", blocks: [{ type: "text", data: { text: "A" } }] }, true);
  const nodeB = await seedNode(h, b.slug, { slug: "secret", title: SECRET_TITLE, blocks: [{ type: "text", data: { text: SECRET_TITLE } }] });
  const providerB = await h.request("POST", `/admin/p/${b.slug}/ai/providers`, {
    body: { name: "b", kind: "openai", api_key: SECRET_PROVIDER_KEY, base_url: "http://127.0.0.1:9/v1" },
  });
  const tokenB = await h.request("POST", `/admin/p/${b.slug}/ai/mcp/tokens`, { body: { name: "b" } });
  const secrets = [SECRET_TITLE, SECRET_PROVIDER_KEY, h.rootKey, tokenB.json?.data?.token].filter((s): s is string => typeof s === "string");
  const limitedKey = await keyWith(h, [...ADMIN_SCOPES], [a.id]);
  secrets.push(limitedKey);

  const ids = [nodeA.id, nodeB.id, providerB.json?.data?.id, tokenB.json?.data?.id, crypto.randomUUID()].filter(Boolean) as string[];
  const paramValue = (name: string): fc.Arbitrary<string> => {
    const known = name === "ref" ? [a.slug, a.id, b.slug, b.id] : name === "locale" ? ["fr", "en", "de", "FR"] : ids;
    return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: weird });
  };

  const spec = (await h.request("GET", "/swagger/json", { key: null })).json as {
    paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  };
  const operations = Object.entries(spec.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

  test("the document lists the admin, AI, MCP and ops routes", () => {
    expect(operations.length).toBeGreaterThan(30);
  });

  for (const { path, method, op } of operations) {
    test(`${method} ${path}: no 5xx, no stack, documented error body, nothing of another project`, async () => {
      const params = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      const queries = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
      const arb = fc.record({
        path: fc.record(Object.fromEntries(params.map((n) => [n, paramValue(n)]))),
        encode: fc.boolean(),
        query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...(queries.length ? queries : ["x"])), fc.string({ maxLength: 6 })), fc.oneof(weird, fc.integer().map(String))), { maxLength: 4 }),
        body: fc.oneof(
          { weight: 4, arbitrary: fromSchema(bodySchema).map((v) => JSON.stringify(v)) },
          { weight: 1, arbitrary: fc.constantFrom("{", "[".repeat(200) + "]".repeat(200), `{"a":${"[".repeat(40)}${"]".repeat(40)}}`, "null", '"str"', "\u0000") },
        ),
        auth: fc.constantFrom("limited", "limited", "limited", "none", "garbage"),
      });
      await fc.assert(
        fc.asyncProperty(arb, async (input) => {
          const enc = (v: string): string => encodeURIComponent(v.toWellFormed());
          let url = path.replace(/\{(\w+)\}/g, (_, n: string) => (input.encode ? enc(input.path[n] ?? "") : (input.path[n] ?? "")));
          const qs = input.query.map(([k, v]) => `${enc(k)}=${input.encode ? enc(v) : v}`).join("&");
          if (qs) url += `?${qs}`;
          let req: Request;
          try {
            const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream", host: "localhost" };
            if (input.auth === "limited") headers.authorization = `Bearer ${limitedKey}`;
            if (input.auth === "garbage") headers.authorization = "Bearer \u00ff garbage";
            req = new Request(BASE + url, { method, headers, body: method === "GET" || (method === "DELETE" && input.body.length > 1000) ? undefined : input.body });
          } catch {
            return; // not expressible as an HTTP request at all
          }
          const res = await h.app.handle(req);
          const text = await res.text();
          const where = `${method} ${url.slice(0, 200)} → ${res.status} ${text.slice(0, 300)}`;
          expect({ where, ok: res.status < 500 }).toEqual({ where, ok: true });
          expect(text).not.toMatch(/\n\s+at .+:\d+:\d+|\.ts:\d+|TypeError|SyntaxError|ReferenceError/);
          for (const s of secrets) expect({ where, leaked: text.includes(s) }).toEqual({ where, leaked: false });
          if (res.status >= 400 && (res.headers.get("content-type") ?? "").includes("json") && !path.startsWith("/mcp")) {
            const body = JSON.parse(text);
            if (path.startsWith("/oauth") || path.startsWith("/.well-known")) {
              // RFC 6749 / 7591 wire format on the OAuth endpoints.
              expect({ where, error: typeof body?.error }).toEqual({ where, error: "string" });
            } else {
              expect({ where, code: typeof body?.error?.code, message: typeof body?.error?.message }).toEqual({ where, code: "string", message: "string" });
            }
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });
  }

  test("project B is intact after the fuzzing", async () => {
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, nodeB.id));
    expect(row!.title).toBe(SECRET_TITLE);
    expect(await h.deps.db.select().from(projects).where(eq(projects.id, b.id))).toHaveLength(1);
    const prov = await h.request("GET", `/admin/p/${b.slug}/ai/providers`);
    expect(prov.json.data.length).toBe(providerB.status === 201 ? 1 : 0);
  });
});
