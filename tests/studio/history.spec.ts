// History, trash and activity in the studio, in Chromium: a page changed by a person in the studio
// and by an agent (an MCP token, over MCP) shows both in its History, told apart; the agent's
// revision shows the words it changed; Restore brings the earlier title back as a new revision;
// a page deleted over the API is listed in the Trash with who deleted it and comes back; the
// activity filtered by the agent, by page and by time shows what the API's filters answer. Every
// action by keyboard; axe on each screen and open dialog; the page's CSP never violated.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

const AGENT = "newsroom agent";
// fixed wait: the activity's time filter needs writes on both sides of a whole-second mark (time itself must pass)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A time as an <input type="datetime-local" step="1"> value, in this machine's zone (the browser's too). */
function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  // Chromium writes a whole minute without its seconds ("…T23:04"), and Playwright's fill checks the value it reads back: a mark on
  // the minute given as "…T23:04:00" failed as malformed (once in 60 runs).
  const seconds = d.getSeconds() === 0 ? "" : `:${p(d.getSeconds())}`;
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}${seconds}`;
}

/** A control pressed from the keyboard: focused, then Enter. */
async function press(control: Locator): Promise<void> {
  await control.focus();
  await control.press("Enter");
}

describe("history, trash and activity", () => {
  let browser: Browser;
  let project: { id: string; slug: string };
  let editor: { id: string; email: string; password: string };
  let token: { id: string; token: string };
  let agent: Client;
  let story: { id: string };
  const contexts: BrowserContext[] = [];

  /** A tool called over MCP with the agent's token; its JSON answer. */
  async function callTool(name: string, args: Record<string, unknown>): Promise<any> {
    const res = (await agent.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> };
    const text = res.content.find((c) => c.type === "text")?.text ?? "";
    if (res.isError) throw new Error(`${name}: ${text}`);
    return JSON.parse(text);
  }

  async function open(path: string, as = editor): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    contexts.push(context);
    const { page, problems } = await openPage(context);
    await signIn(page, as.email, as.password, path);
    return { page, problems };
  }

  before(async () => {
    browser = await launch();
    project = await newProject();
    editor = await newPerson(project.id, "editor");
    const created = await api("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { name: AGENT });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    token = { id: created.json.data.id, token: created.json.data.token };
    agent = new Client({ name: "history-spec", version: "1.0.0" });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${URL_BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token.token}` } } }));
  });
  after(async () => {
    await agent?.close().catch(() => {});
    for (const c of contexts) await c.close().catch(() => {});
    await browser.close();
  });

  test("History: a person's and an agent's revisions told apart, the agent's words changed, Restore by keyboard", async () => {
    story = await newNode(project.slug, { slug: "story", title: "Morning news today" });
    const { page, problems } = await open(`/studio/p/${project.slug}/nodes/${story.id}`);
    const title = page.getByRole("textbox", { name: "Title" });
    await title.waitFor();
    // The person edits in the studio and saves by keyboard (Ctrl+S): revision 2.
    await title.fill("Morning news for today");
    await title.press("Control+s");
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
    assert.equal((await readNode(project.slug, story.id)).revision, 2);
    // The agent edits over MCP: revision 3, which the open editor loads live.
    await callTool("update_node", { node_id: story.id, title: "Evening news for tomorrow" });
    await page.waitForFunction(() => (document.querySelector('input[data-pointer="/title"]') as HTMLInputElement | null)?.value === "Evening news for tomorrow");

    // History, opened by keyboard from the page's toolbar.
    await press(page.getByRole("toolbar", { name: "Page actions" }).getByRole("button", { name: "History", exact: true }));
    const dialog = page.getByRole("dialog", { name: /History of/ });
    await dialog.getByRole("button", { name: "Revision 3", exact: true }).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    const row = (n: number) => dialog.locator("tbody tr").filter({ has: page.getByRole("button", { name: `Revision ${n}`, exact: true }) });
    const agentRow = (await row(3).textContent()) ?? "";
    const personRow = (await row(2).textContent()) ?? "";
    assert.match(agentRow, new RegExp(`${AGENT}\\s*agent \\(MCP token\\)`));
    assert.match(agentRow, /update_node/);
    assert.match(personRow, new RegExp(`${editor.email.replace(/[.]/g, "\\.")}\\s*person`));
    assert.doesNotMatch(personRow, /agent/);
    assert.match((await row(1).textContent()) ?? "", /admin key/);
    // The time carries its zone (a <time> with the ISO instant).
    assert.match((await row(3).locator("time").getAttribute("datetime")) ?? "", /^\d{4}-\d\d-\d\dT/);

    // The agent's revision: the words it changed, marked as text.
    await press(dialog.getByRole("button", { name: "Revision 3", exact: true }));
    await dialog.getByRole("heading", { name: "Revision 3: changes against revision 2" }).waitFor();
    const titleRow = dialog.locator("table.st-word-diff tbody tr").filter({ hasText: "/title" });
    assert.deepEqual(await titleRow.locator("del").allTextContents(), ["Morning", "today"]);
    assert.deepEqual(await titleRow.locator("ins").allTextContents(), ["Evening", "tomorrow"]);
    assert.equal(await titleRow.locator("td").nth(0).textContent(), "Morning news for today");
    assert.equal(await titleRow.locator("td").nth(1).textContent(), "Evening news for tomorrow");
    assert.deepEqual(await axeViolations(page), []);
    // The current revision cannot be restored over itself.
    assert.equal(await dialog.getByRole("button", { name: "Restore this revision" }).isDisabled(), true);

    // The person's revision restored by keyboard: a new revision 4, the editor reloads.
    await press(dialog.getByRole("button", { name: "Revision 2", exact: true }));
    await dialog.getByRole("heading", { name: "Revision 2: changes against revision 1" }).waitFor();
    await press(dialog.getByRole("button", { name: "Restore this revision" }));
    await dialog.waitFor({ state: "detached" });
    await page.waitForFunction(() => (document.querySelector('input[data-pointer="/title"]') as HTMLInputElement | null)?.value === "Morning news for today");
    const node = await readNode(project.slug, story.id);
    assert.equal(node.title, "Morning news for today");
    assert.equal(node.revision, 4);
    const revs = await api("GET", `/admin/p/${project.slug}/nodes/${story.id}/revisions?per_page=1`);
    assert.equal(revs.json.data[0].operation, "restore_revision");
    assert.equal(revs.json.data[0].actor.kind, "user");
    assert.equal(revs.json.data[0].actor.user.email, editor.email);
    // Reopened, the history lists the restore by the person.
    await press(page.getByRole("button", { name: "History", exact: true }));
    await row(4).waitFor();
    assert.match((await row(4).textContent()) ?? "", /restore_revision/);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(problems, []);
  });

  test("History for a viewer: the revisions and diffs, no Restore", async () => {
    const viewer = await newPerson(project.id, "viewer");
    const { page, problems } = await open(`/studio/p/${project.slug}/nodes/${story.id}`, viewer);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    await press(page.getByRole("button", { name: "History", exact: true }));
    const dialog = page.getByRole("dialog", { name: /History of/ });
    await press(dialog.getByRole("button", { name: "Revision 3", exact: true }));
    await dialog.locator("table.st-word-diff").waitFor();
    assert.equal(await dialog.getByRole("button", { name: "Restore this revision" }).count(), 0);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
  });

  test("Trash: a page deleted over the API, who deleted it, Restore by keyboard brings it back", async () => {
    const doomed = await newNode(project.slug, { slug: "old-offers", title: "Old offers" });
    await newNode(project.slug, { slug: "spring", title: "Spring offer", parent_id: doomed.id });
    assert.equal((await api("DELETE", `/admin/p/${project.slug}/nodes/${doomed.id}`)).status, 204);
    assert.equal((await api("GET", `/admin/p/${project.slug}/nodes/${doomed.id}`)).status, 404);
    const listed = (await api("GET", `/admin/p/${project.slug}/trash`)).json.data as Array<{ node_id: string; actor: { kind: string; name: string | null } }>;
    const deleter = listed.find((t) => t.node_id === doomed.id)?.actor;
    assert.equal(deleter?.kind, "admin_key");

    const { page, problems } = await open(`/studio/p/${project.slug}/trash`);
    const table = page.getByRole("table", { name: "Deleted pages, newest first" });
    const row = table.getByRole("row", { name: /^Old offers/ });
    await row.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    const text = (await row.textContent()) ?? "";
    assert.match(text, /\/old-offers/);
    assert.match(text, /admin key/);
    if (deleter?.name) assert.ok(text.includes(deleter.name), `${text} names ${deleter.name}`);
    assert.equal(await row.locator("time").count(), 1);
    // The child deleted with it points at its parent instead of offering a restore of its own.
    const child = table.getByRole("row", { name: /^Spring offer/ });
    assert.match((await child.textContent()) ?? "", /Deleted with “Old offers”/);
    assert.equal(await child.getByRole("button").count(), 0);

    await press(row.getByRole("button", { name: "Restore “Old offers”" }));
    await page.getByRole("status").filter({ hasText: "Restored “Old offers” and 1 page below it" }).waitFor();
    await row.waitFor({ state: "detached" });
    assert.equal((await api("GET", `/admin/p/${project.slug}/nodes/${doomed.id}`)).status, 200);
    assert.equal((await readNode(project.slug, doomed.id)).title, "Old offers");
    assert.equal((await api("GET", `/admin/p/${project.slug}/trash`)).json.data.length, 0);
    assert.deepEqual(await axeViolations(page), []);
    // Back in the tree, opened from the notice's link by keyboard.
    await press(page.getByRole("link", { name: "Open “Old offers”" }));
    await page
      .getByRole("tree")
      .getByRole("treeitem", { name: /Old offers/ })
      .waitFor();
    assert.equal(await page.getByRole("textbox", { name: "Title" }).inputValue(), "Old offers");
    assert.deepEqual(problems, []);
  });

  test("Activity: filtered by the agent, by page and by time, as the API's filters answer", async () => {
    const other = await newNode(project.slug, { slug: "weather", title: "Weather report" });
    await callTool("update_node", { node_id: other.id, title: "Weather report, sunny" });
    // A moment after everything so far, then one more write by the agent.
    await sleep(1100);
    const mark = new Date(Math.ceil(Date.now() / 1000) * 1000);
    await sleep(mark.getTime() - Date.now() + 50);
    await callTool("update_node", { node_id: other.id, title: "Weather report, rain later" });
    const count = async (query: string) => (await api("GET", `/admin/p/${project.slug}/activity?per_page=100&${query}`)).json.total as number;

    const { page, problems } = await open(`/studio/p/${project.slug}/activity`);
    const table = page.getByRole("table", { name: "The project’s activity, newest first" });
    const rows = table.locator("tbody tr");
    await rows.first().waitFor();
    assert.deepEqual(await axeViolations(page), []);
    const all = await count("");
    await page
      .getByRole("status")
      .filter({ hasText: `${all} of ${all} entries shown` })
      .waitFor();
    // Person, agent and key are all there, each named with its kind.
    const everything = (await table.textContent()) ?? "";
    assert.match(everything, new RegExp(`${AGENT}\\s*agent \\(MCP token\\)`));
    assert.ok(everything.includes(editor.email));

    // Who: the agent, chosen from the keyboard.
    const who = page.getByRole("button", { name: /Who/ });
    await press(who);
    const option = page.getByRole("option", { name: `${AGENT} (agent (MCP token))` });
    await option.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await option.focus();
    await page.keyboard.press("Enter");
    const byAgent = await count(`actor_kind=mcp_token&actor_id=${token.id}`);
    assert.equal(byAgent, 3);
    await page
      .getByRole("status")
      .filter({ hasText: `${byAgent} of ${byAgent} entries shown` })
      .waitFor();
    for (const text of await rows.allTextContents()) assert.match(text, new RegExp(`${AGENT}\\s*agent \\(MCP token\\)`));
    // Target links to the page.
    const link = rows.first().getByRole("link", { name: "Weather report, rain later" });
    assert.equal(await link.getAttribute("href"), `/studio/p/${project.slug}/nodes/${other.id}`);

    // The page: typed into the Page box, chosen by keyboard (the agent filter still applies).
    const pageBox = page.getByRole("combobox", { name: "Page" });
    await pageBox.focus();
    await pageBox.pressSequentially("Morning");
    await page.getByRole("option", { name: /Morning news for today/ }).waitFor();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    const agentOnStory = await count(`actor_kind=mcp_token&actor_id=${token.id}&node_id=${story.id}`);
    assert.equal(agentOnStory, 1);
    await page
      .getByRole("status")
      .filter({ hasText: `${agentOnStory} of ${agentOnStory} entries shown` })
      .waitFor();
    assert.match((await rows.first().textContent()) ?? "", /Morning news for today/);

    // Clear, then the page alone: all of its writes, by whoever.
    await press(page.getByRole("button", { name: "Clear filters" }));
    await page
      .getByRole("status")
      .filter({ hasText: `${all} of ${all} entries shown` })
      .waitFor();
    await pageBox.focus();
    await pageBox.pressSequentially("Morning");
    await page.getByRole("option", { name: /Morning news for today/ }).waitFor();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    const onStory = await count(`node_id=${story.id}`);
    assert.equal(onStory, 4);
    await page
      .getByRole("status")
      .filter({ hasText: `${onStory} of ${onStory} entries shown` })
      .waitFor();
    for (const r of await rows.all()) assert.equal(await r.getByRole("link", { name: "Morning news for today" }).count(), 1);

    // Time: from the mark, only the last write; to the mark, everything before it.
    await press(page.getByRole("button", { name: "Clear filters" }));
    await page
      .getByRole("status")
      .filter({ hasText: `${all} of ${all} entries shown` })
      .waitFor();
    await page.getByLabel("From", { exact: true }).fill(localInput(mark));
    const since = await count(`from=${encodeURIComponent(mark.toISOString())}`);
    assert.equal(since, 1);
    await page
      .getByRole("status")
      .filter({ hasText: `${since} of ${since} entries shown` })
      .waitFor();
    assert.match((await rows.first().textContent()) ?? "", /Weather report, rain later/);
    await page.getByLabel("From", { exact: true }).fill("");
    await page.getByLabel("To", { exact: true }).fill(localInput(mark));
    const until = await count(`to=${encodeURIComponent(mark.toISOString())}`);
    assert.equal(until, all - 1);
    await page
      .getByRole("status")
      .filter({ hasText: `${until} of ${until} entries shown` })
      .waitFor();
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
  });

  test("Undo these changes: an agent's pages brought back from its activity, a page a person changed since left as it is", async () => {
    const created = await api("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { name: "undo agent", scopes: ["content:read", "content:write"] });
    const rogue = new Client({ name: "undo-spec", version: "1.0.0" });
    await rogue.connect(new StreamableHTTPClientTransport(new URL(`${URL_BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${created.json.data.token}` } } }));
    const one = await newNode(project.slug, { slug: "prices", title: "Prices" });
    const two = await newNode(project.slug, { slug: "contact", title: "Contact" });
    for (const [id, title] of [
      [one.id, "Prices, all doubled"],
      [two.id, "Contact, wrong number"],
    ])
      await rogue.callTool({ name: "update_node", arguments: { node_id: id, title } });
    await rogue.close();
    // A person fixes the contact page by hand after the agent: the undo must leave it.
    assert.equal((await api("PATCH", `/admin/p/${project.slug}/nodes/${two.id}`, { title: "Contact, fixed by hand" })).status, 200);

    const { page, problems } = await open(`/studio/p/${project.slug}/activity`);
    await press(page.getByRole("button", { name: /Who/ }));
    const option = page.getByRole("option", { name: "undo agent (agent (MCP token))" });
    await option.waitFor();
    await option.focus();
    await page.keyboard.press("Enter");
    await press(page.getByRole("button", { name: "Undo these changes" }));
    const dialog = page.getByRole("dialog", { name: "Undo undo agent (agent (MCP token))'s changes" });
    await dialog.getByText("Would be brought back").waitFor();
    assert.match((await dialog.textContent()) ?? "", /Prices, all doubled \(to revision 1\)/);
    assert.match((await dialog.textContent()) ?? "", /Contact, fixed by hand: revision 3/);
    assert.deepEqual(await axeViolations(page), []);
    assert.equal((await readNode(project.slug, one.id)).title, "Prices, all doubled", "the dry run wrote nothing");
    await press(dialog.getByRole("button", { name: "Undo", exact: true }));
    await dialog.getByText("Brought back", { exact: true }).waitFor();
    assert.equal((await readNode(project.slug, one.id)).title, "Prices");
    assert.equal((await readNode(project.slug, two.id)).title, "Contact, fixed by hand");
    assert.deepEqual(problems, []);
  });
});
