// A publication approved in part (issue 39; docs/editorial.md, "Approving in part"): an agent
// without content:publish edits a published page over MCP (the SDK's Client) and asks to publish;
// a person reads the request's parts (get_approval), approves all but some, and the accepted parts
// are published at once while those left out go back to the published version in the working copy;
// the agent's retry hears what was left out, once. Bad input is refused with nothing written.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { and, desc, eq } from "drizzle-orm";
import { activity, approvals, nodes, revisions } from "../db/schema";
import { seedNode, seedProject } from "./helpers";
import { mcpHarness } from "./mcp-harness";

describe("approving a publication in part", async () => {
  const m = await mcpHarness();
  const { h } = m;
  const db = h.deps.db;
  const p = await seedProject(h, { locales: ["en", "de"] });
  const drafter = await m.token(p.slug, { name: "drafter", scopes: ["content:read", "content:write"] });
  const clients: Client[] = [];
  afterAll(() => {
    for (const c of clients) void c.close().catch(() => {});
    m.stop();
  });
  const agent = async (): Promise<Client> => {
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(m.url), { requestInit: { headers: { authorization: `Bearer ${drafter.token}` } } }));
    clients.push(client);
    return client;
  };
  const text = (r: Record<string, unknown>): string => (r.content as Array<{ text: string }>).map((c) => c.text).join("\n");
  const revisionOf = async (id: string) => (await db.select({ revision: nodes.revision }).from(nodes).where(eq(nodes.id, id)))[0]!.revision;
  const delivered = async (path: string, locale?: string) => (await h.request("GET", `/api/p/${p.slug}/nodes/by-path/${path}${locale ? `?locale=${locale}` : ""}`, { key: null })).json.data;

  /** A published page the agent then edits (title, two fields, a changed, a removed and an added block, its German translation), asking to publish it. */
  async function edited(slug: string) {
    const n = await seedNode(h, p.slug, {
      slug,
      title: "Pricing",
      fields: { summary: "Old summary", body: "Old body" },
      blocks: [
        { type: "text", data: { text: "first" } },
        { type: "text", data: { text: "second" } },
      ],
    });
    const [first, second] = n.blocks as Array<{ id: string }>;
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`, { body: { meta: { title: "Preise" }, status: "published" } })).status).toBe(200);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`)).status).toBe(200);
    const client = await agent();
    const update = await client.callTool({
      name: "update_node",
      arguments: {
        node_id: n.id,
        title: "Pricing 2026",
        fields: { summary: "New summary", body: "New body" },
        blocks: [
          { id: first!.id, type: "text", data: { text: "first, better" } },
          { type: "text", data: { text: "third" } },
        ],
      },
    });
    expect(update.isError).toBeFalsy();
    const third = ((update.structuredContent as { node: { blocks: Array<{ id: string; data: { text: string } }> } }).node.blocks.find((b) => b.data.text === "third") as { id: string }).id;
    const tr = await client.callTool({ name: "upsert_translation", arguments: { node_id: n.id, locale: "de", meta: { title: "Preise 2026" } } });
    expect(tr.isError).toBeFalsy();
    const asked = await client.callTool({ name: "publish_node", arguments: { node_id: n.id } });
    expect(asked.isError).toBe(true);
    expect(text(asked)).toStartWith("approval_required:");
    const [request] = await db
      .select()
      .from(approvals)
      .where(and(eq(approvals.nodeId, n.id), eq(approvals.status, "pending")))
      .orderBy(desc(approvals.createdAt));
    return { n, client, first: first!.id, second: second!.id, third, approvalId: request!.id };
  }

  test("the parts are listed; the accepted ones are published, the others set back; the retry hears what was left out, once", async () => {
    const { n, client, first, second, third, approvalId } = await edited("pricing");
    const read = await h.request("GET", `/admin/p/${p.slug}/approvals/${approvalId}`);
    expect(read.status).toBe(200);
    expect(read.json.data).toMatchObject({ id: approvalId, status: "pending", operation: "publish_node", parts: null });
    const parts = read.json.parts as Array<{ pointer: string; change: string; before?: unknown; after?: unknown }>;
    expect(parts.map((x) => [x.pointer, x.change]).sort()).toEqual(
      [
        ["/title", "changed"],
        ["/fields/summary", "changed"],
        ["/fields/body", "changed"],
        [`/blocks/${first}`, "changed"],
        [`/blocks/${second}`, "removed"],
        [`/blocks/${third}`, "added"],
        ["/translations/de", "changed"],
      ].sort(),
    );
    expect(parts.find((x) => x.pointer === "/title")).toMatchObject({ before: "Pricing", after: "Pricing 2026" });

    const leftOut = ["/fields/body", `/blocks/${second}`, `/blocks/${third}`, "/translations/de"];
    const approved = await h.request("POST", `/admin/p/${p.slug}/approvals/${approvalId}/approve`, { body: { left_out: leftOut, note: "The body waits for legal." } });
    expect(approved.status).toBe(200);
    expect(approved.json.data).toMatchObject({ status: "partial", note: "The body waits for legal.", decided_by: { kind: "admin_key" } });
    expect(approved.json.data.parts.left_out.sort()).toEqual([...leftOut].sort());
    expect(approved.json.data.parts.accepted.sort()).toEqual(["/fields/summary", "/title", `/blocks/${first}`].sort());

    // Readers see the accepted parts now, and the published version of the rest.
    const page = await delivered("pricing");
    expect(page.title).toBe("Pricing 2026");
    expect(page.fields).toEqual({ summary: "New summary", body: "Old body" });
    expect(page.blocks.map((b: { id: string; data: { text: string } }) => [b.id, b.data.text])).toEqual([
      [first, "first, better"],
      [second, "second"],
    ]);
    expect((await delivered("pricing", "de")).title).toBe("Preise");
    // The working copy: what was left out is back to the published version; the German draft is kept.
    const working = (await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data;
    expect([working.state, working.fields.body, working.blocks.map((b: { id: string }) => b.id)]).toEqual(["published", "Old body", [first, second]]);
    const de = (await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`)).json.data;
    expect([de.meta.title, de.state]).toEqual(["Preise 2026", "changed"]);
    // One revision, the person's (named after the approval that published it); one activity entry with what was left out.
    const [rev] = await db.select().from(revisions).where(eq(revisions.nodeId, n.id)).orderBy(desc(revisions.number)).limit(1);
    expect([rev!.number, rev!.operation, rev!.actor.kind, rev!.snapshot.title]).toEqual([working.revision, "approve_approval", "admin_key", "Pricing 2026"]);
    const entries = await db
      .select()
      .from(activity)
      .where(and(eq(activity.projectId, p.id), eq(activity.operation, "approve_approval"), eq(activity.nodeId, n.id)));
    expect(entries).toHaveLength(1);
    expect(entries[0]?.target).toMatchObject({ id: approvalId, left_out: expect.arrayContaining(leftOut) });

    // The agent's retry: not an error, the node as published, and what was left out with the note.
    const retry = await client.callTool({ name: "publish_node", arguments: { node_id: n.id } });
    expect(retry.isError).toBeFalsy();
    expect((retry.structuredContent as { node: { title: string; status: string } }).node).toMatchObject({ title: "Pricing 2026", status: "published" });
    expect(text(retry)).toContain("approved in part");
    expect(text(retry)).toContain("/fields/body");
    expect(text(retry)).toContain("Their note: The body waits for legal.");
    expect((await db.select().from(approvals).where(eq(approvals.id, approvalId)))[0]!.status).toBe("used");
    expect(await revisionOf(n.id)).toBe(working.revision); // the retry wrote nothing
    // Heard once: the next call is a new request.
    const anew = await client.callTool({ name: "publish_node", arguments: { node_id: n.id } });
    expect(text(anew)).toStartWith("approval_required:");
    expect(text(anew)).not.toContain(approvalId);
  });

  test("bad input: an unknown part, every part, a request that is not a publication, a node changed since; nothing written", async () => {
    const { n, client, approvalId } = await edited("plans");
    const before = await revisionOf(n.id);
    const publishedBefore = await delivered("plans");
    const parts = (await h.request("GET", `/admin/p/${p.slug}/approvals/${approvalId}`)).json.parts.map((x: { pointer: string }) => x.pointer);
    for (const [leftOut, code, status] of [
      [["/fields/nope"], "invalid_request", 400],
      [parts, "invalid_request", 400],
      [["/title", 42], "invalid_request", 400],
    ] as const) {
      const r = await h.request("POST", `/admin/p/${p.slug}/approvals/${approvalId}/approve`, { body: { left_out: leftOut } });
      expect({ status: r.status, code: r.json.error.code }).toEqual({ status, code });
    }
    expect((await h.request("POST", `/admin/p/${p.slug}/approvals/${approvalId}/approve`, { body: { left_out: ["/fields/nope"] } })).json.error.details.parts.sort()).toEqual([...parts].sort());
    expect(await revisionOf(n.id)).toBe(before);
    expect(await delivered("plans")).toEqual(publishedBefore);
    expect((await db.select().from(approvals).where(eq(approvals.id, approvalId)))[0]!.status).toBe("pending");

    // Not a publication of the whole node: all or nothing.
    const asked = await client.callTool({ name: "unpublish_node", arguments: { node_id: n.id } });
    const other = /\/approvals\/([0-9a-f-]{36})/.exec(text(asked))?.[1];
    expect((await h.request("GET", `/admin/p/${p.slug}/approvals/${other}`)).json.parts).toBeNull();
    const whole = await h.request("POST", `/admin/p/${p.slug}/approvals/${other}/approve`, { body: { left_out: ["/title"] } });
    expect([whole.status, whole.json.error.code]).toEqual([400, "invalid_request"]);

    // A person's edit since the request: 409, nothing published.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Plans (edited)" } })).status).toBe(200);
    const late = await h.request("POST", `/admin/p/${p.slug}/approvals/${approvalId}/approve`, { body: { left_out: ["/fields/body"] } });
    expect([late.status, late.json.error.code]).toEqual([409, "conflict"]);
    expect(await delivered("plans")).toEqual(publishedBefore);
    // Another project's approval is 404.
    const q = await seedProject(h);
    expect((await h.request("GET", `/admin/p/${q.slug}/approvals/${approvalId}`)).status).toBe(404);
    expect((await h.request("POST", `/admin/p/${q.slug}/approvals/${approvalId}/approve`, { body: { left_out: ["/title"] } })).status).toBe(404);
  });
});
