// Issue 22 §5: get_project (MCP) and read_project (GET /admin/projects/{ref}) read the same settings
// and asked different scopes (content:read, projects:read). Both now take content:read; the REST
// route also projects:read, which MCP credentials never hold (src/projects/operations.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { unmetScopes } from "../src/lib/scopes";
import { OPERATIONS } from "../src/operations";
import { keyWith, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

describe("reading a project's settings: one scope over REST and MCP", async () => {
  const m = await mcpHarness();
  const { h } = m;
  afterAll(() => m.stop());
  const p = await seedProject(h, { locales: ["en", "fr", "de"] });
  const other = await seedProject(h);

  test("a content:read admin key reads the project over REST as a content:read MCP token does through get_project", async () => {
    const { token } = await m.token(p.slug, { name: "reader", scopes: ["content:read"] });
    const viaTool = (await call(await m.connect(token), "get_project")).project;
    const contentKey = await keyWith(h, ["content:read"], [p.id]);
    const viaRest = await h.request("GET", `/admin/projects/${p.slug}`, { key: contentKey });
    expect(viaRest.status).toBe(200);
    expect(viaRest.json.data).toEqual(viaTool);
    expect(viaRest.json.data.locales).toEqual(["en", "fr", "de"]);
    const projectsKey = await keyWith(h, ["projects:read"]);
    expect((await h.request("GET", `/admin/projects/${p.id}`, { key: projectsKey })).json.data).toEqual(viaTool);
  });

  test("the scope rules agree: whatever lets get_project run lets read_project run", () => {
    const get = OPERATIONS.find((op) => op.name === "get_project");
    const read = OPERATIONS.find((op) => op.name === "read_project");
    if (!get || !read) throw new Error("operations missing");
    // [held, what get_project lacks, what read_project lacks]: every set get_project takes, read_project takes too.
    const rules = [["content:read"], ["projects:read"], ["content:read", "ai:read"], ["ai:read"]].map((held) => [held, unmetScopes(get.scopes, held), unmetScopes(read.scopes, held)]);
    expect(rules).toEqual([
      [["content:read"], [], []],
      [["projects:read"], ["content:read"], []],
      [["content:read", "ai:read"], [], []],
      [["ai:read"], ["content:read"], ["projects:read", "content:read"]],
    ]);
  });

  test("still refused without either scope, and another project stays 404", async () => {
    const aiKey = await keyWith(h, ["ai:read"]);
    const denied = await h.request("GET", `/admin/projects/${p.slug}`, { key: aiKey });
    expect([denied.status, denied.json.error.code]).toEqual([403, "insufficient_scope"]);
    expect(denied.json.error.message).toContain("projects:read or content:read");
    const limited = await keyWith(h, ["content:read"], [p.id]);
    const foreign = await h.request("GET", `/admin/projects/${other.slug}`, { key: limited });
    expect([foreign.status, foreign.json.error.code]).toEqual([404, "not_found"]);
    expect((await h.request("GET", "/admin/projects", { key: limited })).status).toBe(403); // the list keeps projects:read
    const { token } = await m.token(p.slug, { name: "ai-only", scopes: ["ai:read"] });
    expect(await callError(await m.connect(token), "get_project")).toMatch(/^insufficient_scope: get_project needs the content:read scope/);
  });
});
