// Cross-runtime: the content model (issue 24) on the real service. A PUT of a model, then a node
// write it refuses (400 invalid_content with pointers) and one it accepts; on PostgreSQL, a second
// service process over the same database refuses the write right after the first one's PUT.
import { afterAll, describe, expect, test } from "bun:test";
import { seedProject } from "./seed";
import { DB, describeRun, startService, stopAll } from "./service";

const MODEL = {
  block_types: [{ name: "hero", description: "A heading", schema: { type: "object", properties: { heading: { type: "string", minLength: 1 } }, required: ["heading"], additionalProperties: false } }],
  node_types: [{ name: "page", description: "A page", blocks: [{ type: "hero", max: 1 }] }],
};

describe(`content model: ${describeRun()}`, async () => {
  afterAll(stopAll);
  const svc = await startService();

  test("PUT a model; a node write it refuses is 400 invalid_content with pointers, a valid one is 201", async () => {
    const p = await seedProject(svc);
    const put = await svc.admin("PUT", `/admin/p/${p.slug}/model`, MODEL);
    expect(put.status).toBe(200);
    expect(put.json.data.version).toBe(1);
    const bad = await svc.admin("POST", `/admin/p/${p.slug}/nodes`, { slug: "home", title: "Home", blocks: [{ type: "hero", data: { heading: "", size: 3 } }] });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_content");
    expect(bad.json.error.details.violations.map((v: { pointer: string; rule: string }) => [v.pointer, v.rule]).sort()).toEqual([
      ["/blocks/0/data/heading", "minLength"],
      ["/blocks/0/data/size", "additionalProperties"],
    ]);
    const good = await svc.admin("POST", `/admin/p/${p.slug}/nodes`, { slug: "home", title: "Home", blocks: [{ type: "hero", data: { heading: "Hello" } }] });
    expect(good.status).toBe(201);
  });

  // PGlite is one process's database: two processes over one database need PostgreSQL.
  test.if(DB === "postgres")(
    "two service processes over one database: the other refuses a write right after the PUT, without a restart (PostgreSQL only: processes cannot share the embedded database)",
    async () => {
      const other = await startService({ databaseUrl: svc.databaseUrl ?? "" });
      const p = await seedProject(svc);
      const write = (slug: string) => ({ slug, title: slug, blocks: [{ type: "hero", data: { heading: "H", extra: true } }] });
      expect((await other.admin("POST", `/admin/p/${p.slug}/nodes`, write("before"))).status).toBe(201);
      const put = await svc.admin("PUT", `/admin/p/${p.slug}/model?force=true`, MODEL);
      expect(put.json).toMatchObject({ applied: true, count: 1 });
      const refused = await other.admin("POST", `/admin/p/${p.slug}/nodes`, write("after"));
      expect(refused.status).toBe(400);
      expect(refused.json.error.details.violations).toEqual([{ pointer: "/blocks/0/data/extra", rule: "additionalProperties", message: 'property "extra" is not declared' }]);
    },
    120_000,
  );
});
