// The approvals inbox in Chromium, with a real MCP client (the SDK's Client over Streamable HTTP)
// holding an MCP token with content:read and content:write but not content:publish: the agent edits
// a published page and asks to publish it; the inbox shows the request with the agent's name and
// the diff; a person approves with a note; the agent's retry publishes (delivery shows it) once, and
// the next retry asks anew. A rejection with a note reaches the agent's retry; a page changed after
// the request voids it (409, shown plainly); a viewer sees requests but cannot decide. Every action
// by keyboard; axe on every screen; the page's CSP never violated.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

const AGENT = "drafting-agent";

/** A control pressed from the keyboard: focused, then Enter. */
async function press(control: Locator): Promise<void> {
  await control.focus();
  await control.page().keyboard.press("Enter");
}

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const toolText = (r: ToolResult): string => ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");
const approvalIdOf = (r: ToolResult): string => {
  const id = /\/approvals\/([0-9a-f-]{36})/.exec(toolText(r))?.[1];
  assert.ok(id, `no approval link in ${toolText(r)}`);
  return id;
};

/** What delivery serves at a path (published versions only), or the status when it serves nothing. */
async function delivered(slug: string, path: string): Promise<{ status: number; title?: string }> {
  const res = await fetch(`${URL_BASE}/api/p/${slug}/nodes/by-path/${path}`);
  if (res.status !== 200) return { status: res.status };
  const body = (await res.json()) as { data: { title: string } };
  return { status: 200, title: body.data.title };
}

describe("the approvals inbox", () => {
  let browser: Browser;
  let project: { id: string; slug: string };
  let editor: { id: string; email: string; password: string };
  let viewer: { id: string; email: string; password: string };
  let token: { id: string; token: string };
  let agent: Client;
  const contexts: BrowserContext[] = [];

  before(async () => {
    browser = await launch();
    project = await newProject();
    editor = await newPerson(project.id, "editor");
    viewer = await newPerson(project.id, "viewer");
    const made = await api("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { name: AGENT, scopes: ["content:read", "content:write"] });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.deepEqual([...made.json.data.scopes].sort(), ["content:read", "content:write"]);
    token = { id: made.json.data.id, token: made.json.data.token };
    // A client that declares no URL elicitation: a request for approval is a tool error naming the link.
    agent = new Client({ name: "agent", version: "1.0.0" }, { capabilities: {} });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${URL_BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token.token}` } } }));
  });
  after(async () => {
    await agent?.close().catch(() => {});
    for (const c of contexts) await c.close().catch(() => {});
    await browser.close();
  });

  const call = (name: string, args: Record<string, unknown>) => agent.callTool({ name, arguments: args }) as Promise<ToolResult>;

  async function inbox(as: { email: string; password: string }): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    contexts.push(context);
    const { page, problems } = await openPage(context);
    await signIn(page, as.email, as.password, `/studio/p/${project.slug}/approvals`);
    await page.getByRole("heading", { level: 1, name: "Approvals" }).waitFor();
    return { page, problems };
  }
  const itemOf = (page: Page, title: string) => page.getByRole("listitem").filter({ has: page.getByRole("link", { name: title, exact: true }) });
  const detail = (page: Page) => page.getByRole("region").filter({ has: page.getByRole("heading", { level: 2, name: /^(Publish|Delete|Unpublish|Archive)/ }) });
  const listed = async (status: string) => (await api("GET", `/admin/p/${project.slug}/approvals?status=${status}&per_page=100`)).json.data as Array<Record<string, any>>;

  test("an agent's publish waits for a person: the inbox shows the agent and the diff; approved with a note by keyboard, the retry publishes once", async () => {
    const node = await newNode(project.slug, { slug: "launch", title: "Launch", fields: { summary: "Soon" } });
    assert.equal((await api("POST", `/admin/p/${project.slug}/nodes/${node.id}/publish`, {})).status, 200);
    assert.equal((await delivered(project.slug, "launch")).title, "Launch");

    // The agent edits the draft (its right) and asks to publish (not its right).
    const edited = await call("update_node", { node_id: node.id, title: "Launch day" });
    assert.ok(!edited.isError, toolText(edited));
    const asked = await call("publish_node", { node_id: node.id });
    assert.equal(asked.isError, true);
    assert.match(toolText(asked), /^approval_required:/);
    assert.match(toolText(asked), /content:publish/);
    const id = approvalIdOf(asked);
    const revision = (await readNode(project.slug, node.id)).revision;
    const [pending] = (await listed("pending")).filter((a) => a.id === id);
    assert.ok(pending);
    assert.equal(pending.operation, "publish_node");
    assert.equal(pending.revision, revision);
    assert.deepEqual({ kind: pending.requested_by.kind, id: pending.requested_by.id, name: pending.requested_by.name }, { kind: "mcp_token", id: token.id, name: AGENT });

    // The inbox: pending by default, the request with the agent, the operation, the page linked to its editor, the revision.
    const { page, problems } = await inbox(editor);
    const item = itemOf(page, "Launch day");
    await item.waitFor();
    const text = (await item.textContent()) ?? "";
    assert.match(text, new RegExp(`Asked by ${AGENT}\\s*\\(MCP token\\)`));
    assert.match(text, /publish_node at revision \d+/);
    assert.ok(text.includes(`revision ${revision}`));
    assert.match(text, /Asked .+Expires /);
    assert.equal(await item.getByRole("link", { name: "Launch day" }).getAttribute("href"), `/studio/p/${project.slug}/nodes/${node.id}`);
    assert.equal(
      await page
        .getByRole("button", { name: /Status/ })
        .textContent()
        .then((t) => t?.includes("Pending")),
      true,
    );
    assert.deepEqual(await axeViolations(page), []);

    // Opened by keyboard: the focus lands on the request's heading; the diff by JSON Pointer, as text.
    await press(item.getByRole("button", { name: /^Review/ }));
    const opened = detail(page);
    const heading = opened.getByRole("heading", { level: 2, name: "Publish “Launch day”" });
    await heading.waitFor();
    await page.waitForFunction(() => document.activeElement?.tagName === "H2" && document.activeElement.textContent?.includes("Launch day"));
    const titleRow = opened.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "/title" }) });
    await titleRow.waitFor();
    assert.deepEqual(
      (await titleRow.getByRole("cell").allTextContents()).map((t) => t.trim()),
      ["Changed", "Launch", "Launch day"],
    );
    assert.equal(await opened.getByRole("rowheader", { name: "/fields/summary" }).count(), 0); // unchanged fields are not rows
    assert.ok(((await opened.textContent()) ?? "").includes(AGENT));
    assert.deepEqual(await axeViolations(page), []);

    // The note typed and Approve pressed, both from the keyboard.
    await page.getByRole("textbox", { name: "Note for the agent" }).focus();
    await page.keyboard.type("Looks good, ship it.");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Approve");
    await page.keyboard.press("Enter");
    const outcome = page.locator(".approval-outcome");
    await outcome.filter({ hasText: "Approved: Publish “Launch day”" }).waitFor();
    await page.waitForFunction(() => document.activeElement?.classList.contains("approval-outcome"));
    await itemOf(page, "Launch day").waitFor({ state: "detached" }); // it leaves the pending list
    assert.deepEqual(await axeViolations(page), []);

    const [approved] = (await listed("approved")).filter((a) => a.id === id);
    assert.equal(approved?.note, "Looks good, ship it.");
    assert.equal(approved?.decided_by.kind, "user");
    assert.equal(approved?.decided_by.user?.email ?? approved?.decided_by.name, editor.email);
    assert.equal((await delivered(project.slug, "launch")).title, "Launch", "approving alone publishes nothing");

    // The agent's retry of the same call publishes, once.
    const retry = await call("publish_node", { node_id: node.id });
    assert.ok(!retry.isError, toolText(retry));
    assert.equal((await delivered(project.slug, "launch")).title, "Launch day");
    assert.equal((await listed("used")).find((a) => a.id === id)?.status, "used");
    const again = await call("publish_node", { node_id: node.id });
    assert.equal(again.isError, true);
    assert.match(toolText(again), /^approval_required:/);
    assert.notEqual(approvalIdOf(again), id);
    assert.equal((await readNode(project.slug, node.id)).status, "published");

    // The used request under its filter, chosen from the keyboard.
    await press(page.getByRole("button", { name: /Status/ }));
    const option = page.getByRole("option", { name: "Used (carried out or heard)" });
    await option.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await option.focus();
    await page.keyboard.press("Enter");
    const used = itemOf(page, "Launch day");
    await used.waitFor();
    assert.match((await used.textContent()) ?? "", /Used.*Note: Looks good, ship it\./s);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
  });

  test("rejected with a note by keyboard: the agent's retry answers approval_rejected with the note; nothing published", async () => {
    const node = (await api("GET", `/admin/p/${project.slug}/nodes?per_page=100`)).json.data.find((n: { slug: string }) => n.slug === "launch");
    // The agent edits again: its earlier pending request is void, this one is new.
    assert.ok(!(await call("update_node", { node_id: node.id, title: "Launch week" })).isError);
    const asked = await call("publish_node", { node_id: node.id });
    assert.match(toolText(asked), /^approval_required:/);
    const id = approvalIdOf(asked);
    assert.deepEqual(
      (await listed("pending")).filter((a) => a.node_id === node.id).map((a) => a.id),
      [id],
    );

    const { page, problems } = await inbox(editor);
    const item = itemOf(page, "Launch week");
    await item.waitFor();
    await press(item.getByRole("button", { name: /^Review/ }));
    const opened = detail(page);
    const titleRow = opened.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "/title" }) });
    await titleRow.waitFor();
    assert.deepEqual(
      (await titleRow.getByRole("cell").allTextContents()).map((t) => t.trim()),
      ["Changed", "Launch day", "Launch week"],
    );
    const note = "Not yet: legal must read it first.";
    await page.getByRole("textbox", { name: "Note for the agent" }).focus();
    await page.keyboard.type(note);
    await press(opened.getByRole("button", { name: "Reject" }));
    await page.locator(".approval-outcome").filter({ hasText: "Rejected: Publish “Launch week”" }).waitFor();
    await itemOf(page, "Launch week").waitFor({ state: "detached" });
    assert.deepEqual(await axeViolations(page), []);
    const [rejected] = (await listed("rejected")).filter((a) => a.id === id);
    assert.equal(rejected?.note, note);

    const retry = await call("publish_node", { node_id: node.id });
    assert.equal(retry.isError, true);
    assert.match(toolText(retry), /^approval_rejected: rejected/);
    assert.ok(toolText(retry).includes(`Their note: ${note}`), toolText(retry));
    assert.equal((await delivered(project.slug, "launch")).title, "Launch day");
    assert.deepEqual(problems, []);
  });

  test("approved in part by keyboard: the checked parts are published, the unchecked set back; the result previewed first; the agent hears what was left out", async () => {
    const node = await newNode(project.slug, { slug: "pricing", title: "Pricing", fields: { summary: "Old summary", body: "Old body" } });
    assert.equal((await api("POST", `/admin/p/${project.slug}/nodes/${node.id}/publish`, {})).status, 200);
    assert.ok(!(await call("update_node", { node_id: node.id, title: "Pricing 2026", fields: { summary: "New summary", body: "New body" } })).isError);
    const id = approvalIdOf(await call("publish_node", { node_id: node.id }));

    const { page, problems } = await inbox(editor);
    const item = itemOf(page, "Pricing 2026");
    await item.waitFor();
    await press(item.getByRole("button", { name: /^Review/ }));
    const opened = detail(page);
    const parts = opened.getByRole("group", { name: "Parts to publish" });
    await parts.waitFor();
    const boxes = parts.getByRole("checkbox");
    assert.equal(await boxes.count(), 3);
    for (const name of [/^Title/, /^Field summary/, /^Field body/]) assert.equal(await parts.getByRole("checkbox", { name }).isChecked(), true);

    // The result previewed first (no preview_url here: the built-in preview, read with a preview token).
    await press(opened.getByRole("button", { name: "Preview the result" }));
    const dialog = page.getByRole("dialog", { name: "Preview" });
    await dialog.getByText("New body").first().waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });

    // The body left out: unchecked with the space bar; Approve says what it does.
    await parts.getByRole("checkbox", { name: /^Field body/ }).focus();
    await page.keyboard.press("Space");
    assert.equal(await parts.getByRole("checkbox", { name: /^Field body/ }).isChecked(), false);
    await parts.getByText("1 of 3 left out.").waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await page.getByRole("textbox", { name: "Note for the agent" }).focus();
    await page.keyboard.type("The body waits for legal.");
    await press(opened.getByRole("button", { name: "Approve the checked parts" }));
    await page.locator(".approval-outcome").filter({ hasText: "Approved in part: Publish “Pricing 2026”" }).waitFor();

    // Readers see the title and summary; the body stays as published, in the working copy too.
    const res = await fetch(`${URL_BASE}/api/p/${project.slug}/nodes/by-path/pricing`);
    const live = ((await res.json()) as { data: { title: string; fields: Record<string, string> } }).data;
    assert.deepEqual([live.title, live.fields.summary, live.fields.body], ["Pricing 2026", "New summary", "Old body"]);
    assert.equal((await readNode(project.slug, node.id)).fields.body, "Old body");
    const [decided] = (await listed("partial")).filter((a) => a.id === id);
    assert.deepEqual(decided?.parts, { accepted: ["/title", "/fields/summary"], left_out: ["/fields/body"] });

    const retry = await call("publish_node", { node_id: node.id });
    assert.ok(!retry.isError, toolText(retry));
    assert.match(toolText(retry), /approved in part/);
    assert.ok(toolText(retry).includes("/fields/body") && toolText(retry).includes("Their note: The body waits for legal."), toolText(retry));
    assert.deepEqual(problems, []);
  });

  test("a page changed after the request: approving answers 409, shown plainly; a never-published page's diff is all new; a delete says what happens; a viewer cannot decide", async () => {
    const draft = await newNode(project.slug, { slug: "beta", title: "Beta", fields: { summary: "Try it" } });
    const asked = await call("publish_node", { node_id: draft.id });
    assert.match(toolText(asked), /^approval_required:/);
    const id = approvalIdOf(asked);
    const launch = (await api("GET", `/admin/p/${project.slug}/nodes?per_page=100`)).json.data.find((n: { slug: string }) => n.slug === "launch");
    const del = await call("delete_node", { node_id: launch.id });
    assert.match(toolText(del), /^approval_required:/);

    const { page, problems } = await inbox(editor);
    const item = itemOf(page, "Beta");
    await item.waitFor();
    await press(item.getByRole("button", { name: /^Review/ }));
    const opened = detail(page);
    await opened.getByText("Never published: everything below is new to the site.").waitFor();
    for (const [path, value] of [
      ["/title", "Beta"],
      ["/slug", "beta"],
      ["/fields/summary", "Try it"],
    ]) {
      const row = opened.getByRole("row").filter({ has: page.getByRole("rowheader", { name: path }) });
      assert.deepEqual(
        (await row.getByRole("cell").allTextContents()).map((t) => t.trim()),
        ["New", "(none)", value],
      );
    }
    assert.deepEqual(await axeViolations(page), []);

    // Someone edits the page meanwhile: the request is void; Approve answers 409, said plainly.
    assert.equal((await api("PATCH", `/admin/p/${project.slug}/nodes/${draft.id}`, { title: "Beta 2" })).status, 200);
    await press(opened.getByRole("button", { name: "Approve" }));
    const alert = opened.getByRole("alert");
    await alert.waitFor();
    const said = (await alert.textContent()) ?? "";
    assert.match(said, /can no longer be decided/);
    assert.match(said, /changed since/);
    assert.match(said, /the agent must ask again/);
    assert.equal(await opened.getByRole("button", { name: "Approve" }).count(), 0);
    await itemOf(page, "Beta").waitFor({ state: "detached" });
    assert.deepEqual(await axeViolations(page), []);
    assert.equal((await listed("void")).find((a) => a.id === id)?.status, "void");
    assert.equal((await readNode(project.slug, draft.id)).status, "draft");

    // The delete request: what happens, in words; closed by keyboard, the focus goes back to its Review.
    const doomed = itemOf(page, "Launch week");
    await press(doomed.getByRole("button", { name: /^Review: Delete/ }));
    await opened.getByRole("heading", { level: 2, name: "Delete “Launch week”" }).waitFor();
    assert.match((await opened.textContent()) ?? "", /every page below it go to the trash: the site stops serving them/);
    assert.equal(await opened.getByRole("table").count(), 0);
    assert.deepEqual(await axeViolations(page), []);
    await press(opened.getByRole("button", { name: "Close" }));
    await page.waitForFunction(() => document.activeElement?.getAttribute("aria-label")?.startsWith("Review: Delete"));
    assert.deepEqual(problems, []);

    // A viewer sees the requests and their change, not Approve or Reject (the server refuses anyway: 403).
    const asViewer = await inbox(viewer);
    const seen = itemOf(asViewer.page, "Launch week");
    await seen.waitFor();
    await press(seen.getByRole("button", { name: /^Review/ }));
    const viewed = detail(asViewer.page);
    await viewed.getByText(/Deciding needs the right to publish/).waitFor();
    assert.equal(await viewed.getByRole("button", { name: "Approve" }).count(), 0);
    assert.equal(await viewed.getByRole("button", { name: "Reject" }).count(), 0);
    assert.equal(await viewed.getByRole("textbox", { name: "Note for the agent" }).count(), 0);
    assert.deepEqual(await axeViolations(asViewer.page), []);
    const pendingDelete = (await listed("pending")).find((a) => a.operation === "delete_node");
    assert.ok(pendingDelete);
    const refused = await asViewer.page.evaluate(
      async (url) => (await fetch(url, { method: "POST", headers: { "X-CMS-Studio": "1", "content-type": "application/json" }, body: "{}" })).status,
      `/admin/p/${project.slug}/approvals/${pendingDelete.id}/approve`,
    );
    assert.equal(refused, 403);
    assert.equal((await listed("pending")).find((a) => a.id === pendingDelete.id)?.status, "pending");
    assert.deepEqual(asViewer.problems, []);
  });
});
