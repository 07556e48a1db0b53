// Deleting a block drops its overrides from every translation of the node, in the same
// transaction: a translation read back is always a valid write, over REST and over MCP.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { MIGRATIONS_FOLDER } from "../db/migrate";
import { translations } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

describe("block deletion prunes translation overrides", async () => {
  const m = await mcpHarness();
  const { h } = m;
  const db = h.deps.db;
  afterAll(() => m.stop());

  /** A node with three blocks, translated into fr and de with an override of every block (translations published, delivered once the node is). */
  async function translatedNode() {
    const p = await seedProject(h, { locales: ["en", "fr", "de"] });
    const node = await seedNode(h, p.slug, {
      slug: "home",
      blocks: [
        { type: "text", data: { text: "one", style: { size: 1 } } },
        { type: "text", data: { text: "two" } },
        { type: "text", data: { text: "three" } },
      ],
    });
    const [b1, b2, b3] = node.blocks.map((b: { id: string }) => b.id);
    for (const locale of ["fr", "de"]) {
      const res = await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/translations/${locale}`, {
        body: {
          meta: { title: `home ${locale}` },
          blocks: { [b1]: { text: `un ${locale}`, style: { size: 2 } }, [b2]: { text: `deux ${locale}` }, [b3]: { text: `trois ${locale}` } },
          status: "published",
        },
      });
      expect(res.status).toBe(200);
    }
    return { p, node, b1, b2, b3 };
  }

  const storedOverrides = async (nodeId: string): Promise<Record<string, string[]>> => {
    const rows = await db.select({ locale: translations.locale, blocks: translations.blocks }).from(translations).where(eq(translations.nodeId, nodeId));
    return Object.fromEntries(rows.map((r) => [r.locale, Object.keys(r.blocks).sort()]));
  };

  test("REST: PUT blocks without b2 → every translation loses b2's override; GET then PUT back as read → 200", async () => {
    const { p, node, b1, b3 } = await translatedNode();
    const put = await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/blocks`, {
      body: [
        { id: b3, type: "text", data: { text: "three" } },
        { id: b1, type: "text", data: { text: "one" } },
      ],
    });
    expect(put.status).toBe(200);
    expect(await storedOverrides(node.id)).toEqual({ fr: [b1, b3].sort(), de: [b1, b3].sort() });
    for (const locale of ["fr", "de"]) {
      const read = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/translations/${locale}`);
      expect(read.status).toBe(200);
      expect(read.json.data.blocks).toEqual({ [b1]: { text: `un ${locale}`, style: { size: 2 } }, [b3]: { text: `trois ${locale}` } });
      // Exactly what was read, every field of it, written back.
      const back = await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/translations/${locale}`, { body: read.json.data });
      expect({ status: back.status, blocks: back.json.data?.blocks, meta: back.json.data?.meta }).toEqual({ status: 200, blocks: read.json.data.blocks, meta: read.json.data.meta });
    }
    // The other blocks' overrides still merge on delivery reads of the published node.
    await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`);
    const delivered = await h.request("GET", `/api/p/${p.slug}/nodes/${node.id}?locale=fr`, { key: null });
    expect(delivered.json.data.blocks.map((b: { data: unknown }) => b.data)).toEqual([{ text: "trois fr" }, { text: "un fr", style: { size: 2 } }]);
  });

  test("REST: PATCH a node with a shorter block list prunes the same way; an empty list prunes every override", async () => {
    const { p, node, b1, b2 } = await translatedNode();
    const patch = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { blocks: [{ id: b2, type: "text" }] } });
    expect(patch.status).toBe(200);
    expect(await storedOverrides(node.id)).toEqual({ fr: [b2], de: [b2] });
    expect(b1).not.toBe(b2);
    const empty = await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/blocks`, { body: [] });
    expect(empty.status).toBe(200);
    expect(await storedOverrides(node.id)).toEqual({ fr: [], de: [] });
    const read = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/translations/de`);
    expect(read.json.data).toMatchObject({ meta: { title: "home de" }, blocks: {} });
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/translations/de`, { body: read.json.data })).status).toBe(200);
  });

  test("a refused block write changes no translation", async () => {
    const { p, node, b1, b2, b3 } = await translatedNode();
    // b1 twice: refused after b2 and b3 would have been dropped from the list.
    const bad = await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/blocks`, {
      body: [
        { id: b1, type: "text" },
        { id: b1, type: "text" },
      ],
    });
    expect(bad.status).toBe(400);
    expect(await storedOverrides(node.id)).toEqual({ fr: [b1, b2, b3].sort(), de: [b1, b2, b3].sort() });
  });

  test("MCP: update_node drops a block; get_translation → upsert_translation of what was read succeeds", async () => {
    const { p, node, b1, b3 } = await translatedNode();
    const { token } = await m.token(p.slug);
    const client = await m.connect(token);
    await call(client, "update_node", {
      node_id: node.id,
      blocks: [
        { id: b1, type: "text", data: { text: "one" } },
        { id: b3, type: "text", data: { text: "three" } },
      ],
    });
    expect(await storedOverrides(node.id)).toEqual({ fr: [b1, b3].sort(), de: [b1, b3].sort() });
    const { translation } = await call(client, "get_translation", { node_id: node.id, locale: "fr" });
    expect(Object.keys(translation.blocks).sort()).toEqual([b1, b3].sort());
    const written = await call(client, "upsert_translation", { node_id: node.id, locale: "fr", meta: translation.meta, blocks: translation.blocks, status: translation.status });
    expect(written.translation.blocks).toEqual(translation.blocks);
    expect(await storedOverrides(node.id)).toEqual({ fr: [b1, b3].sort(), de: [b1, b3].sort() });
  });

  test("migration 0002 prunes overrides left behind before this rule, and keeps the rest", async () => {
    const { p, node, b1, b2 } = await translatedNode();
    // A row as an older version left it: an override of a block that no longer exists.
    const orphan = uuidv7();
    await db
      .update(translations)
      .set({ blocks: sql`${translations.blocks} || ${JSON.stringify({ [orphan]: { text: "stale" } })}::jsonb` })
      .where(eq(translations.nodeId, node.id));
    const other = await seedNode(h, p.slug, { slug: "other" });
    await db.insert(translations).values({ id: uuidv7(), projectId: p.id, nodeId: other.id, locale: "fr", blocks: { [b1]: { text: "another node's block" } } });
    const migration = readFileSync(join(MIGRATIONS_FOLDER, "0002_prune_orphan_block_overrides.sql"), "utf8");
    await db.execute(sql.raw(migration));
    expect((await storedOverrides(node.id)).fr).toEqual([b1, b2, node.blocks[2].id].sort());
    expect(await storedOverrides(other.id)).toEqual({ fr: [] });
  });
});
