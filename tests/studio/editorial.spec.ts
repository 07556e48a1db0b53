// Editorial work in the studio, in Chromium (issue 39): a publication scheduled by keyboard in a
// fixed time zone lands on the API as the right UTC instant and clears; Preview opens the project's
// preview_url with a fresh token that delivery accepts, and without one shows the working copy in
// the studio's own dialog; the Agents tab lists a token with its writes and revokes it (MCP then
// 401); an agent's write over MCP shows "Changed by <token>" in the editor and the page under the
// tree's `Unreviewed agent changes`, both gone once the person saves. axe on each screen and open
// dialog; the page's CSP never violated.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

const ZONE = "Europe/Paris";
const AGENT = "copy desk agent";

const MODEL = {
  strict: false,
  block_types: [],
  node_types: [
    {
      name: "page",
      description: "A page",
      fields: { type: "object", properties: { summary: { type: "string", title: "Summary" }, body: { type: "string", title: "Body" } } },
      blocks: null,
    },
  ],
};

/** A control pressed from the keyboard: focused, then Enter. */
async function press(control: Locator): Promise<void> {
  await control.focus();
  await control.press("Enter");
}

/** The calendar day `days` from now in `zone`, and that zone's offset (minutes east of UTC) at `hh:mm` on it. */
function dayIn(zone: string, days: number): { y: number; m: number; d: number } {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(new Date(Date.now() + days * 86_400_000));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return { y: get("year"), m: get("month"), d: get("day") };
}
function instantIn(zone: string, day: { y: number; m: number; d: number }, hh: number, mm: number): string {
  const guess = Date.UTC(day.y, day.m - 1, day.d, hh, mm);
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(new Date(guess)).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = name.match(/GMT([+-])(\d\d):(\d\d)/);
  const offset = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  return new Date(guess - offset * 60_000).toISOString();
}
const pad = (n: number) => String(n).padStart(2, "0");

describe("editorial: schedule, preview, agents", () => {
  let browser: Browser;
  let project: { id: string; slug: string };
  let admin: { id: string; email: string; password: string };
  const contexts: BrowserContext[] = [];

  async function open(path: string, as: { email: string; password: string } = admin): Promise<{ page: Page; problems: string[]; context: BrowserContext }> {
    // A fixed zone and a 24-hour locale: what is typed is 14:30 in Paris.
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, timezoneId: ZONE, locale: "en-GB" });
    contexts.push(context);
    const { page, problems } = await openPage(context);
    await signIn(page, as.email, as.password, path);
    return { page, problems, context };
  }

  before(async () => {
    browser = await launch();
    project = await newProject(MODEL);
    admin = await newPerson(project.id, "admin");
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser.close();
  });

  test("Schedule: Publish at typed by keyboard in Europe/Paris is the right UTC instant; the tree marks it; Clear removes it", async () => {
    const node = await newNode(project.slug, { slug: "launch", title: "Launch notes" });
    const { page, problems } = await open(`/studio/p/${project.slug}/nodes/${node.id}`);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    const toolbar = page.getByRole("toolbar", { name: "Page actions" });
    await press(toolbar.getByRole("button", { name: "Schedule", exact: true }));
    const dialog = page.getByRole("dialog", { name: "Schedule" });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? "", /Time zone: Europe\/Paris \(UTC\+0[12]:00\)/);
    assert.deepEqual(await axeViolations(page), []);

    // Two days ahead, 14:30 Paris time, typed into the segments (dd/mm/yyyy, HH:mm).
    const day = dayIn(ZONE, 2);
    await dialog
      .getByRole("group", { name: /^Publish at/ })
      .getByRole("spinbutton")
      .first()
      .focus();
    await page.keyboard.type(`${pad(day.d)}${pad(day.m)}${day.y}1430`);
    await press(dialog.getByRole("button", { name: "Save schedule" }));
    await dialog.waitFor({ state: "detached" });
    const expected = instantIn(ZONE, day, 14, 30);
    const stored = await readNode(project.slug, node.id);
    assert.equal(new Date(stored.publish_at).toISOString(), expected);
    assert.equal(stored.unpublish_at, null);
    await page.getByText(/Publishes on/).waitFor();
    // The tree marks it scheduled.
    await page
      .getByRole("tree")
      .getByRole("treeitem", { name: /Launch notes/ })
      .filter({ hasText: "scheduled" })
      .waitFor();
    assert.deepEqual(await axeViolations(page), []);

    // Clear, by keyboard.
    await press(toolbar.getByRole("button", { name: "Schedule", exact: true }));
    await dialog.waitFor();
    await press(dialog.getByRole("button", { name: "Clear" }));
    await dialog.waitFor({ state: "detached" });
    const cleared = await readNode(project.slug, node.id);
    assert.equal(cleared.publish_at, null);
    await page.getByText(/Publishes on/).waitFor({ state: "detached" });
    await page
      .getByRole("tree")
      .getByRole("treeitem", { name: /Launch notes/ })
      .filter({ hasText: "draft" })
      .waitFor();
    assert.deepEqual(problems, []);
  });

  test("Schedule in a locale: the translation's publication, by keyboard", async () => {
    const node = await newNode(project.slug, { slug: "menu", title: "Menu" });
    const put = await api("PUT", `/admin/p/${project.slug}/nodes/${node.id}/translations/fr`, { meta: { title: "Carte" } });
    assert.ok(put.status < 300, JSON.stringify(put.json));
    const { page, problems } = await open(`/studio/p/${project.slug}/nodes/${node.id}?locale=fr`);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    await press(page.getByRole("toolbar", { name: "Page actions" }).getByRole("button", { name: "Schedule", exact: true }));
    const dialog = page.getByRole("dialog", { name: "Schedule the fr translation" });
    await dialog.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    const day = dayIn(ZONE, 3);
    await dialog
      .getByRole("group", { name: /^Publish at/ })
      .getByRole("spinbutton")
      .first()
      .focus();
    await page.keyboard.type(`${pad(day.d)}${pad(day.m)}${day.y}0905`);
    await press(dialog.getByRole("button", { name: "Save schedule" }));
    await dialog.waitFor({ state: "detached" });
    const tr = (await api("GET", `/admin/p/${project.slug}/nodes/${node.id}/translations/fr`)).json.data;
    assert.equal(new Date(tr.publish_at).toISOString(), instantIn(ZONE, day, 9, 5));
    assert.equal((await readNode(project.slug, node.id)).publish_at, null);
    await page.getByText(/Publishes on .*\(fr translation\)/).waitFor();
    assert.deepEqual(problems, []);
  });

  test("Preview: the site's preview_url with a token delivery accepts; without it, the studio's dialog with the working copy", async () => {
    const node = await newNode(project.slug, { slug: "draft-story", title: "Draft story", fields: { summary: "Only a draft" } });
    // The template points at delivery itself: the new tab then shows what the token reads.
    const template = `${URL_BASE}/api/p/${project.slug}/nodes/by-path{path}?preview={token}&locale={locale}`;

    // The field in Project settings (projects:write: the instance owner's): a bad template is
    // refused at the field, a good one saved.
    const owner = { email: process.env.STUDIO_OWNER_EMAIL ?? "", password: process.env.STUDIO_OWNER_PASSWORD ?? "" };
    const { page, problems, context } = await open(`/studio/p/${project.slug}/settings`, owner);
    const previewField = page.getByRole("textbox", { name: "Preview URL" });
    await previewField.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await previewField.fill("https://site.example/draft?path={path}");
    await press(page.getByRole("button", { name: "Save project" }));
    await page.getByText("preview_url must hold {token}").waitFor();
    assert.equal(await previewField.getAttribute("aria-invalid"), "true");
    assert.equal((await api("GET", `/admin/projects/${project.slug}`)).json.data.preview_url, null);
    await previewField.fill(template);
    await press(page.getByRole("button", { name: "Save project" }));
    await page.getByRole("status").filter({ hasText: "Project settings saved." }).waitFor();
    assert.equal((await api("GET", `/admin/projects/${project.slug}`)).json.data.preview_url, template);

    // Preview from the editor, by keyboard: a new tab at the filled URL.
    await page.goto(`${URL_BASE}/studio/p/${project.slug}/nodes/${node.id}`);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    const tab = context.waitForEvent("page");
    await press(page.getByRole("toolbar", { name: "Page actions" }).getByRole("button", { name: "Preview", exact: true }));
    const opened = await tab;
    await opened.waitForLoadState();
    const url = new URL(opened.url());
    assert.equal(url.pathname, `/api/p/${project.slug}/nodes/by-path/draft-story`);
    const token = url.searchParams.get("preview") ?? "";
    assert.match(token, /^cms_pv_/);
    assert.equal(url.searchParams.get("locale"), "en");
    // The token reads the draft on delivery (and the tab shows it); without it, the draft is not delivered.
    const withToken = await fetch(`${URL_BASE}/api/p/${project.slug}/nodes/by-path/draft-story?preview=${encodeURIComponent(token)}`);
    assert.equal(withToken.status, 200);
    assert.equal(((await withToken.json()) as { data: { title: string } }).data.title, "Draft story");
    assert.match((await opened.textContent("body")) ?? "", /Draft story/);
    assert.equal((await fetch(`${URL_BASE}/api/p/${project.slug}/nodes/by-path/draft-story`)).status, 404);
    await opened.close();

    // Without preview_url: the built-in dialog shows the saved working copy as text.
    assert.equal((await api("PATCH", `/admin/projects/${project.slug}`, { preview_url: null })).status, 200);
    await page.reload();
    const title = page.getByRole("textbox", { name: "Title" });
    await title.waitFor();
    await title.fill("Draft story, revised");
    await title.press("Control+s");
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
    await press(page.getByRole("toolbar", { name: "Page actions" }).getByRole("button", { name: "Preview", exact: true }));
    const dialog = page.getByRole("dialog", { name: "Preview" });
    const delivered = dialog.getByRole("article", { name: "Delivered content" });
    await delivered.getByRole("heading", { name: "Draft story, revised" }).waitFor();
    assert.match((await delivered.textContent()) ?? "", /summary\s*Only a draft/);
    assert.deepEqual(await axeViolations(page), []);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(problems, []);
  });

  test("Who wrote this, and the Agents tab: an MCP write marked in the editor and the tree until a person saves; the token's writes; Revoke (MCP then 401)", async () => {
    const node = await newNode(project.slug, { slug: "brief", title: "Morning brief", fields: { summary: "Written by a person", body: "Body by a person" } });
    const created = await api("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { name: AGENT });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const token = created.json.data as { id: string; token: string };
    const agent = new Client({ name: "editorial-spec", version: "1.0.0" });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${URL_BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token.token}` } } }));
    try {
      const res = (await agent.callTool({ name: "update_node", arguments: { node_id: node.id, fields: { summary: "Rewritten by the agent", body: "Body by a person" } } })) as {
        isError?: boolean;
        content: Array<{ text: string }>;
      };
      assert.ok(!res.isError, res.content[0]?.text ?? "update_node failed");
    } finally {
      await agent.close().catch(() => {});
    }
    const changes = await api("GET", `/admin/p/${project.slug}/nodes/${node.id}/agent-changes`);
    assert.equal(changes.status, 200, JSON.stringify(changes.json));
    const listed = (Array.isArray(changes.json.data) ? changes.json.data : changes.json.data.changes) as Array<{ pointer: string; actor: { kind: string; name: string } }>;
    assert.deepEqual(
      listed.map((c) => [c.pointer, c.actor.kind, c.actor.name]),
      [["/fields/summary", "mcp_token", AGENT]],
    );

    const { page, problems } = await open(`/studio/p/${project.slug}/nodes/${node.id}`);
    const summary = page.getByRole("textbox", { name: "Summary" });
    await summary.waitFor();
    const list = page.getByRole("region", { name: "Changed by agents since a person last saved" });
    await list.waitFor();
    assert.match((await list.textContent()) ?? "", new RegExp(`Summary\\s*Changed by ${AGENT}`));
    assert.doesNotMatch((await list.textContent()) ?? "", /Body/);
    // The field itself carries the badge, and its control names it (aria-describedby); Body has none.
    await page.locator('[data-pointer="/fields/summary"]').getByText(`Changed by ${AGENT}`).waitFor();
    const described = (el: Element) =>
      (el.getAttribute("aria-describedby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" | ");
    assert.match(await summary.evaluate(described), new RegExp(`Changed by ${AGENT}`));
    assert.equal(await page.locator('[data-pointer="/fields/body"] .field-agent').count(), 0);
    assert.equal(await page.locator(".field-agent").count(), 1);
    assert.deepEqual(await axeViolations(page), []);
    // The button takes the focus to the field.
    await press(list.getByRole("button", { name: `Go to field: Summary (changed by ${AGENT})` }));
    assert.equal(await summary.evaluate((el) => el === document.activeElement), true);

    // The tree's toggle, by keyboard: the page is listed, flat.
    const toggle = page.getByRole("button", { name: "Unreviewed agent changes" });
    await toggle.focus();
    await page.keyboard.press("Space");
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    const flat = page.getByRole("tree", { name: "Pages with unreviewed agent changes" });
    await flat.getByRole("treeitem", { name: /Morning brief/ }).waitFor();
    assert.equal(await flat.getByRole("treeitem", { name: /Launch notes|Draft story/ }).count(), 0);
    assert.deepEqual(await axeViolations(page), []);

    // The person reviews and saves: the list and the tree's entry are gone.
    await summary.fill("Rewritten by the agent, checked");
    await summary.press("Control+s");
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
    await list.waitFor({ state: "detached" });
    assert.equal(await page.locator(".field-agent").count(), 0);
    const after = (await api("GET", `/admin/p/${project.slug}/nodes/${node.id}/agent-changes`)).json.data;
    assert.deepEqual(Array.isArray(after) ? after : after.changes, []);
    await page.getByText("No page has unreviewed agent changes.").waitFor();

    // Another agent write, to the title: its badge until the person confirms without editing (Mark as reviewed saves the page as it is).
    const again = new Client({ name: "editorial-spec", version: "1.0.0" });
    await again.connect(new StreamableHTTPClientTransport(new URL(`${URL_BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token.token}` } } }));
    try {
      assert.ok(!((await again.callTool({ name: "update_node", arguments: { node_id: node.id, title: "Morning brief, updated" } })) as { isError?: boolean }).isError);
    } finally {
      await again.close().catch(() => {});
    }
    await page.reload();
    const title = page.getByRole("textbox", { name: "Title" });
    await page.locator(".title-slug").getByText(`Changed by ${AGENT}`).waitFor();
    assert.match(await title.evaluate(described), new RegExp(`Changed by ${AGENT}`));
    const revisionBefore = (await api("GET", `/admin/p/${project.slug}/nodes/${node.id}`)).json.data.revision;
    await press(page.getByRole("region", { name: "Changed by agents since a person last saved" }).getByRole("button", { name: "Mark as reviewed" }));
    await page.locator(".field-agent").first().waitFor({ state: "detached" });
    const reviewed = (await api("GET", `/admin/p/${project.slug}/nodes/${node.id}`)).json.data;
    assert.deepEqual([reviewed.revision, reviewed.title], [revisionBefore + 1, "Morning brief, updated"]);
    const none = (await api("GET", `/admin/p/${project.slug}/nodes/${node.id}/agent-changes`)).json.data;
    assert.deepEqual(Array.isArray(none) ? none : none.changes, []);
    assert.deepEqual(problems, []);

    // The Agents tab: the token, its scopes, its two writes; Revoke after a confirmation, by keyboard.
    await page.goto(`${URL_BASE}/studio/p/${project.slug}/settings`);
    await press(page.getByRole("tab", { name: "Agents" }));
    const tokens = page.getByRole("table", { name: "MCP tokens" });
    const row = tokens.getByRole("row", { name: new RegExp(AGENT) });
    await row.waitFor();
    await row.getByText("2 writes").waitFor();
    const rowText = (await row.textContent()) ?? "";
    assert.match(rowText, /content:write/);
    assert.match(rowText, /last: update_node/);
    const total = (await api("GET", `/admin/p/${project.slug}/activity?actor_kind=mcp_token&actor_id=${token.id}&per_page=1`)).json.total;
    assert.equal(total, 2);
    // An admin holds keys:write: the OAuth consents are listed (none here).
    await page.getByText("No agent holds an OAuth consent for this project.").waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await press(row.getByRole("button", { name: `Revoke ${AGENT}` }));
    const confirm = page.getByRole("alertdialog", { name: "Revoke the token?" });
    await confirm.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await press(confirm.getByRole("button", { name: "Revoke" }));
    await page
      .getByRole("status")
      .filter({ hasText: `${AGENT} revoked.` })
      .waitFor();
    await row.waitFor({ state: "detached" });
    assert.equal((await api("GET", `/admin/p/${project.slug}/ai/mcp/tokens`)).json.data.length, 0);
    const mcp = await fetch(`${URL_BASE}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(mcp.status, 401);
    assert.deepEqual(problems, []);
  });

  test("Agents tab for an editor: tokens and their writes, no Revoke, the consents named as needing keys:write", async () => {
    const editor = await newPerson(project.id, "editor");
    await api("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { name: "read only agent" });
    const { page, problems } = await open(`/studio/p/${project.slug}/settings`, editor);
    await press(page.getByRole("tab", { name: "Agents" }));
    const row = page.getByRole("table", { name: "MCP tokens" }).getByRole("row", { name: /read only agent/ });
    await row.getByText("0 writes").waitFor();
    assert.equal(await row.getByRole("button").count(), 0);
    await page.getByText(/needs the keys:write right/).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
  });
});
