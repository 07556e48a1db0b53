// Issue 36 §6: the approval page of a schedule_node request shows what will happen: which version
// is scheduled (the node, or its translation into a locale), each time now and after approval (in
// UTC, with the time as the agent wrote it), and what the publication makes public; never "No
// difference". An MCP token with content:write but not content:publish asks; an editor reviews.
import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { nodes } from "../db/schema";
import { decideInBrowser } from "./approvals.helpers";
import { translate } from "./delivery.helpers";
import { seedNode, seedProject } from "./helpers";
import { mcpHarness } from "./mcp-harness";
import { seedUser } from "./oauth.helpers";

describe("the approval page of schedule_node", async () => {
  const m = await mcpHarness({ OAUTH_SIGNIN_RATE_LIMIT: "1000000" });
  afterAll(() => m.stop());
  const p = await seedProject(m.h, { locales: ["en", "fr"] });
  const editor = await seedUser(m.h, "editor", [p.id]);
  const drafter = await m.token(p.slug, { name: "drafter", scopes: ["content:read", "content:write"] });
  const client = await m.connect(drafter.token);

  /** The agent's call: refused with the approval link; the page as the editor sees it after signing in. */
  async function review(args: Record<string, unknown>): Promise<string> {
    const r = await client.callTool({ name: "schedule_node", arguments: args });
    expect(r.isError).toBe(true);
    const text = (r.content as Array<{ text: string }>).map((c) => c.text).join("\n");
    expect(text).toStartWith("approval_required:");
    const url = /(http\S+\/approvals\/[0-9a-f-]{36})/.exec(text)?.[1];
    expect(url).toBeDefined();
    const visit = await decideInBrowser((req) => m.h.app.handle(req), url!, editor, null);
    expect(visit.review.status).toBe(200);
    return visit.review.html;
  }

  test("a draft scheduled to publish and unpublish: both times (UTC and as asked), the node itself, and the status it gets", async () => {
    const node = await seedNode(m.h, p.slug, { slug: "launch", title: "Launch" });
    const html = await review({ node_id: node.id, publish_at: "2031-03-01T09:30:00+01:00", unpublish_at: "2031-04-01T18:00:00+02:00" });
    expect(html).toContain("change when this node is published or unpublished");
    expect(html).toContain('<dd id="schedule-target">the node itself</dd>');
    expect(html).toContain(
      '<th scope="row">Publish at</th><td><em>none</em></td><td><time datetime="2031-03-01T08:30:00.000Z">2031-03-01 08:30:00 UTC</time> (asked as <code>2031-03-01T09:30:00+01:00</code>)</td>',
    );
    expect(html).toContain(
      '<th scope="row">Unpublish at</th><td><em>none</em></td><td><time datetime="2031-04-01T16:00:00.000Z">2031-04-01 16:00:00 UTC</time> (asked as <code>2031-04-01T18:00:00+02:00</code>)</td>',
    );
    // What the publication makes public: the node, now published (never published before).
    expect(html).toContain("never published");
    expect(html).toContain("<code>/status</code>");
    expect(html).toContain("&#34;published&#34;");
    expect(html).not.toContain("No difference");
  });

  test("a translation: the locale, the time kept and the time cleared", async () => {
    const node = await seedNode(m.h, p.slug, { slug: "sale", title: "Sale" }, true);
    await translate(m.h, p.slug, node.id, "fr", { meta: { title: "Soldes" }, status: "draft" });
    const set = await m.h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/schedule`, { body: { locale: "fr", publish_at: "2031-05-01T10:00:00Z", unpublish_at: "2031-06-01T10:00:00Z" } });
    expect(set.status).toBe(200);
    const html = await review({ node_id: node.id, locale: "fr", unpublish_at: null });
    expect(html).toContain('<dd id="schedule-target">its translation into locale <code>fr</code></dd>');
    expect(html).toContain(
      '<th scope="row">Publish at</th><td><time datetime="2031-05-01T10:00:00.000Z">2031-05-01 10:00:00 UTC</time></td><td><time datetime="2031-05-01T10:00:00.000Z">2031-05-01 10:00:00 UTC</time> (unchanged)</td>',
    );
    expect(html).toContain('<th scope="row">Unpublish at</th><td><time datetime="2031-06-01T10:00:00.000Z">2031-06-01 10:00:00 UTC</time></td><td><strong>cleared</strong></td>');
    expect(html).not.toContain("No difference");
    // Asking only to clear a time changes no content: the page says so, and names the schedule.
    expect(html).toContain("The content does not change; only when it is published or unpublished (above).");
    // Reviewing writes nothing: the schedule is as it was.
    const [row] = await m.h.deps.db.select({ status: nodes.status }).from(nodes).where(eq(nodes.id, node.id));
    expect(row?.status).toBe("published");
    const read = await m.h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/translations/fr`);
    expect(read.json.data).toMatchObject({ publish_at: "2031-05-01T10:00:00.000Z", unpublish_at: "2031-06-01T10:00:00.000Z" });
  });

  test("a translation scheduled to publish: the translation's status in the change, not the node's", async () => {
    const node = await seedNode(m.h, p.slug, { slug: "news", title: "News" }, true);
    await translate(m.h, p.slug, node.id, "fr", { meta: { title: "Nouvelles" }, status: "draft" });
    const html = await review({ node_id: node.id, locale: "fr", publish_at: "2031-07-01T08:00:00.000Z" });
    expect(html).toContain('<dd id="schedule-target">its translation into locale <code>fr</code></dd>');
    expect(html).toContain('<td><time datetime="2031-07-01T08:00:00.000Z">2031-07-01 08:00:00 UTC</time></td>');
    // A draft translation has no published version: its publication brings it, published, where there was none.
    expect(html).toMatch(
      /<code>\/translations\/0<\/code><\/td><td><em>\(none\)<\/em><\/td><td><code>\{[^<]*&#34;Nouvelles&#34;[^<]*&#34;locale&#34;:&#34;fr&#34;,&#34;status&#34;:&#34;published&#34;\}<\/code>/,
    );
    // The node's own status does not change.
    expect(html).not.toContain("<code>/status</code>");
    expect(html).not.toContain("No difference");
  });
});
