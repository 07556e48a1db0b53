// A write interrupted half-way leaves no partial state: a database trigger makes one row of a
// multi-row write fail, and the rows written before it in the same operation must be rolled back.
import { afterAll, describe, expect, test } from "bun:test";
import { asc, eq } from "drizzle-orm";
import { blocks, nodes } from "../db/schema";
import { harness, seedNode, seedProject } from "./helpers";

describe("multi-row writes are atomic", async () => {
  const h = await harness();
  const exec = (q: string) => h.deps.dbHandle.db.execute(q as never);
  await exec(`create or replace function cms_test_explode() returns trigger language plpgsql as $$
    begin raise exception 'injected fault'; end $$`);
  await exec(`drop trigger if exists cms_test_nodes_explode on nodes`);
  await exec(`create trigger cms_test_nodes_explode before update on nodes for each row
    when (new.title = 'explode-on-update' and new.path is distinct from old.path) execute function cms_test_explode()`);
  await exec(`drop trigger if exists cms_test_blocks_explode on blocks`);
  await exec(`create trigger cms_test_blocks_explode before insert or update on blocks for each row
    when (new.type = 'explode') execute function cms_test_explode()`);
  afterAll(async () => {
    await exec(`drop trigger if exists cms_test_nodes_explode on nodes`);
    await exec(`drop trigger if exists cms_test_blocks_explode on blocks`);
  });

  test("a move that fails on a descendant rewrites no path at all", async () => {
    const p = await seedProject(h);
    const a = await seedNode(h, p.slug, { slug: "a" });
    const b = await seedNode(h, p.slug, { slug: "b", parent_id: a.id });
    await seedNode(h, p.slug, { slug: "c", parent_id: b.id });
    await seedNode(h, p.slug, { slug: "d", parent_id: b.id, title: "explode-on-update" });
    const before = await h.deps.db.select({ id: nodes.id, path: nodes.path }).from(nodes).where(eq(nodes.projectId, p.id)).orderBy(asc(nodes.id));
    const r = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${a.id}`, { body: { slug: "moved" } });
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe("internal");
    expect(r.text).not.toContain("injected");
    const after = await h.deps.db.select({ id: nodes.id, path: nodes.path }).from(nodes).where(eq(nodes.projectId, p.id)).orderBy(asc(nodes.id));
    expect(after).toEqual(before);
  });

  test("a block array write that fails half-way keeps the old blocks", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "page", blocks: [{ type: "one" }, { type: "two" }, { type: "three" }] });
    const before = await h.deps.db.select().from(blocks).where(eq(blocks.nodeId, n.id)).orderBy(asc(blocks.order));
    // Keeps the third block, deletes the others, adds one, then fails on the last.
    const r = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, {
      body: [{ id: n.blocks[2].id, type: "three", data: { changed: true } }, { type: "new" }, { type: "explode" }],
    });
    expect(r.status).toBe(500);
    const after = await h.deps.db.select().from(blocks).where(eq(blocks.nodeId, n.id)).orderBy(asc(blocks.order));
    expect(after).toEqual(before);
  });
});

describe("refresh token rotation is atomic", async () => {
  const { oauthClients, oauthGrants, oauthTokens } = await import("../db/schema");
  const { uuidv7 } = await import("../src/lib/ids");
  const { generateToken, hashToken } = await import("../src/lib/tokens");
  const { createUser } = await import("../src/users/service");
  const h = await harness();
  const exec = (q: string) => h.deps.dbHandle.db.execute(q as never);

  test("a failure while storing the new tokens leaves the old refresh token unspent and usable", async () => {
    const p = await seedProject(h);
    const user = await createUser(h.deps.db, { email: `rot-${uuidv7()}@example.com`, password: "a-long-password", role: "owner" }, new Date());
    const clientId = `rotation-${uuidv7()}`;
    await h.deps.db
      .insert(oauthClients)
      .values({ id: clientId, redirectUris: ["https://c.example/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code", "refresh_token"], responseTypes: ["code"] });
    const grantId = uuidv7();
    const resource = `${h.deps.config.publicUrl}/mcp`;
    await h.deps.db.insert(oauthGrants).values({ id: grantId, clientId, userId: user.id, projectId: p.id, scopes: ["content:read"], resource });
    const refresh = generateToken("cms_rt_");
    const refreshId = uuidv7();
    await h.deps.db.insert(oauthTokens).values({
      id: refreshId,
      tokenHash: hashToken(refresh),
      kind: "refresh",
      grantId,
      clientId,
      userId: user.id,
      projectId: p.id,
      scopes: ["content:read"],
      resource,
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refresh, client_id: clientId }).toString();
    const post = () => h.request("POST", "/oauth/token", { raw: form, key: null, headers: { "content-type": "application/x-www-form-urlencoded" } });

    await exec(`create or replace function cms_test_explode() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`);
    await exec(`create trigger cms_test_tokens_explode before insert on oauth_tokens for each row when (new.client_id = '${clientId}') execute function cms_test_explode()`);
    try {
      const failed = await post();
      expect(failed.status).toBe(500);
      expect(failed.text).not.toContain("injected");
    } finally {
      await exec(`drop trigger if exists cms_test_tokens_explode on oauth_tokens`);
    }
    const [old] = await h.deps.db.select().from(oauthTokens).where(eq(oauthTokens.id, refreshId));
    expect(old!.usedAt).toBeNull();
    expect(await h.deps.db.select().from(oauthTokens).where(eq(oauthTokens.grantId, grantId))).toHaveLength(1);
    const ok = await post();
    expect(ok.status).toBe(200);
    expect(ok.json.refresh_token).toMatch(/^cms_rt_/);
  });
});

describe("concurrent tree writes are serialised per project", async () => {
  const h = await harness();

  test("crossing moves never make a cycle; a create under a node being renamed gets the new path", async () => {
    for (let round = 0; round < 5; round++) {
      const p = await seedProject(h);
      const a = await seedNode(h, p.slug, { slug: "a" });
      const b = await seedNode(h, p.slug, { slug: "b" });
      const [ra, rb] = await Promise.all([
        h.request("PATCH", `/admin/p/${p.slug}/nodes/${a.id}`, { body: { parent_id: b.id } }),
        h.request("PATCH", `/admin/p/${p.slug}/nodes/${b.id}`, { body: { parent_id: a.id } }),
      ]);
      expect([ra.status, rb.status].sort()).toEqual([200, 400]);
      const rows = await h.deps.db.select().from(nodes).where(eq(nodes.projectId, p.id));
      expect(rows.filter((n) => n.parentId === null)).toHaveLength(1);

      const [renamed, child] = await Promise.all([
        h.request("PATCH", `/admin/p/${p.slug}/nodes/${a.id}`, { body: { slug: "renamed" } }),
        h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "kid", title: "kid", parent_id: a.id } }),
      ]);
      expect(renamed.status).toBe(200);
      expect(child.status).toBe(201);
      const [kid] = await h.deps.db.select().from(nodes).where(eq(nodes.id, child.json.data.id));
      const [parent] = await h.deps.db.select().from(nodes).where(eq(nodes.id, a.id));
      expect(kid!.path).toBe(`${parent!.path}/kid`);
    }
  });
});
