// The state of every translated field (issue 41): per node, locale and field, its status, the hash
// and revision of the source it was made from, its origin and whether a person edited it; a change
// to a source field makes exactly the translated fields made from it stale, in the write's
// transaction, with a translation.stale webhook event and the list over REST and MCP (the SDK's
// Client). Publishing a translation publishes its units; a machine translation (a loopback vendor)
// records the provider's kind and model.
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { translationUnits } from "../db/schema";
import { rows } from "../src/lib/json";
import { textHash } from "../src/model/units";
import { startFakeVendors } from "./fake-vendors";
import { seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";
import { setModel } from "./model.helpers";

const vendors = await startFakeVendors();

const MODEL = {
  strict: false,
  block_types: [{ name: "text", schema: { type: "object", properties: { text: { type: "string", translatable: true }, anchor: { type: "string" } } } }],
  node_types: [
    {
      name: "article",
      fields: {
        type: "object",
        properties: {
          summary: { type: "string", translatable: true },
          body: { type: "string", format: "markdown", translatable: true },
          code: { type: "string" },
        },
      },
    },
  ],
};

describe("the state of every translated field", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "2000", WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
  const { h } = m;
  const db = h.deps.db;
  afterAll(async () => {
    m.stop();
    await vendors.stop();
  });

  async function scene() {
    const p = await seedProject(h, { locales: ["en", "de", "fr"] });
    await setModel(db, p.id, MODEL);
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/hook", events: ["translation.stale"] } })).status).toBe(201);
    const n = await seedNode(h, p.slug, {
      slug: "guide",
      title: "The guide",
      type: "article",
      fields: { summary: "A short guide", body: "Read **this** first", code: "X-1" },
      blocks: [
        { type: "text", data: { text: "First block", anchor: "one" } },
        { type: "text", data: { text: "Second block", anchor: "two" } },
      ],
    });
    const [b1, b2] = (n.blocks as Array<{ id: string }>).map((b) => b.id);
    return { p, n, b1: b1!, b2: b2! };
  }
  const status = async (slug: string, id: string, locale: string) => {
    const r = await h.request("GET", `/admin/p/${slug}/nodes/${id}/translations/${locale}`);
    expect(r.status).toBe(200);
    return r.json.data.field_status as Record<string, { status: string; source_hash: string | null; source_revision: number | null; origin: any; human_edited: boolean }>;
  };
  const statuses = (fs: Record<string, { status: string }>) => Object.fromEntries(Object.entries(fs).map(([k, v]) => [k, v.status]));

  test("a person's translation is approved and human-edited, an agent's is machine; every translatable field is listed, missing ones too", async () => {
    const { p, n, b1, b2 } = await scene();
    const put = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`, {
      body: { meta: { title: "Der Leitfaden" }, fields: { summary: "Ein kurzer Leitfaden" }, blocks: { [b1]: { text: "Erster Block" } } },
    });
    expect(put.status).toBe(200);
    const de = await status(p.slug, n.id, "de");
    expect(statuses(de)).toEqual({
      "/title": "approved",
      "/fields/summary": "approved",
      "/fields/body": "missing",
      [`/blocks/${b1}/data/text`]: "approved",
      [`/blocks/${b2}/data/text`]: "missing",
    });
    expect(de["/title"]).toMatchObject({ source_hash: textHash("The guide"), source_revision: 1, human_edited: true, origin: { kind: "person", actor: { kind: "admin_key" } } });
    expect(de["/fields/body"]).toEqual({ status: "missing", source_hash: textHash("Read **this** first"), source_revision: null, origin: null, human_edited: false });

    const agent = await m.connect((await m.token(p.slug, { name: "translator", scopes: ["content:read", "content:write"] })).token);
    await call(agent, "upsert_translation", { node_id: n.id, locale: "fr", meta: { title: "Le guide" }, fields: { body: "Lisez **ceci** d'abord" } });
    const fr = await status(p.slug, n.id, "fr");
    expect(fr["/title"]).toMatchObject({ status: "machine", human_edited: false, origin: { kind: "agent", actor: { kind: "mcp_token", name: "translator" } } });
    expect(fr["/fields/body"]?.status).toBe("machine");
    // list_translations shows it too.
    const list = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/translations`);
    expect(list.json.data.map((t: { locale: string; field_status: Record<string, { status: string }> }) => [t.locale, t.field_status["/title"]?.status])).toEqual([
      ["de", "approved"],
      ["fr", "machine"],
    ]);
  });

  test("a source change makes exactly the fields made from it stale (REST, MCP, the event); publishing publishes the rest; a new text clears it", async () => {
    const { p, n, b1, b2 } = await scene();
    const body = {
      meta: { title: "Der Leitfaden" },
      fields: { summary: "Ein kurzer Leitfaden", body: "Lies **das** zuerst" },
      blocks: { [b1]: { text: "Erster Block" }, [b2]: { text: "Zweiter Block" } },
    };
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`, { body })).status).toBe(200);
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Le guide" }, fields: { summary: "Un petit guide" } } })).status).toBe(200);
    const before = await status(p.slug, n.id, "de");

    // The summary and the second block's text change; code (not translatable) and the first block's anchor too.
    const patch = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, {
      body: {
        fields: { summary: "A shorter guide", body: "Read **this** first", code: "X-2" },
        blocks: [
          { id: b1, type: "text", data: { text: "First block", anchor: "uno" } },
          { id: b2, type: "text", data: { text: "Second block, rewritten", anchor: "two" } },
        ],
      },
    });
    expect(patch.status).toBe(200);
    const de = await status(p.slug, n.id, "de");
    expect(statuses(de)).toEqual({
      "/title": "approved",
      "/fields/summary": "stale",
      "/fields/body": "approved",
      [`/blocks/${b1}/data/text`]: "approved",
      [`/blocks/${b2}/data/text`]: "stale",
    });
    // A stale field keeps the source it was made from; the others are untouched.
    expect(de["/fields/summary"]).toMatchObject({ source_hash: textHash("A short guide"), source_revision: before["/fields/summary"]!.source_revision });
    expect(de["/title"]).toEqual(before["/title"]!);
    expect(statuses(await status(p.slug, n.id, "fr"))["/fields/summary"]).toBe("stale");

    const rest = await h.request("GET", `/admin/p/${p.slug}/translations/stale`);
    expect(rest.status).toBe(200);
    expect(rest.json.data).toEqual([
      { node_id: n.id, locale: "de", path: "guide", pointers: ["/fields/summary", `/blocks/${b2}/data/text`].sort() },
      { node_id: n.id, locale: "fr", path: "guide", pointers: ["/fields/summary"] },
    ]);
    expect(rest.json.total).toBe(2);
    expect((await h.request("GET", `/admin/p/${p.slug}/translations/stale?locale=fr`)).json.data.map((s: { locale: string }) => s.locale)).toEqual(["fr"]);
    const client = await m.connect((await m.token(p.slug)).token);
    expect((await call(client, "list_stale_translations", { locale: "de" })).stale).toEqual([rest.json.data[0]]);
    // One translation.stale event per translation, naming the fields.
    const events = rows<{ type: string; payload: string }>(await db.execute(sql`select type, payload from webhook_events where project_id = ${p.id} order by seq`)).map((e) => ({
      type: e.type,
      data: JSON.parse(e.payload).data,
    }));
    expect(events.map((e) => [e.type, e.data.locale, e.data.pointers])).toEqual([
      ["translation.stale", "de", ["/fields/summary", `/blocks/${b2}/data/text`].sort()],
      ["translation.stale", "fr", ["/fields/summary"]],
    ]);
    // A second write that changes nothing translatable marks nothing more.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { fields: { summary: "A shorter guide", body: "Read **this** first", code: "X-3" } } })).status).toBe(200);
    expect(rows(await db.execute(sql`select 1 from webhook_events where project_id = ${p.id}`))).toHaveLength(2);

    // Publishing the German translation: its approved fields are published; stale ones stay stale.
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`)).status).toBe(200);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`, { body: { locale: "de" } })).status).toBe(200);
    expect(statuses(await status(p.slug, n.id, "de"))).toMatchObject({ "/title": "published", "/fields/summary": "stale", [`/blocks/${b2}/data/text`]: "stale" });

    // A person writes the summary anew: approved, made from the new source; the stale list shrinks.
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`, { body: { ...body, fields: { ...body.fields, summary: "Ein kürzerer Leitfaden" } } })).status).toBe(200);
    const after = await status(p.slug, n.id, "de");
    expect(after["/fields/summary"]).toMatchObject({ status: "approved", source_hash: textHash("A shorter guide") });
    expect((await h.request("GET", `/admin/p/${p.slug}/translations/stale?locale=de`)).json.data[0].pointers).toEqual([`/blocks/${b2}/data/text`]);
    // The database holds exactly one row per translated field.
    const stored = await db
      .select({ pointer: translationUnits.pointer, status: translationUnits.status })
      .from(translationUnits)
      .where(and(eq(translationUnits.nodeId, n.id), eq(translationUnits.locale, "de")));
    expect(stored).toHaveLength(5);
    // Another project sees none of it.
    const q = await seedProject(h);
    expect((await h.request("GET", `/admin/p/${q.slug}/translations/stale`)).json.data).toEqual([]);
  });

  test("a machine translation records the provider's kind and model; a deleted block's field goes stale, a deleted translation takes its rows", async () => {
    const { p, n, b1, b2 } = await scene();
    const provider = await h.request("POST", `/admin/p/${p.id}/ai/providers`, {
      body: { name: "v", kind: "openai", model: "gpt-test", base_url: vendors.base("ok"), api_key: "sk-test-1234567890", is_default: true },
    });
    expect(provider.status).toBe(201);
    const tr = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/translations/de/translate`, { body: {} });
    expect(tr.status).toBe(200);
    const de = await status(p.slug, n.id, "de");
    expect(Object.values(de).every((f) => f.status === "machine")).toBe(true);
    expect(de["/fields/summary"]).toMatchObject({ origin: { kind: "machine", provider_kind: "openai", model: "gpt-test" }, human_edited: false });
    // The second block deleted: the unit made from it is stale (its source is gone).
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, { body: [{ id: b1, type: "text", data: { text: "First block", anchor: "one" } }] })).status).toBe(200);
    const units = await db.select().from(translationUnits).where(eq(translationUnits.nodeId, n.id));
    expect(units.find((u) => u.pointer === `/blocks/${b2}/data/text`)).toBeUndefined(); // the override went with the block
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`)).status).toBe(204);
    expect(await db.select().from(translationUnits).where(eq(translationUnits.nodeId, n.id))).toEqual([]);
  });
});
