// Every MCP tool, fuzzed through the SDK's own client with random and boundary arguments, and the
// tenant-isolation matrix for MCP credentials (MCP token and OAuth access token of project A
// handed project B's ids). Seeded and bounded; FUZZ_RUNS / FUZZ_SEED for longer local runs.
import { afterAll, describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { oauthClients, oauthGrants, oauthTokens } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { generateToken, hashToken } from "../src/lib/tokens";
import { createUser } from "../src/users/service";
import { seedNode, seedProject } from "./helpers";
import { mcpHarness, TOOL_NAMES } from "./mcp-harness";

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
const SECRET = "B-MCP-SECRET-5d1e";

type Prop = { type?: string; anyOf?: Prop[]; enum?: unknown[]; items?: Prop; properties?: Record<string, Prop> };

describe("MCP tools: fuzzing and tenant isolation", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true" });
  afterAll(() => m.stop());
  const a = await seedProject(m.h);
  const b = await seedProject(m.h);
  const colA = await seedNode(m.h, a.slug, { slug: "blog", type: "collection" }, true);
  const nodeA = await seedNode(m.h, a.slug, { slug: "post", parent_id: colA.id, blocks: [{ type: "text", data: { text: "A" } }] }, true);
  const colB = await seedNode(m.h, b.slug, { slug: "blog", type: "collection", title: SECRET }, true);
  const nodeB = await seedNode(m.h, b.slug, { slug: "secret", parent_id: colB.id, title: SECRET, blocks: [{ type: "text", data: { text: SECRET } }] });
  await m.h.request("PUT", `/admin/p/${b.slug}/nodes/${nodeB.id}/translations/fr`, { body: { meta: { title: SECRET } } });
  const tokA = await m.token(a.slug, { name: "a", scopes: ["content:read", "content:write", "ai:read"] });

  // An OAuth access token for project A, as the token endpoint would store it.
  const user = await createUser(m.h.deps.db, { email: `fuzz-${uuidv7()}@example.com`, password: "a-long-password", role: "owner" }, new Date());
  const clientId = uuidv7();
  await m.h.deps.db.insert(oauthClients).values({ id: clientId, redirectUris: ["https://c.example/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code"], responseTypes: ["code"] });
  const grantId = uuidv7();
  const resource = `${m.h.deps.config.publicUrl}/mcp`;
  await m.h.deps.db.insert(oauthGrants).values({ id: grantId, clientId, userId: user.id, projectId: a.id, scopes: ["content:read", "content:write", "ai:read"], resource });
  const oauthA = generateToken("cms_at_");
  await m.h.deps.db.insert(oauthTokens).values({
    id: uuidv7(),
    tokenHash: hashToken(oauthA),
    kind: "access",
    grantId,
    clientId,
    userId: user.id,
    projectId: a.id,
    scopes: ["content:read", "content:write", "ai:read"],
    resource,
    expiresAt: new Date(Date.now() + 3_600_000),
  });

  const client = await m.connect(tokA.token);
  const { tools } = await client.listTools();

  const weird = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom("", "..", "../../etc/passwd", "%00", "\u0000", "a".repeat(40_000), "🦄", "-1", "null", nodeB.id, colB.id, b.slug, "secret", "blog", "fr", "en", nodeA.id, colA.id, "blog/post"),
  );
  const gen = (p: Prop | undefined, depth = 0): fc.Arbitrary<unknown> => {
    if (!p || depth > 3) return fc.jsonValue({ maxDepth: 2 });
    if (p.anyOf) return fc.oneof(...p.anyOf.map((x) => gen(x, depth + 1)));
    if (p.enum) return fc.oneof(fc.constantFrom(...p.enum), weird);
    switch (p.type) {
      case "string":
        return weird;
      case "integer":
      case "number":
        return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 101, 2 ** 53, 1.5));
      case "boolean":
        return fc.boolean();
      case "array":
        return fc.array(gen(p.items, depth + 1), { maxLength: 4 });
      case "object":
        return fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("title", "text", "slug", nodeA.blocks[0].id)), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      case "null":
        return fc.constant(null);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  };

  test("tools/list offers every tool of the issue", () => {
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(TOOL_NAMES));
  });

  for (const tool of tools) {
    test(`${tool.name}: random arguments give a result or a tool error, never a crash or another project's data`, async () => {
      const props = ((tool.inputSchema as { properties?: Record<string, Prop> }).properties ?? {}) as Record<string, Prop>;
      const args = fc.oneof(
        { weight: 4, arbitrary: fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, gen(v)])), { requiredKeys: [] }) },
        { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }) },
      );
      await fc.assert(
        fc.asyncProperty(args, async (input) => {
          let text: string;
          try {
            const r = await client.callTool({ name: tool.name, arguments: input as Record<string, unknown> });
            text = JSON.stringify(r);
          } catch (err) {
            // The SDK's own argument validation answers -32602 (invalid params), as the spec prescribes.
            expect(err instanceof McpError ? err.code : String(err)).toBe(-32602);
            text = String((err as Error).message);
          }
          expect(text).not.toContain(SECRET);
          expect(text).not.toMatch(/\n\s+at .+:\d+:\d+|\.ts:\d+|TypeError|ReferenceError/);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });
  }

  for (const [label, credential] of [
    ["MCP token", tokA.token],
    ["OAuth access token", oauthA],
  ] as const) {
    test(`a ${label} of project A gets not_found for every id of project B`, async () => {
      const c = await m.connect(credential);
      const calls: Array<[string, Record<string, unknown>]> = [
        ["get_node", { id: nodeB.id }],
        ["update_node", { node_id: nodeB.id, title: "hijacked" }],
        ["publish_node", { node_id: nodeB.id }],
        ["unpublish_node", { node_id: nodeB.id }],
        ["archive_node", { node_id: nodeB.id }],
        ["restore_node", { node_id: nodeB.id }],
        ["reorder_blocks", { node_id: nodeB.id, block_ids: [nodeB.blocks[0].id] }],
        ["list_entries", { collection: colB.id }],
        ["get_translation", { node_id: nodeB.id, locale: "fr" }],
        ["upsert_translation", { node_id: nodeB.id, locale: "fr", meta: { title: "hijacked" } }],
        ["translate_node", { node_id: nodeB.id, locale: "fr" }],
        ["create_node", { slug: "child", title: "x", parent_id: nodeB.id }],
      ];
      for (const [name, args] of calls) {
        const r = await c.callTool({ name, arguments: args });
        const text = JSON.stringify(r.content);
        expect({ name, isError: r.isError, notFound: /not_found|not found|invalid/i.test(text) }).toEqual({ name, isError: true, notFound: true });
        expect(text).not.toContain(SECRET);
      }
      const listed = JSON.stringify(await c.callTool({ name: "list_nodes", arguments: {} }));
      expect(listed).not.toContain(nodeB.id);
      expect(listed).not.toContain(SECRET);
      const resources = JSON.stringify(await c.listResources());
      expect(resources).not.toContain(nodeB.id);
      // Unknown, exactly like a missing node (the spec's resource-not-found code, -32002).
      for (const uri of [`cms://${b.slug}/nodes/${nodeB.id}`, `cms://${a.slug}/nodes/${nodeB.id}`]) await expect(c.readResource({ uri })).rejects.toMatchObject({ code: -32002, data: { uri } });
      // B is untouched.
      const after = await m.h.request("GET", `/admin/p/${b.slug}/nodes/${nodeB.id}`);
      expect(after.json.data.title).toBe(SECRET);
      expect(after.json.data.status).toBe("draft");
    });
  }
});
