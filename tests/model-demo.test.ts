// A first start's demo project has a content model (issue 24), and every demo node meets it.
import { expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { projects } from "../db/schema";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";
import { createKeyRing, generateKeyEntry, parseKeyEntries } from "../src/lib/seal";
import { compileModel } from "../src/model/compile";
import { ContentModelIn } from "../src/model/model";
import { checkContent } from "../src/model/service";
import { freshDatabase, readReply } from "./helpers";

test("a first start's demo project has the model (page, post, collection; hero, text, image, call to action) and every demo node validates", async () => {
  const fresh = await freshDatabase();
  try {
    const db = fresh.handle.db;
    const config = loadConfig({ SEED_DEMO: "true", PUBLIC_URL: "http://localhost" });
    const first = await bootstrap(db, config, new Date());
    const [demo] = await db.select().from(projects).where(eq(projects.slug, "demo"));
    expect(demo?.modelVersion).toBe(1);
    const { app } = createApp({
      config,
      db,
      dbHandle: fresh.handle,
      fetch: globalThis.fetch,
      now: () => new Date(),
      log: silentLogger,
      keyRing: await createKeyRing(parseKeyEntries([generateKeyEntry()])),
    });
    const admin = async (method: string, path: string, body?: unknown) =>
      readReply(
        await app.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: { authorization: `Bearer ${first!.rootKey}`, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        ),
      );
    const model = (await admin("GET", "/admin/p/demo/model")).json.data;
    expect(model.version).toBe(1);
    expect(model.block_types.map((b: any) => b.name)).toEqual(["hero", "text", "image", "call_to_action"]);
    expect(model.node_types.map((n: any) => n.name)).toEqual(["page", "collection", "post"]);
    const post = model.node_types.find((n: any) => n.name === "post");
    // jsonb keeps keys in its own order (shortest first), not as written.
    expect(Object.keys(post.fields.properties).sort()).toEqual(["author", "category", "date", "tags"]);
    expect(post.fields.properties.date).toMatchObject({ format: "date-time", index: true });
    expect(model.node_types.find((n: any) => n.name === "collection").children).toEqual(["post"]);
    expect(model.block_types.find((b: any) => b.name === "text").schema.properties.text).toMatchObject({ format: "markdown", translatable: true });

    // Every demo node, with its translations, meets the model: checked directly, and by a dry run of the same model.
    const nodes = (await admin("GET", "/admin/p/demo/nodes?per_page=100")).json;
    expect(nodes.total).toBeGreaterThanOrEqual(6);
    expect(nodes.data.filter((n: any) => n.parent_id !== null).every((n: any) => n.type === "post")).toBe(true);
    expect(await checkContent(db, demo!.id, compileModel(ContentModelIn.parse(model), 1))).toEqual({ invalid: [], count: 0 });
    const dry = await admin("PUT", "/admin/p/demo/model?dry_run=true", model);
    expect(dry.json).toMatchObject({ applied: false, count: 0, invalid: [] });
    // …and the model is not an empty promise: a post without its author is refused.
    const blog = nodes.data.find((n: any) => n.path === "blog");
    const bad = await admin("POST", "/admin/p/demo/nodes", { parent_id: blog.id, slug: "x", title: "X", type: "post", blocks: [{ type: "hero", data: { heading: "H" } }] });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.violations.map((v: any) => [v.pointer, v.rule])).toEqual(
      expect.arrayContaining([
        ["/fields/author", "required"],
        ["/blocks/0/type", "allowed_blocks"],
      ]),
    );
  } finally {
    await fresh.drop();
  }
});
