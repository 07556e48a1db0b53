// Every admin route in the OpenAPI document: no key → 401, a key without the route's scope → 403
// insufficient_scope naming that scope, and the named scope alone is enough to run the operation.
// Each route gets a fixture of its own (a project with a node, a translation, a provider, an MCP
// token, an admin key, an OAuth client and consent), so no check can pass on a 404 left behind by
// an earlier check, and each "enough" check asserts the operation's own answer and its effect.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { adminKeys, approvals, nodes, oauthGrants, projectMembers, users, webhookDeliveries, webhookEndpoints, webhookEvents, webhookOutbox } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { ADMIN_SCOPES, ROLE_SCOPES } from "../src/lib/scopes";
import { textHash } from "../src/model/units";
import { hashPassword } from "../src/platform/password";
import { startFakeVendors } from "./fake-vendors";
import { BASE, harness, keyWith, seedNode, seedProject, type TestHarness, type TestResponse, uniqueSlug } from "./helpers";
import { twoColourPng } from "./media.helpers";
import { seedUser } from "./oauth.helpers";

interface Fixture {
  project: { id: string; slug: string };
  node: { id: string; blocks: Array<{ id: string }> };
  providerId: string;
  tokenId: string;
  keyId: string;
  clientId: string;
  grantId: string;
  /** A user who is a viewer of the fixture's project (users and members routes). */
  memberId: string;
  previewTokenId: string;
  /** A media item, uploaded by the media cases' `before`. */
  mediaId?: string;
}

interface Case {
  /** Arranges the fixture with the root key (e.g. archive before restore). */
  before?: (h: TestHarness, f: Fixture) => Promise<void>;
  url: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
  /** The operation's own answer: status and what its body must hold. */
  expect: (res: TestResponse, f: Fixture, scope: string) => void;
  /** Its effect, read back with the root key or from the database (`scope`: the one just tried alone). */
  after?: (h: TestHarness, f: Fixture, scope: string) => Promise<void>;
}

/** A route answering a file (the model's types): its media type and a line of it. */
const file = (type: string, line: string) => (res: TestResponse) => {
  expect({ status: res.status, type: res.headers.get("content-type") }).toEqual({ status: 200, type });
  expect(res.text).toContain(line);
};
/** A translation job per fixture project, made by the job cases' `before`. */
const jobs = new Map<string, string>();
/** The fixture member's email, read by the add-by-email case's `before`. */
const emails = new Map<string, string>();
const rootGet = async (h: TestHarness, url: string): Promise<TestResponse> => h.request("GET", url);
const ok = (status: number, data?: (d: any, f: Fixture) => void) => (res: TestResponse, f: Fixture) => {
  expect({ status: res.status, body: res.status === status ? "" : res.text }).toEqual({ status, body: "" });
  if (data) data(res.json?.data, f);
};
const gone = (url: (f: Fixture) => string) => async (h: TestHarness, f: Fixture) => {
  expect((await rootGet(h, url(f))).status).toBe(404);
};
const P = (f: Fixture): string => `/admin/p/${f.project.slug}`;
const N = (f: Fixture): string => `${P(f)}/nodes/${f.node.id}`;
const M = (f: Fixture): string => `${P(f)}/media/${f.mediaId}`;
const picture = await twoColourPng(64, 32);
const pictures = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(picture as Uint8Array<ArrayBuffer>, { headers: { "content-type": "image/png" } }) });
afterAll(() => pictures.stop(true));
const mediaForm = (): FormData => {
  const form = new FormData();
  form.set("file", new File([picture as Uint8Array<ArrayBuffer>], "pic.png"));
  return form;
};
const withMedia = async (h: TestHarness, f: Fixture): Promise<void> => {
  const res = await h.request("POST", `${P(f)}/media`, { raw: mediaForm() });
  if (res.status !== 201) throw new Error(`media fixture: ${res.status} ${res.text}`);
  f.mediaId = res.json.data.id;
};

/** Keyed "METHOD path" exactly as the OpenAPI document writes it. */
const CASES: Record<string, Case> = {
  "GET /admin/projects": { url: () => "/admin/projects", expect: ok(200, (d, f) => expect(d.map((p: any) => p.id)).toContain(f.project.id)) },
  "POST /admin/projects": { url: () => "/admin/projects", body: () => ({ slug: uniqueSlug("s"), name: "Made by scope" }), expect: ok(201, (d) => expect(d.name).toBe("Made by scope")) },
  "GET /admin/projects/{ref}": { url: (f) => `/admin/projects/${f.project.slug}`, expect: ok(200, (d, f) => expect(d.id).toBe(f.project.id)) },
  "PATCH /admin/projects/{ref}": {
    url: (f) => `/admin/projects/${f.project.slug}`,
    body: () => ({ name: "renamed" }),
    expect: ok(200, (d) => expect(d.name).toBe("renamed")),
  },
  "DELETE /admin/projects/{ref}": { url: (f) => `/admin/projects/${f.project.slug}`, expect: ok(204), after: gone((f) => `/admin/projects/${f.project.id}`) },
  "GET /admin/p/{ref}/nodes": { url: (f) => `${P(f)}/nodes`, expect: ok(200, (d, f) => expect(d.map((n: any) => n.id)).toEqual([f.node.id])) },
  "POST /admin/p/{ref}/nodes": { url: (f) => `${P(f)}/nodes`, body: () => ({ slug: "made", title: "Made" }), expect: ok(201, (d) => expect(d.path).toBe("made")) },
  "GET /admin/p/{ref}/nodes/{id}": { url: N, expect: ok(200, (d, f) => expect(d.blocks.map((b: any) => b.id)).toEqual([f.node.blocks[0]!.id])) },
  "PATCH /admin/p/{ref}/nodes/{id}": { url: N, body: () => ({ title: "Patched" }), expect: ok(200, (d) => expect(d.title).toBe("Patched")) },
  "DELETE /admin/p/{ref}/nodes/{id}": { url: N, expect: ok(204), after: gone(N) },
  "PUT /admin/p/{ref}/nodes/{id}/blocks": {
    url: (f) => `${N(f)}/blocks`,
    body: () => [{ type: "quote", data: { text: "q" } }],
    expect: ok(200, (d) => expect(d.map((b: any) => b.type)).toEqual(["quote"])),
  },
  "POST /admin/p/{ref}/nodes/{id}/publish": { url: (f) => `${N(f)}/publish`, expect: ok(200, (d) => expect(d.status).toBe("published")) },
  "POST /admin/p/{ref}/nodes/{id}/unpublish": {
    before: async (h, f) => void (await h.request("POST", `${N(f)}/publish`)),
    url: (f) => `${N(f)}/unpublish`,
    expect: ok(200, (d) => expect(d.status).toBe("draft")),
  },
  "POST /admin/p/{ref}/nodes/{id}/discard": {
    // A published node with a change in its working copy: discarding brings the published title back.
    before: async (h, f) => {
      await h.request("POST", `${N(f)}/publish`);
      await h.request("PATCH", N(f), { body: { title: "Unpublished change" } });
    },
    url: (f) => `${N(f)}/discard`,
    expect: ok(200, (d) => expect(d).toMatchObject({ title: "n", state: "published" })),
  },
  "GET /admin/p/{ref}/nodes/{id}/published": {
    // The published version, not the working copy: published, then edited.
    before: async (h, f) => {
      await h.request("POST", `${N(f)}/publish`);
      await h.request("PATCH", N(f), { body: { title: "Working copy" } });
    },
    url: (f) => `${N(f)}/published`,
    expect: ok(200, (d) => expect(d).toMatchObject({ title: "n" })),
  },
  "POST /admin/p/{ref}/nodes/{id}/archive": { url: (f) => `${N(f)}/archive`, expect: ok(200, (d) => expect(d.status).toBe("archived")) },
  "POST /admin/p/{ref}/nodes/{id}/restore": {
    before: async (h, f) => void (await h.request("POST", `${N(f)}/archive`)),
    url: (f) => `${N(f)}/restore`,
    expect: ok(200, (d) => expect(d.status).toBe("draft")),
  },
  "GET /admin/p/{ref}/node": {
    url: (f) => `${P(f)}/node?path=n&locale=fr`,
    expect: ok(200, (d, f) => expect(d).toMatchObject({ id: f.node.id, title: "Bonjour", locale: "fr", translated: true })),
  },
  "PUT /admin/p/{ref}/nodes/{id}/blocks/order": {
    url: (f) => `${N(f)}/blocks/order`,
    body: (f) => ({ block_ids: [f.node.blocks[0]!.id] }),
    expect: ok(200, (d, f) => expect(d).toEqual({ node_id: f.node.id, blocks: [expect.objectContaining({ id: f.node.blocks[0]!.id, order: 0 })] })),
  },
  "GET /admin/p/{ref}/search": { url: (f) => `${P(f)}/search?query=hello`, expect: ok(200, (d, f) => expect(d.map((x: any) => [x.id, x.status])).toEqual([[f.node.id, "draft"]])) },
  // Semantic search's setting (tests/search-semantic.test.ts covers it with a provider).
  "GET /admin/p/{ref}/search/semantic": { url: (f) => `${P(f)}/search/semantic`, expect: ok(200, (d) => expect(d.semantic).toBeNull()) },
  "PUT /admin/p/{ref}/search/semantic": { url: (f) => `${P(f)}/search/semantic`, body: () => ({ provider_id: null }), expect: ok(200, (d) => expect(d.semantic).toBeNull()) },
  "GET /admin/p/{ref}/entries": {
    before: async (h, f) => {
      const col = await h.request("POST", `${P(f)}/nodes`, { body: { slug: "col", title: "Col", type: "collection" } });
      await h.request("POST", `${P(f)}/nodes`, { body: { slug: "e", title: "E", type: "entry", parent_id: col.json.data.id } });
    },
    url: (f) => `${P(f)}/entries?collection=col`,
    expect: ok(200, (d) => expect(d.map((e: any) => e.slug)).toEqual(["e"])),
  },
  // Two scopes: content:write is named first; with it alone the same check names ai:read, and both together translate.
  "POST /admin/p/{ref}/nodes/{id}/translations/{locale}/translate": {
    url: (f) => `${N(f)}/translations/fr/translate`,
    expect: (res) => {
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ code: "insufficient_scope", details: { required: "ai:read" } });
    },
    after: async (h, f) => {
      // force: the fixture's fr title is a person's, never overwritten without it.
      const both = await h.request("POST", `${N(f)}/translations/fr/translate`, { key: await keyWith(h, ["content:write", "ai:read"]), body: { force: true } });
      expect(both.status).toBe(200);
      expect(both.json.data.translation).toMatchObject({ locale: "fr", status: "draft", meta: { title: "[translated] n" } });
    },
  },
  "GET /admin/p/{ref}/nodes/{id}/translations": { url: (f) => `${N(f)}/translations`, expect: ok(200, (d) => expect(d.map((t: any) => t.locale)).toEqual(["fr"])) },
  "GET /admin/p/{ref}/nodes/{id}/translations/{locale}": { url: (f) => `${N(f)}/translations/fr`, expect: ok(200, (d) => expect(d.meta.title).toBe("Bonjour")) },
  "PUT /admin/p/{ref}/nodes/{id}/translations/{locale}": {
    url: (f) => `${N(f)}/translations/fr`,
    body: () => ({ meta: { title: "Salut" } }),
    expect: ok(200, (d) => expect(d.meta.title).toBe("Salut")),
  },
  // The translation workflow (issue 41): stale fields, the glossary (JSON and CSV), files translators use.
  "GET /admin/p/{ref}/translations/stale": { url: (f) => `${P(f)}/translations/stale?locale=fr`, expect: ok(200, (d) => expect(d).toEqual([])) },
  "GET /admin/p/{ref}/glossary": { url: (f) => `${P(f)}/glossary`, expect: ok(200, (d) => expect(d).toEqual({ terms: [], style: {} })) },
  "PUT /admin/p/{ref}/glossary": {
    url: (f) => `${P(f)}/glossary`,
    body: () => ({ terms: [{ source: "Cart", target: "Panier", locale: "fr", kind: "forced" }] }),
    expect: ok(200, (d) => expect(d.terms).toEqual([{ source: "Cart", target: "Panier", locale: "fr", kind: "forced", case_sensitive: false }])),
  },
  "GET /admin/p/{ref}/glossary.csv": { url: (f) => `${P(f)}/glossary.csv`, expect: file("text/csv; charset=utf-8", "source,target,locale,kind,case_sensitive") },
  "PUT /admin/p/{ref}/glossary.csv": {
    url: (f) => `${P(f)}/glossary.csv`,
    body: () => ({ csv: "not used: the body is the CSV" }),
    expect: (res) => {
      // A JSON body is not CSV: the handler reached, its own message.
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
    },
  },
  // Files translators use (issue 41): the node's units as XLIFF 2.1; the flat JSON form of one unit back in.
  "GET /admin/p/{ref}/nodes/{id}/xliff": {
    url: (f) => `${N(f)}/xliff?locale=fr`,
    expect: file("application/xliff+xml; charset=utf-8", '<segment state="reviewed"><source>n</source><target>Bonjour</target></segment>'),
  },
  "POST /admin/p/{ref}/xliff": {
    url: (f) => `${P(f)}/xliff`,
    body: (f) => ({ node_id: f.node.id, locale: "fr", units: [{ id: ".title", target: "Salut", source_hash: textHash("n"), state: "reviewed" }] }),
    expect: ok(200, (d) => expect(d).toMatchObject({ applied: 1, rejected: [] })),
    after: async (h, f) => expect((await rootGet(h, `${N(f)}/translations/fr`)).json.data.meta.title).toBe("Salut"),
  },
  "DELETE /admin/p/{ref}/nodes/{id}/translations/{locale}": { url: (f) => `${N(f)}/translations/fr`, expect: ok(204), after: gone((f) => `${N(f)}/translations/fr`) },
  // Revisions (issue 25): the fixture's node has two (created, its fr translation).
  "GET /admin/p/{ref}/nodes/{id}/revisions": { url: (f) => `${N(f)}/revisions`, expect: ok(200, (d) => expect(d.map((r: any) => r.number)).toEqual([2, 1])) },
  "GET /admin/p/{ref}/nodes/{id}/revisions/{rev}": { url: (f) => `${N(f)}/revisions/2`, expect: ok(200, (d) => expect(d.diff.changes[0].path).toBe("/translations/0")) },
  "POST /admin/p/{ref}/nodes/{id}/revisions/{rev}/restore": {
    url: (f) => `${N(f)}/revisions/1/restore`,
    expect: ok(200, (d, f) => expect(d).toEqual({ node_id: f.node.id, revision: 3, restored: [f.node.id] })),
    after: gone((f) => `${N(f)}/translations/fr`),
  },
  "GET /admin/p/{ref}/nodes/{id}/agent-changes": { url: (f) => `${N(f)}/agent-changes`, expect: ok(200, (d) => expect(d).toEqual([])) },
  // Undo an agent (issue 39): the fixture's MCP token changed nothing, so nothing is undone.
  "POST /admin/p/{ref}/agents/undo": {
    url: (f) => `${P(f)}/agents/undo`,
    body: (f) => ({ agent: { kind: "mcp_token", id: f.tokenId }, since: "2000-01-01T00:00:00Z" }),
    expect: ok(200, (d) => expect(d).toEqual({ restored: [], deleted: [], left: [] })),
  },
  "GET /admin/p/{ref}/trash": {
    before: async (h, f) => void (await h.request("DELETE", N(f))),
    url: (f) => `${P(f)}/trash`,
    expect: ok(200, (d, f) => expect(d.map((t: any) => t.node_id)).toEqual([f.node.id])),
  },
  "GET /admin/p/{ref}/model/types.ts": { url: (f) => `${P(f)}/model/types.ts`, expect: file("text/plain; charset=utf-8", "export type AnyNode = Node | UntypedNode;") },
  "GET /admin/p/{ref}/model/schema.json": { url: (f) => `${P(f)}/model/schema.json`, expect: file("application/schema+json", '"$schema": "https://json-schema.org/draft/2020-12/schema"') },
  // The media library (issue 26): an item uploaded by `before` (the fixture has none).
  "POST /admin/p/{ref}/media": { url: (f) => `${P(f)}/media`, body: () => mediaForm(), expect: ok(201, (d) => expect(d.type).toBe("image/png")) },
  "POST /admin/p/{ref}/media/from-url": {
    url: (f) => `${P(f)}/media/from-url`,
    body: () => ({ url: `http://127.0.0.1:${pictures.port}/pic.png` }),
    expect: ok(201, (d) => expect(d.filename).toBe("pic.png")),
  },
  "GET /admin/p/{ref}/media": { before: withMedia, url: (f) => `${P(f)}/media`, expect: ok(200, (d, f) => expect(d.map((m: any) => m.id)).toEqual([f.mediaId])) },
  "GET /admin/p/{ref}/media/{id}": { before: withMedia, url: M, expect: ok(200, (d, f) => expect(d.id).toBe(f.mediaId)) },
  "PATCH /admin/p/{ref}/media/{id}": { before: withMedia, url: M, body: () => ({ alt: { en: "patched" } }), expect: ok(200, (d) => expect(d.alt).toEqual({ en: "patched" })) },
  "DELETE /admin/p/{ref}/media/{id}": { before: withMedia, url: M, expect: ok(204), after: gone(M) },
  "POST /admin/p/{ref}/media/{id}/describe": {
    before: withMedia,
    url: (f) => `${M(f)}/describe`,
    body: () => ({ locales: ["fr"] }),
    expect: ok(200, (d) => expect(Object.keys(d.alt_draft).sort()).toEqual(["en", "fr"])),
  },
  "GET /admin/p/{ref}/media/{id}/references": { before: withMedia, url: (f) => `${M(f)}/references`, expect: ok(200, (d) => expect(d).toEqual([])) },
  "GET /admin/p/{ref}/activity": { url: (f) => `${P(f)}/activity`, expect: ok(200, (d) => expect(Array.isArray(d)).toBe(true)) },
  "GET /admin/p/{ref}/theme": { url: (f) => `${P(f)}/theme`, expect: ok(200, (d) => expect(d).toHaveProperty("accent_color")) },
  "PUT /admin/p/{ref}/theme": { url: (f) => `${P(f)}/theme`, body: () => ({ accent_color: "#123456" }), expect: ok(200, (d) => expect(d.accent_color).toBe("#123456")) },
  "PATCH /admin/p/{ref}/theme": { url: (f) => `${P(f)}/theme`, body: () => ({ name_override: "Brand" }), expect: ok(200, (d) => expect(d.name_override).toBe("Brand")) },
  "GET /admin/keys": { url: () => "/admin/keys", expect: ok(200, (d, f) => expect(d.map((k: any) => k.id)).toContain(f.keyId)) },
  "POST /admin/keys": { url: () => "/admin/keys", body: () => ({ name: "minted", scopes: ["keys:write"] }), expect: ok(201, (d) => expect(d.scopes).toEqual(["keys:write"])) },
  "DELETE /admin/keys/{id}": {
    url: (f) => `/admin/keys/${f.keyId}`,
    expect: ok(204),
    after: async (h, f) => {
      const [k] = await h.deps.db.select({ revokedAt: adminKeys.revokedAt }).from(adminKeys).where(eq(adminKeys.id, f.keyId));
      expect(k!.revokedAt).not.toBeNull();
    },
  },
  "GET /admin/ai/kinds": { url: () => "/admin/ai/kinds", expect: ok(200, (d) => expect(d.map((k: any) => k.kind)).toContain("anthropic")) },
  "GET /admin/p/{ref}/ai/providers": { url: (f) => `${P(f)}/ai/providers`, expect: ok(200, (d, f) => expect(d.map((p: any) => p.id)).toEqual([f.providerId])) },
  "POST /admin/p/{ref}/ai/providers": {
    url: (f) => `${P(f)}/ai/providers`,
    body: () => ({ name: "second", kind: "openai", base_url: "http://127.0.0.1:9/v1" }),
    expect: ok(201, (d) => expect(d.name).toBe("second")),
  },
  "GET /admin/ai/providers/{id}": { url: (f) => `/admin/ai/providers/${f.providerId}`, expect: ok(200, (d) => expect(d.api_key).toBe("sk-scope-check-1234")) },
  "PATCH /admin/ai/providers/{id}": { url: (f) => `/admin/ai/providers/${f.providerId}`, body: () => ({ name: "patched" }), expect: ok(200, (d) => expect(d.name).toBe("patched")) },
  "DELETE /admin/ai/providers/{id}": { url: (f) => `/admin/ai/providers/${f.providerId}`, expect: ok(204), after: gone((f) => `/admin/ai/providers/${f.providerId}`) },
  "POST /admin/p/{ref}/ai/translate": {
    url: (f) => `${P(f)}/ai/translate`,
    body: () => ({ from: "en", to: "fr", text: "Hello" }),
    expect: ok(200, (d) => expect(d).toMatchObject({ translation: "[translated] Hello", provider: "openai" })),
  },
  "GET /admin/p/{ref}/ai/usage": { url: (f) => `${P(f)}/ai/usage`, expect: ok(200, (d) => expect(Array.isArray(d)).toBe(true)) },
  // Translation jobs (issue 41): starting one needs content:write and ai:read (as translate does).
  "POST /admin/p/{ref}/translation-jobs": {
    url: (f) => `${P(f)}/translation-jobs`,
    body: () => ({ locales: ["fr"], dry_run: true }),
    expect: (res) => {
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ code: "insufficient_scope" });
    },
    after: async (h, f) => {
      const both = await h.request("POST", `${P(f)}/translation-jobs`, { key: await keyWith(h, ["content:write", "ai:read"]), body: { locales: ["fr"], dry_run: true } });
      expect([both.status, both.json.data.status, both.json.data.id]).toEqual([201, "dry_run", null]);
    },
  },
  "GET /admin/p/{ref}/translation-jobs": { url: (f) => `${P(f)}/translation-jobs`, expect: ok(200, (d) => expect(Array.isArray(d)).toBe(true)) },
  "GET /admin/p/{ref}/translation-jobs/{id}": {
    before: async (h, f) => void jobs.set(f.project.id, (await h.request("POST", `${P(f)}/translation-jobs`, { body: { locales: ["fr"], force: true } })).json.data.id),
    url: (f) => `${P(f)}/translation-jobs/${jobs.get(f.project.id)}`,
    expect: ok(200, (d, f) => expect(d.id).toBe(jobs.get(f.project.id))),
  },
  "GET /admin/p/{ref}/translation-jobs/{id}/xliff": {
    before: async (h, f) => void jobs.set(f.project.id, (await h.request("POST", `${P(f)}/translation-jobs`, { body: { locales: ["fr"], force: true } })).json.data.id),
    url: (f) => `${P(f)}/translation-jobs/${jobs.get(f.project.id)}/xliff`,
    expect: file("application/xliff+xml; charset=utf-8", '<segment state="reviewed"><source>n</source><target>Bonjour</target></segment>'),
  },
  "POST /admin/p/{ref}/translation-jobs/{id}/cancel": {
    before: async (h, f) => void jobs.set(f.project.id, (await h.request("POST", `${P(f)}/translation-jobs`, { body: { locales: ["fr"], force: true } })).json.data.id),
    url: (f) => `${P(f)}/translation-jobs/${jobs.get(f.project.id)}/cancel`,
    expect: ok(200, (d) => expect(d.status).toBe("cancelled")),
  },
  "GET /admin/p/{ref}/ai/mcp/tokens": { url: (f) => `${P(f)}/ai/mcp/tokens`, expect: ok(200, (d, f) => expect(d.map((t: any) => t.id)).toEqual([f.tokenId])) },
  // The route check passes on ai:write alone; a token then needs an MCP scope the key holds, which
  // ai:write is not: the handler's own refusal (a different message) proves it was reached.
  "POST /admin/p/{ref}/ai/mcp/tokens": {
    url: (f) => `${P(f)}/ai/mcp/tokens`,
    body: () => ({ name: "minted" }),
    expect: (res) => {
      expect(res.status).toBe(403);
      expect(res.json.error.message).toContain("an MCP token needs at least one of the scopes");
    },
    // …and with an MCP scope beside it, the token is minted.
    after: async (h, f, scope) => {
      const minted = await h.request("POST", `${P(f)}/ai/mcp/tokens`, { key: await keyWith(h, [scope, "content:read"]), body: { name: "minted" } });
      expect(minted.status).toBe(201);
      expect(minted.json.data).toMatchObject({ name: "minted", scopes: ["content:read"] });
      expect((await rootGet(h, `${P(f)}/ai/mcp/tokens`)).json.data.map((t: any) => t.name)).toContain("minted");
    },
  },
  "DELETE /admin/p/{ref}/ai/mcp/tokens": {
    url: (f) => `${P(f)}/ai/mcp/tokens?id=${f.tokenId}`,
    expect: ok(204),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/ai/mcp/tokens`)).json.data).toEqual([]),
  },
  "DELETE /admin/p/{ref}/ai/mcp/tokens/{id}": {
    url: (f) => `${P(f)}/ai/mcp/tokens/${f.tokenId}`,
    expect: ok(204),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/ai/mcp/tokens`)).json.data).toEqual([]),
  },
  "POST /admin/p/{ref}/nodes/{id}/schedule": {
    url: (f) => `${N(f)}/schedule`,
    body: () => ({ publish_at: "2099-01-01T09:00:00+01:00" }),
    expect: ok(200, (d) => expect(d.publish_at).toBe("2099-01-01T08:00:00.000Z")),
    after: async (h, f) => expect((await rootGet(h, N(f))).json.data.publish_at).toBe("2099-01-01T08:00:00.000Z"),
  },
  "POST /admin/p/{ref}/preview-tokens": {
    url: (f) => `${P(f)}/preview-tokens`,
    body: () => ({ name: "minted" }),
    expect: ok(201, (d) => expect(d.token).toMatch(/^cms_pv_/)),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/preview-tokens`)).json.data.map((t: any) => t.name)).toContain("minted"),
  },
  "GET /admin/p/{ref}/preview-tokens": { url: (f) => `${P(f)}/preview-tokens`, expect: ok(200, (d, f) => expect(d.map((t: any) => t.id)).toEqual([f.previewTokenId])) },
  "DELETE /admin/p/{ref}/preview-tokens": {
    url: (f) => `${P(f)}/preview-tokens?id=${f.previewTokenId}`,
    expect: ok(204),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/preview-tokens`)).json.data).toEqual([]),
  },
  "DELETE /admin/p/{ref}/preview-tokens/{id}": {
    url: (f) => `${P(f)}/preview-tokens/${f.previewTokenId}`,
    expect: ok(204),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/preview-tokens`)).json.data).toEqual([]),
  },
  "GET /admin/oauth/clients": { url: () => "/admin/oauth/clients", expect: ok(200, (d, f) => expect(d.map((c: any) => c.client_id)).toContain(f.clientId)) },
  "DELETE /admin/oauth/clients/{id}": {
    url: (f) => `/admin/oauth/clients/${encodeURIComponent(f.clientId)}`,
    expect: ok(204),
    after: async (h, f) => expect((await rootGet(h, "/admin/oauth/clients")).json.data.map((c: any) => c.client_id)).not.toContain(f.clientId),
  },
  "GET /admin/oauth/grants": { url: (f) => `/admin/oauth/grants?project=${f.project.slug}`, expect: ok(200, (d, f) => expect(d.map((g: any) => g.id)).toEqual([f.grantId])) },
  "DELETE /admin/oauth/grants/{id}": {
    url: (f) => `/admin/oauth/grants/${f.grantId}`,
    expect: ok(204),
    after: async (h, f) => {
      const [g] = await h.deps.db.select({ revokedAt: oauthGrants.revokedAt }).from(oauthGrants).where(eq(oauthGrants.id, f.grantId));
      expect(g!.revokedAt).not.toBeNull();
    },
  },
  "GET /admin/users": { url: () => "/admin/users", expect: ok(200, (d, f) => expect(d.map((u: any) => u.id)).toContain(f.memberId)) },
  "POST /admin/users": {
    url: () => "/admin/users",
    body: () => ({ email: `${uniqueSlug("made")}@example.com`, password: "a long enough password" }),
    expect: ok(201, (d) => expect(d.role).toBe("member")),
  },
  "GET /admin/users/{id}": { url: (f) => `/admin/users/${f.memberId}`, expect: ok(200, (d, f) => expect(d.memberships).toEqual([{ project_id: f.project.id, role: "viewer" }])) },
  "PATCH /admin/users/{id}": {
    url: (f) => `/admin/users/${f.memberId}`,
    body: () => ({ email: "renamed-member@example.com" }),
    expect: ok(200, (d) => expect(d.email).toBe("renamed-member@example.com")),
  },
  "DELETE /admin/users/{id}": { url: (f) => `/admin/users/${f.memberId}`, expect: ok(204), after: gone((f) => `/admin/users/${f.memberId}`) },
  "GET /admin/p/{ref}/members": { url: (f) => `${P(f)}/members`, expect: ok(200, (d, f) => expect(d.map((m: any) => [m.user_id, m.role])).toEqual([[f.memberId, "viewer"]])) },
  // With keys:write alone the route check passes, and the handler then refuses a role whose scopes
  // the key does not hold (its own message, proving it was reached); so does users:write alone.
  "PUT /admin/p/{ref}/members/{userId}": {
    url: (f) => `${P(f)}/members/${f.memberId}`,
    body: () => ({ role: "editor" }),
    expect: (res) => {
      expect(res.status).toBe(403);
      expect(res.json.error.message).toContain("cannot make a member editor");
    },
    // …and holding the editor's scopes beside it, the role is set.
    after: async (h, f, scope) => {
      const set = await h.request("PUT", `${P(f)}/members/${f.memberId}`, { key: await keyWith(h, [scope, ...ROLE_SCOPES.editor]), body: { role: "editor" } });
      expect(set.status).toBe(200);
      expect(set.json.data).toMatchObject({ user_id: f.memberId, role: "editor" });
      expect((await rootGet(h, `${P(f)}/members`)).json.data.map((m: any) => [m.user_id, m.role])).toEqual([[f.memberId, "editor"]]);
    },
  },
  // By email (issue 39): the same rule as PUT, a role the key does not hold refused by the handler.
  "POST /admin/p/{ref}/members": {
    before: async (h, f) => void emails.set(f.memberId, (await rootGet(h, `/admin/users/${f.memberId}`)).json.data.email),
    url: (f) => `${P(f)}/members`,
    body: (f) => ({ email: emails.get(f.memberId), role: "editor" }),
    expect: (res) => {
      expect(res.status).toBe(403);
      expect(res.json.error.message).toContain("cannot make a member editor");
    },
    after: async (h, f, scope) => {
      const set = await h.request("POST", `${P(f)}/members`, { key: await keyWith(h, [scope, ...ROLE_SCOPES.editor]), body: { email: emails.get(f.memberId), role: "editor" } });
      expect([set.status, set.json.data.user_id, set.json.data.role]).toEqual([201, f.memberId, "editor"]);
    },
  },
  "DELETE /admin/p/{ref}/members/{userId}": {
    url: (f) => `${P(f)}/members/${f.memberId}`,
    expect: ok(204),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/members`)).json.data).toEqual([]),
  },
  // The content model (issue 24): read with content:read, written with model:write.
  "GET /admin/p/{ref}/model": { url: (f) => `${P(f)}/model`, expect: ok(200, (d) => expect(d).toMatchObject({ version: 0, strict: false, block_types: [], node_types: [] })) },
  "PUT /admin/p/{ref}/model": {
    url: (f) => `${P(f)}/model`,
    body: () => ({ block_types: [{ name: "text", schema: { type: "object", properties: { text: { type: "string" } } } }] }),
    expect: ok(200, (d) => expect(d).toMatchObject({ version: 1, block_types: [{ name: "text" }] })),
    after: async (h, f) => expect((await rootGet(h, `${P(f)}/model`)).json.data.version).toBe(1),
  },
  "GET /admin/p/{ref}/model/compact": { url: (f) => `${P(f)}/model/compact`, expect: ok(200, (d) => expect(d).toEqual({ version: 0, strict: false, block_types: {}, node_types: {} })) },
  // Approvals (issue 27): listed with content:read, decided with content:publish.
  "GET /admin/p/{ref}/approvals": { url: (f) => `${P(f)}/approvals`, expect: ok(200, (d) => expect(d).toEqual([])) },
  ...decisionCases(),
  ...webhookCases(),
  ...typeCases("blocks", { description: "A hero" }),
  ...typeCases("nodes", { description: "A page" }),
};

/** Approve and reject: a pending request (as an MCP caller would leave it) at the node's current revision. */
function decisionCases(): Record<string, Case> {
  const id = new Map<string, string>();
  const before = async (h: TestHarness, f: Fixture) => {
    const [n] = await h.deps.db.select({ revision: nodes.revision }).from(nodes).where(eq(nodes.id, f.node.id));
    const approvalId = uuidv7();
    id.set(f.project.id, approvalId);
    await h.deps.db.insert(approvals).values({
      id: approvalId,
      projectId: f.project.id,
      nodeId: f.node.id,
      operation: "publish_node",
      arguments: { node_id: f.node.id },
      revision: n!.revision,
      requestedBy: { kind: "mcp_token", id: f.tokenId, name: "t" },
      requester: `mcp_token:${f.tokenId}`,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
  };
  const url = (action: string) => (f: Fixture) => `${P(f)}/approvals/${id.get(f.project.id)}/${action}`;
  return {
    "GET /admin/p/{ref}/approvals/{id}": {
      before,
      url: (f) => `${P(f)}/approvals/${id.get(f.project.id)}`,
      expect: (res, f) => {
        expect(res.status).toBe(200);
        expect([res.json.data.id, res.json.data.status, Array.isArray(res.json.parts)]).toEqual([id.get(f.project.id), "pending", true]);
      },
    },
    "POST /admin/p/{ref}/approvals/{id}/approve": { before, url: url("approve"), expect: ok(200, (d) => expect(d.status).toBe("approved")) },
    "POST /admin/p/{ref}/approvals/{id}/reject": { before, url: url("reject"), expect: ok(200, (d) => expect(d.status).toBe("rejected")) },
  };
}

/**
 * Webhooks (issue 28): read with projects:read or content:read, written with webhooks:write. An
 * endpoint made by the root key (a private URL: the harness allows them), with one logged failed
 * attempt of one event (as the dispatcher would leave it) for the deliveries log and a redelivery.
 */
function webhookCases(): Record<string, Case> {
  const ids = new Map<string, { webhook: string; delivery: string; event: string }>();
  const HOOK = "http://127.0.0.1:9/hook";
  // What the read scopes see of it (issue 36): its origin only; the whole URL needs webhooks:write.
  const MASKED = "http://127.0.0.1:9/…";
  const before = async (h: TestHarness, f: Fixture) => {
    const res = await h.request("POST", `${P(f)}/webhooks`, { body: { url: HOOK, events: ["*"], description: "fixture" } });
    if (res.status !== 201) throw new Error(`fixture webhook: ${res.status} ${res.text}`);
    const webhook = res.json.data.id as string;
    const event = `msg_${uuidv7().replaceAll("-", "")}`;
    const [ev] = await h.deps.db.insert(webhookEvents).values({ id: event, projectId: f.project.id, type: "node.published", payload: "{}" }).returning({ seq: webhookEvents.seq });
    const outboxId = uuidv7();
    await h.deps.db.insert(webhookOutbox).values({ id: outboxId, eventId: event, endpointId: webhook, seq: ev!.seq, status: "failed", attempts: 1 });
    const delivery = uuidv7();
    await h.deps.db.insert(webhookDeliveries).values({
      id: delivery,
      outboxId,
      endpointId: webhook,
      eventId: event,
      eventType: "node.published",
      attempt: 1,
      attemptedAt: new Date(),
      statusCode: 500,
      durationMs: 12,
      outcome: "failed",
    });
    ids.set(f.project.id, { webhook, delivery, event });
  };
  const W = (f: Fixture) => `${P(f)}/webhooks/${ids.get(f.project.id)!.webhook}`;
  /** The manual (one-attempt) outbox rows queued for the fixture's endpoint: [event type, event id]. */
  const queued = async (h: TestHarness, f: Fixture) =>
    h.deps.db
      .select({ type: webhookEvents.type, event: webhookOutbox.eventId })
      .from(webhookOutbox)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookOutbox.eventId))
      .where(and(eq(webhookOutbox.endpointId, ids.get(f.project.id)!.webhook), eq(webhookOutbox.manual, true), eq(webhookOutbox.status, "pending")));
  return {
    "GET /admin/p/{ref}/webhooks": {
      before,
      url: (f) => `${P(f)}/webhooks`,
      expect: ok(200, (d, f) => {
        expect(d.map((w: any) => [w.id, w.url, w.status])).toEqual([[ids.get(f.project.id)!.webhook, MASKED, "active"]]);
        expect(d[0]).not.toHaveProperty("secret");
      }),
    },
    "POST /admin/p/{ref}/webhooks": {
      url: (f) => `${P(f)}/webhooks`,
      body: () => ({ url: HOOK, events: ["node.published"] }),
      expect: ok(201, (d, f) => {
        expect(d).toMatchObject({ project_id: f.project.id, url: HOOK, events: ["node.published"], status: "active", pending: 0 });
        expect(d.secret).toStartWith("whsec_");
      }),
      after: async (h, f) => {
        const rows = await h.deps.db.select({ url: webhookEndpoints.url, sealed: webhookEndpoints.secretSealed }).from(webhookEndpoints).where(eq(webhookEndpoints.projectId, f.project.id));
        expect(rows.map((r) => r.url)).toEqual([HOOK]);
        expect(rows[0]!.sealed).not.toContain("whsec_");
      },
    },
    "GET /admin/p/{ref}/webhooks/{id}": {
      before,
      url: W,
      expect: ok(200, (d, f) => {
        expect(d).toMatchObject({ id: ids.get(f.project.id)!.webhook, url: MASKED, description: "fixture", events: ["*"], status: "active" });
        expect(d).not.toHaveProperty("secret");
      }),
    },
    "PATCH /admin/p/{ref}/webhooks/{id}": {
      before,
      url: W,
      body: () => ({ status: "paused", description: "paused by scope" }),
      expect: ok(200, (d) => expect(d).toMatchObject({ status: "paused", description: "paused by scope" })),
      after: async (h, f) => expect((await rootGet(h, W(f))).json.data).toMatchObject({ status: "paused", description: "paused by scope" }),
    },
    "DELETE /admin/p/{ref}/webhooks/{id}": { before, url: W, expect: ok(204), after: gone(W) },
    "GET /admin/p/{ref}/webhooks/{id}/deliveries": {
      before,
      url: (f) => `${W(f)}/deliveries`,
      expect: (res, f) => {
        ok(200, (d) =>
          expect(d.map((x: any) => [x.id, x.event_id, x.event_type, x.status_code, x.outcome])).toEqual([
            [ids.get(f.project.id)!.delivery, ids.get(f.project.id)!.event, "node.published", 500, "failed"],
          ]),
        )(res, f);
        expect(res.json).toMatchObject({ total: 1, page: 1, per_page: 50 });
      },
    },
    "POST /admin/p/{ref}/webhooks/{id}/deliveries/{deliveryId}/redeliver": {
      before,
      url: (f) => `${W(f)}/deliveries/${ids.get(f.project.id)!.delivery}/redeliver`,
      expect: ok(201, (d, f) => expect(d).toEqual({ event_id: ids.get(f.project.id)!.event, event_type: "node.published" })),
      after: async (h, f) => expect(await queued(h, f)).toEqual([{ type: "node.published", event: ids.get(f.project.id)!.event }]),
    },
    "POST /admin/p/{ref}/webhooks/{id}/test": {
      before,
      url: (f) => `${W(f)}/test`,
      expect: ok(201, (d) => expect(d).toMatchObject({ event_type: "webhook.test" })),
      after: async (h, f) => expect((await queued(h, f)).map((q) => q.type)).toEqual(["webhook.test"]),
    },
  };
}

/** GET, PUT and DELETE of one type of the model; GET and DELETE find one put there by the root key. */
function typeCases(kind: "blocks" | "nodes", body: Record<string, unknown>): Record<string, Case> {
  const url = (f: Fixture) => `${P(f)}/model/${kind}/thing`;
  const before = async (h: TestHarness, f: Fixture) => {
    const res = await h.request("PUT", url(f), { body });
    if (res.status !== 200) throw new Error(`fixture ${kind} type: ${res.status} ${res.text}`);
  };
  return {
    [`GET /admin/p/{ref}/model/${kind}/{name}`]: { before, url, expect: ok(200, (d) => expect(d).toMatchObject({ name: "thing", ...body })) },
    [`PUT /admin/p/{ref}/model/${kind}/{name}`]: {
      url,
      body: () => body,
      expect: ok(200, (d) => expect(d).toMatchObject({ name: "thing", ...body })),
      after: async (h, f) => expect((await rootGet(h, url(f))).status).toBe(200),
    },
    [`DELETE /admin/p/{ref}/model/${kind}/{name}`]: { before, url, expect: ok(200, (d) => expect(d).toMatchObject({ version: 2, applied: true })), after: gone(url) },
  };
}

/** Routes that accept any one of several scopes: how many the 403 names, each then tried alone. */
const ALTERNATIVES: Record<string, number> = {
  // Webhook reads: projects:read, or content:read (what MCP credentials hold: list_webhooks, list_webhook_deliveries).
  "GET /admin/p/{ref}/webhooks": 2,
  "GET /admin/p/{ref}/webhooks/{id}": 2,
  "GET /admin/p/{ref}/webhooks/{id}/deliveries": 2,
  "GET /admin/projects/{ref}": 2, // projects:read or content:read (the same settings get_project reads)
  "GET /admin/p/{ref}/members": 2,
  "PUT /admin/p/{ref}/members/{userId}": 2,
  "DELETE /admin/p/{ref}/members/{userId}": 2,
  "POST /admin/p/{ref}/members": 2,
  // The theme: projects:write, or theme:write (a scope of its own an MCP credential may carry); never content:write (issue 37).
  "PUT /admin/p/{ref}/theme": 2,
  "PATCH /admin/p/{ref}/theme": 2,
};

describe("scope checks on every admin route", async () => {
  const vendors = await startFakeVendors();
  const h = await harness({
    DATA_DIR: mkdtempSync(join(tmpdir(), "admin-scopes-")),
    AI_ALLOW_PRIVATE_URLS: "true",
    MEDIA_ALLOW_PRIVATE_URLS: "true",
    WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
    ADMIN_AUTH_FAILURE_LIMIT: "1000000",
    OAUTH_REGISTER_RATE_LIMIT: "100000",
  });
  afterAll(() => vendors.stop());
  const user = await seedUser(h, "owner");
  const spec = (await h.request("GET", "/swagger/json", { key: null })).json as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(spec.paths)
    .filter(([path]) => path.startsWith("/admin"))
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  const noScopes = await keyWith(h, []);

  // Each fixture's viewer never signs in: one argon2 hash, made once, serves them all (a hash costs
  // 0.1-0.5 s, and there is a fixture per route and scope).
  const viewerHash = await hashPassword(`pw-${crypto.randomUUID()}`);
  async function seedViewer(projectId: string): Promise<string> {
    const id = uuidv7();
    await h.deps.db.insert(users).values({ id, email: `viewer-${id}@example.com`, passwordHash: viewerHash, role: "member" });
    await h.deps.db.insert(projectMembers).values({ projectId, userId: id, role: "viewer" });
    return id;
  }

  async function fixture(): Promise<Fixture> {
    const project = await seedProject(h);
    const node = await seedNode(h, project.slug, { slug: "n", blocks: [{ type: "text", data: { text: "hello" } }] });
    const put = async (path: string, body: unknown, status: number): Promise<TestResponse> => {
      const res = await h.request(path.startsWith("POST ") ? "POST" : "PUT", path.replace(/^(POST|PUT) /, ""), { body });
      if (res.status !== status) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
      return res;
    };
    await put(`PUT /admin/p/${project.slug}/nodes/${node.id}/translations/fr`, { meta: { title: "Bonjour" } }, 200);
    const provider = await put(`POST /admin/p/${project.slug}/ai/providers`, { name: "p", kind: "openai", base_url: vendors.base("ok"), api_key: "sk-scope-check-1234" }, 201);
    const token = await put(`POST /admin/p/${project.slug}/ai/mcp/tokens`, { name: "t" }, 201);
    const key = await put("POST /admin/keys", { name: "victim", scopes: ["content:read"] }, 201);
    const client = await put("POST /oauth/register", { client_name: "scope check", redirect_uris: ["http://127.0.0.1:5555/cb"], token_endpoint_auth_method: "none" }, 201);
    const grantId = uuidv7();
    await h.deps.db.insert(oauthGrants).values({ id: grantId, clientId: client.json.client_id, userId: user.id, projectId: project.id, scopes: ["content:read"], resource: `${BASE}/mcp` });
    const memberId = await seedViewer(project.id);
    const preview = await put(`POST /admin/p/${project.slug}/preview-tokens`, { name: "pv" }, 201);
    return {
      project,
      node,
      providerId: provider.json.data.id,
      tokenId: token.json.data.id,
      keyId: key.json.data.id,
      clientId: client.json.client_id,
      grantId,
      memberId,
      previewTokenId: preview.json.data.id,
    };
  }

  test("the document lists the admin routes of every feature, and every one has a case here", () => {
    const all = routes.join(" ");
    for (const part of [
      "/admin/projects",
      "/nodes",
      "/theme",
      "/admin/keys",
      "/ai/providers",
      "/ai/translate",
      "/ai/mcp/tokens",
      "/admin/oauth/grants",
      "/admin/ai/kinds",
      "/admin/users",
      "/members",
      "/schedule",
      "/preview-tokens",
      "/webhooks",
      "/redeliver",
    ])
      expect(all).toContain(part);
    expect(routes.filter((r) => !CASES[r])).toEqual([]);
    expect(Object.keys(CASES).filter((r) => !routes.includes(r))).toEqual([]);
  });

  // One test per route: a failure names its route, and a hang costs one route's timeout.
  test.each(routes)(
    "%s: no key is 401, a key without the scope is 403 naming it, and that scope alone runs the operation",
    async (route) => {
      const c = CASES[route];
      if (!c) throw new Error(`${route} has no case here`);
      const method = route.split(" ")[0];
      let f = await fixture();
      await c.before?.(h, f);
      const given = (fx: Fixture) => c.body?.(fx) ?? (method === "GET" || method === "DELETE" ? undefined : {});
      // A form (an upload) is sent as multipart/form-data, anything else as JSON.
      const body = (fx: Fixture) => (given(fx) instanceof FormData ? undefined : given(fx));
      const raw = (fx: Fixture) => {
        const b = given(fx);
        return b instanceof FormData ? b : undefined;
      };
      const anon = await h.request(method!, c.url(f), { key: null, body: body(f), raw: raw(f) });
      expect({ route, status: anon.status }).toEqual({ route, status: 401 });
      const denied = await h.request(method!, c.url(f), { key: noScopes, body: body(f), raw: raw(f) });
      expect({ route, status: denied.status, code: denied.json?.error?.code }).toEqual({ route, status: 403, code: "insufficient_scope" });
      // One scope, or (members of a project: keys:write on it or users:write) alternatives, each enough alone.
      const named = ADMIN_SCOPES.filter((s) => denied.json.error.message.includes(s));
      expect({ route, named: named.length === (ALTERNATIVES[route] ?? 1) }).toEqual({ route, named: true });
      for (const [i, scope] of named.entries()) {
        if (i > 0) {
          f = await fixture();
          await c.before?.(h, f);
        }
        const allowed = await h.request(method!, c.url(f), { key: await keyWith(h, [scope]), body: body(f), raw: raw(f) });
        try {
          c.expect(allowed, f, scope);
          await c.after?.(h, f, scope);
        } catch (err) {
          throw new Error(`${route} with ${scope} alone: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    },
    15_000,
  );
});
