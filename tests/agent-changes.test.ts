// "Who wrote this" (issue 39): the fields an agent changed on a node since a person last did, and
// the nodes with such changes; a person's save in the studio clears both.
import { afterAll, describe, expect, test } from "bun:test";
import { seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";
import { seedUser } from "./oauth.helpers";

describe("what agents changed since a person", async () => {
  const m = await mcpHarness({ OAUTH_SIGNIN_RATE_LIMIT: "1000000" });
  afterAll(() => m.stop());
  const h = m.h;

  test("the agent's fields with the agent, block positions as they are now; the tree's filter; cleared by a person's save", async () => {
    const p = await seedProject(h);
    const node = await seedNode(h, p.slug, {
      slug: "pricing",
      title: "Pricing",
      fields: { summary: "Plans" },
      blocks: [
        { type: "text", data: { body: "one" } },
        { type: "text", data: { body: "two" } },
      ],
    });
    const quiet = await seedNode(h, p.slug, { slug: "quiet", title: "Quiet" });
    const agent = await m.token(p.slug, { name: "copy agent", scopes: ["content:read", "content:write"] });
    const client = await m.connect(agent.token);
    const read = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}`);
    const [b0, b1] = read.json.data.blocks;
    await call(client, "update_node", {
      node_id: node.id,
      title: "Pricing plans",
      fields: { summary: "Plans and prices" },
      blocks: [
        { id: b0.id, type: "text", data: { body: "one" } },
        { id: b1.id, type: "text", data: { body: "two, rewritten" } },
      ],
    });
    // A key moves the blocks afterwards (neither a person nor an agent): the agent's block is first now.
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/blocks/order`, { body: { block_ids: [b1.id, b0.id] } })).status).toBe(200);
    const changes = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/agent-changes`);
    expect(changes.status).toBe(200);
    expect(changes.json.data.map((c: { pointer: string }) => c.pointer)).toEqual(["/blocks/0/data/body", "/fields/summary", "/title"]);
    for (const c of changes.json.data) expect(c.actor).toMatchObject({ kind: "mcp_token", id: agent.id, name: "copy agent" });
    const listed = await h.request("GET", `/admin/p/${p.slug}/nodes?agent_changes=true`);
    expect(listed.json.data.map((n: { id: string }) => n.id)).toEqual([node.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${quiet.id}/agent-changes`)).json.data).toEqual([]);

    // A person saves in the studio: the marks are gone, and so is the node from the filter.
    const person = await seedUser(h, "editor", [p.id]);
    const signIn = await h.request("POST", "/studio/api/session", {
      key: null,
      body: { email: person.email, password: person.password },
      headers: { "x-cms-studio": "1", "sec-fetch-site": "same-origin" },
    });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const saved = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, {
      key: null,
      body: { title: "Pricing plans (checked)" },
      headers: { cookie, "x-cms-studio": "1", "sec-fetch-site": "same-origin" },
    });
    expect(saved.status).toBe(200);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/agent-changes`)).json.data).toEqual([]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes?agent_changes=true`)).json.data).toEqual([]);
    // Another project's node is not there.
    const other = await seedProject(h);
    expect((await h.request("GET", `/admin/p/${other.slug}/nodes/${node.id}/agent-changes`)).status).toBe(404);
  });
});
