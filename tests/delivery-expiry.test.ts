// Only a committed write expires cached delivery answers, only its own project's, and the writing
// instance sees it on its very next read (issue 12 §3).
import { afterAll, describe, expect, test } from "bun:test";
import { DEFAULT_MCP_SCOPES } from "../src/lib/scopes";
import { countingDb, deafHandle, get, patchNode } from "./delivery.helpers";
import { fakeTranslation, startFakeVendors } from "./fake-vendors";
import { harness, keyWith, seedNode, seedProject, type TestHarness, testDb } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

async function send(h: TestHarness, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<number> {
  const res = await h.app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  await res.arrayBuffer();
  return res.status;
}

describe("delivery: requests that commit nothing expire nothing", async () => {
  const handle = await testDb();
  const counted = countingDb(handle.db);
  // NOTIFY not delivered: the seeding writes' own notifications, arriving late on PostgreSQL, would
  // otherwise refresh the project between two reads and count as a query no noise caused.
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.db, dbHandle: deafHandle(handle) });
  const p = await seedProject(h);
  const page = await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
  const readOnly = await keyWith(h, ["content:read"]);
  const url = `/api/p/${p.slug}/nodes/by-path/page`;

  test("anonymous POSTs, 401s, 403s, 405s and a rolled-back write leave the cached answer in place (no query on the next read)", async () => {
    const first = await get(h, url);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    const json = { "content-type": "application/json" };
    const noise: Array<[number, () => Promise<number>]> = [
      [404, () => send(h, "POST", "/no-such-route")],
      [404, () => send(h, "DELETE", "/no-such-route")],
      [405, () => send(h, "POST", `/api/p/${p.slug}/nodes`)],
      [405, () => send(h, "PUT", url, json, "{}")],
      [401, () => send(h, "POST", `/admin/p/${p.slug}/nodes`, json, JSON.stringify({ slug: "x", title: "x" }))],
      [401, () => send(h, "PATCH", `/admin/projects/${p.id}`, { ...json, authorization: "Bearer cms_ak_wrong" }, JSON.stringify({ name: "x" }))],
      [403, () => send(h, "DELETE", `/admin/p/${p.slug}/nodes/${page.id}`, { authorization: `Bearer ${readOnly}` })],
      [401, () => send(h, "POST", "/mcp", { ...json, accept: "application/json, text/event-stream" }, "{}")],
      // Bumps the version inside its transaction, then fails and rolls back: nothing committed.
      [400, () => send(h, "PATCH", `/admin/p/${p.slug}/nodes/${page.id}`, { ...json, authorization: `Bearer ${h.rootKey}` }, JSON.stringify({ parent_id: crypto.randomUUID() }))],
    ];
    for (const [status, make] of noise) {
      expect(await make()).toBe(status);
      const before = counted.calls();
      const again = await get(h, url);
      expect(again.status).toBe(200);
      expect(again.headers.get("etag")).toBe(etag);
      expect(counted.calls()).toBe(before);
    }
  });
});

describe("delivery: a write expires its own project's answers only", async () => {
  const counted = countingDb((await testDb()).db);
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.db });
  const a = await seedProject(h);
  const b = await seedProject(h);
  const pa = await seedNode(h, a.slug, { slug: "page", title: "A1" }, true);
  await seedNode(h, b.slug, { slug: "page", title: "B1" }, true);

  test("after a write to A, B's cached answer is served without a query; A's next read shows the write", async () => {
    const ua = `/api/p/${a.slug}/nodes/by-path/page`;
    const ub = `/api/p/${b.slug}/nodes/by-path/page`;
    expect((await get(h, ua)).json.data.title).toBe("A1");
    const bEtag = (await get(h, ub)).headers.get("etag");
    await patchNode(h, a.slug, pa.id, { title: "A2" });
    const before = counted.calls();
    const rb = await get(h, ub);
    expect(rb.headers.get("etag")).toBe(bEtag);
    expect(counted.calls()).toBe(before);
    // No waiting: the writing instance reads its own write.
    expect((await get(h, ua)).json.data.title).toBe("A2");
    expect(counted.calls()).toBeGreaterThan(before);
  });
});

describe("delivery: every write path is seen on the writer's next read, without NOTIFY or version check", async () => {
  const vendors = await startFakeVendors();
  const m = await mcpHarness({ DELIVERY_VERSION_CHECK_MS: "60000", AI_ALLOW_PRIVATE_URLS: "true" }, { dbHandle: deafHandle(await testDb()) });
  const h = m.h;
  afterAll(async () => {
    m.stop();
    await vendors.stop();
  });

  test("REST admin, MCP tools and AI translation writes each change the next answer at once", async () => {
    const p = await seedProject(h, { locales: ["en", "fr"] });
    const provider = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, {
      body: { name: "vendor", kind: "openai", model: "gpt-test", base_url: vendors.base("ok"), api_key: "sk-test-0123456789", is_default: true },
    });
    expect(provider.status).toBe(201);
    const n = await seedNode(
      h,
      p.slug,
      {
        slug: "page",
        title: "T0",
        blocks: [
          { type: "text", data: { text: "one" } },
          { type: "text", data: { text: "two" } },
        ],
      },
      true,
    );
    const blocks: string[] = n.blocks.map((x: { id: string }) => x.id);
    // theme:write beside the default scopes: update_theme needs it.
    const client = await m.connect((await m.token(p.slug, { name: "agent", scopes: [...DEFAULT_MCP_SCOPES, "theme:write"] })).token);
    const node = () => get(h, `/api/p/${p.slug}/nodes/${n.id}`);
    const list = () => get(h, `/api/p/${p.slug}/nodes`);
    const fr = () => get(h, `/api/p/${p.slug}/translations/nodes/${n.id}?locale=fr`);
    const theme = () => get(h, `/api/p/${p.slug}/theme`);
    const ok = (status: number) => expect(status).toBeLessThan(300);
    // A content write changes the working copy only: publishing it is what readers see.
    const publish = async () => ok((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`)).status);

    // Each step: warm the cache, write, then the very next read must show the write.
    const steps: Array<[string, () => Promise<unknown>, () => Promise<void>]> = [
      [
        "REST PATCH node + publish",
        async () => {
          ok((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "T1" } })).status);
          await publish();
        },
        async () => expect((await node()).json.data.title).toBe("T1"),
      ],
      [
        "REST PUT blocks + publish",
        async () => {
          ok(
            (
              await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, {
                body: [
                  { id: blocks[0], type: "text", data: { text: "uno" } },
                  { id: blocks[1], type: "text", data: { text: "two" } },
                ],
              })
            ).status,
          );
          await publish();
        },
        async () => expect((await node()).json.data.blocks[0].data.text).toBe("uno"),
      ],
      [
        "REST create + publish",
        async () => {
          const c = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "rest-new", title: "New" } });
          ok(c.status);
          ok((await h.request("POST", `/admin/p/${p.slug}/nodes/${c.json.data.id}/publish`)).status);
        },
        async () => expect((await list()).json.data.map((x: { slug: string }) => x.slug)).toContain("rest-new"),
      ],
      ["REST unpublish", async () => ok((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/unpublish`)).status), async () => expect((await node()).status).toBe(404)],
      ["REST publish", async () => ok((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`)).status), async () => expect((await node()).status).toBe(200)],
      [
        "REST PUT translation (published)",
        async () => ok((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Titre" }, status: "published" } })).status),
        async () => expect((await fr()).json.data.title).toBe("Titre"),
      ],
      ["REST DELETE translation", async () => ok((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`)).status), async () => expect((await fr()).status).toBe(404)],
      [
        "REST PUT theme",
        async () => ok((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { accent_color: "#112233" } })).status),
        async () => expect((await theme()).json.accent_color).toBe("#112233"),
      ],
      [
        "MCP update_node + publish_node",
        async () => {
          await call(client, "update_node", { node_id: n.id, title: "T2" });
          await call(client, "publish_node", { node_id: n.id });
        },
        async () => expect((await node()).json.data.title).toBe("T2"),
      ],
      [
        "MCP reorder_blocks + publish_node",
        async () => {
          await call(client, "reorder_blocks", { node_id: n.id, block_ids: [blocks[1], blocks[0]] });
          await call(client, "publish_node", { node_id: n.id });
        },
        async () => expect((await node()).json.data.blocks[0].id).toBe(blocks[1]),
      ],
      [
        "MCP create_node + publish_node",
        async () => {
          const c = await call(client, "create_node", { slug: "mcp-new", title: "Mcp" });
          await call(client, "publish_node", { node_id: c.node.id });
        },
        async () => expect((await list()).json.data.map((x: { slug: string }) => x.slug)).toContain("mcp-new"),
      ],
      [
        "MCP upsert_translation (published)",
        () => call(client, "upsert_translation", { node_id: n.id, locale: "fr", meta: { title: "Mcp titre" }, status: "published" }),
        async () => expect((await fr()).json.data.title).toBe("Mcp titre"),
      ],
      ["MCP update_theme", () => call(client, "update_theme", { accent_color: "#445566" }), async () => expect((await theme()).json.accent_color).toBe("#445566")],
      [
        "MCP translate_node (AI) + REST publish of the draft",
        async () => {
          // force: the published French title is never replaced by the machine without it.
          await call(client, "translate_node", { node_id: n.id, locale: "fr", force: true });
          const tr = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`);
          // The machine translation awaits review: a change to the published translation, which readers do not see yet.
          expect([tr.json.data.status, tr.json.data.state]).toEqual(["published", "changed"]);
          expect((await fr()).json.data.title).toBe("Mcp titre");
          ok((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: tr.json.data.meta, blocks: tr.json.data.blocks, status: "published" } })).status);
        },
        async () => expect((await fr()).json.data.title).toBe(fakeTranslation("T2")),
      ],
      [
        "REST PATCH project (locales)",
        async () => ok((await h.request("PATCH", `/admin/projects/${p.id}`, { body: { locales: ["en", "fr", "de"] } })).status),
        async () => expect((await get(h, `/api/p/${p.slug}/nodes/${n.id}?locale=de`)).status).toBe(200),
      ],
      ["REST DELETE node", async () => ok((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}`)).status), async () => expect((await node()).status).toBe(404)],
      ["REST DELETE project", async () => ok((await h.request("DELETE", `/admin/projects/${p.id}`)).status), async () => expect((await theme()).status).toBe(404)],
    ];
    for (const [name, write, check] of steps) {
      await Promise.all([node(), list(), fr(), theme(), get(h, `/api/p/${p.slug}/nodes/${n.id}?locale=de`)]);
      const before = (await list()).headers.get("etag");
      await write();
      try {
        await check();
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}`);
      }
      if (!name.startsWith("REST DELETE project")) expect([name, (await list()).headers.get("etag")]).not.toEqual([name, before]);
    }
  });
});

describe("delivery: reads racing writes on the writing instance", async () => {
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { dbHandle: deafHandle(await testDb()) });
  const p = await seedProject(h);
  const n = await seedNode(h, p.slug, { slug: "page", title: "v0" }, true);
  const url = `/api/p/${p.slug}/nodes/by-path/page`;

  test("with 8 readers re-reading the page throughout, every write is seen by the read that follows it", async () => {
    let stop = false;
    let reads = 0;
    const readers = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const r = await get(h, url);
        expect(r.status).toBe(200);
        reads += 1;
        // fixed wait: none, a yield. A cache hit settles with microtasks only: yield, or the loop
        // would starve the database I/O.
        await new Promise((r) => setTimeout(r, 0));
      }
    });
    try {
      for (let i = 1; i <= 25; i++) {
        await patchNode(h, p.slug, n.id, { title: `v${i}` });
        expect((await get(h, url)).json.data.title).toBe(`v${i}`);
        // fixed wait: none, a yield. On PGlite a write and its read can settle with microtasks only
        // (the ETag hash is synchronous): yield, as requests arriving on sockets do, so the readers run meanwhile.
        await new Promise((r) => setTimeout(r, 0));
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
    expect(reads).toBeGreaterThan(25);
  });
});
