// Finding a page in the studio, in Chromium: the projects a person may reach, the content tree as
// an ARIA tree (children loaded when opened, status shown, filter by title and text, keyboard),
// `New page` offering only the types the parent allows, deep links surviving a reload. axe on each
// screen.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

const MODEL = {
  node_types: [
    { name: "section", description: "A section of the site", children: ["article", "faq"] },
    { name: "article", description: "An article", children: [] },
    { name: "faq", description: "Questions and answers", children: [] },
    { name: "landing", description: "A landing page" },
  ],
};

describe("finding a page", () => {
  let browser: Browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser.close();
  });

  test("the tree: items by title with their status, children loaded when opened, filter, keyboard; New page offers the allowed types", async () => {
    const p = await newProject(MODEL);
    const hidden = await newProject(); // a project this person has no role in
    const person = await newPerson(p.id, "editor");
    const docs = await newNode(p.slug, { slug: "docs", title: "Documentation", type: "section" });
    await newNode(p.slug, { slug: "guide", title: "Getting started", type: "article", parent_id: docs.id, blocks: [{ type: "text", data: { body: "Feeding the quokka." } }] });
    const live = await newNode(p.slug, { slug: "welcome", title: "Welcome", type: "landing" });
    assert.equal((await api("POST", `/admin/p/${p.slug}/nodes/${live.id}/publish`)).status, 200);
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, person.email, person.password);
    // The projects this person may reach, and no other.
    await page.getByRole("link", { name: new RegExp(p.slug) }).waitFor();
    assert.equal(await page.getByRole("link", { name: new RegExp(hidden.slug) }).count(), 0);
    await page.getByRole("link", { name: new RegExp(p.slug) }).click();
    const tree = page.getByRole("tree");
    await tree.getByRole("treeitem", { name: /Documentation/ }).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    // Status of each item.
    assert.match((await tree.getByRole("treeitem", { name: /Welcome/ }).textContent()) ?? "", /published/i);
    assert.match((await tree.getByRole("treeitem", { name: /Documentation/ }).textContent()) ?? "", /draft/i);
    // Children are not there until their parent is opened; the keyboard opens it.
    assert.equal(await tree.getByRole("treeitem", { name: /Getting started/ }).count(), 0);
    const section = tree.getByRole("treeitem", { name: /Documentation/ });
    await section.focus();
    await page.keyboard.press("ArrowRight");
    await tree.getByRole("treeitem", { name: /Getting started/ }).waitFor();
    assert.equal(await section.getAttribute("aria-expanded"), "true");
    await page.keyboard.press("ArrowDown");
    assert.equal(await tree.getByRole("treeitem", { name: /Getting started/ }).evaluate((el) => el === document.activeElement || el.contains(document.activeElement)), true);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/nodes\//);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    assert.equal(await page.getByRole("textbox", { name: "Title" }).inputValue(), "Getting started");
    // Filter by title.
    await page.getByRole("searchbox", { name: /Filter by title/ }).fill("welc");
    await tree.getByRole("treeitem", { name: /Welcome/ }).waitFor();
    await page.waitForFunction(() => !document.body.textContent?.includes("Documentation") || document.querySelectorAll('[role="treeitem"]').length === 1);
    assert.equal(await tree.getByRole("treeitem", { name: /Documentation/ }).count(), 0);
    // …and by text: a word only a page's block text holds (the admin search).
    await page.getByRole("searchbox", { name: /Filter by title/ }).fill("quokka");
    await tree.getByRole("treeitem", { name: /Getting started/ }).waitFor();
    assert.equal(await tree.getByRole("treeitem").count(), 1);
    assert.deepEqual(await axeViolations(page), []);
    await page.getByRole("searchbox", { name: /Filter by title/ }).fill("");
    // New page under the section: only the types a section allows are offered.
    // Open the section by keyboard (a click in the middle of an open item lands on its children).
    await tree.getByRole("treeitem", { name: /Documentation/ }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`/nodes/${docs.id}`));
    await page.getByRole("button", { name: "New page" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await dialog.getByRole("button", { name: /Type/ }).click();
    const offered = (await page.getByRole("option").allTextContents()).map((t) => t.trim());
    assert.deepEqual(offered.sort(), ["article", "faq"]);
    await page.getByRole("option", { name: "article" }).click();
    await dialog.getByRole("textbox", { name: "Title" }).fill("Second article");
    await dialog.getByRole("button", { name: /Create/ }).click();
    await page.waitForURL((u) => /\/nodes\/[0-9a-f-]{36}/.test(u.pathname) && !u.pathname.includes(docs.id));
    const id = /\/nodes\/([0-9a-f-]{36})/.exec(page.url())?.[1] ?? "";
    const created = await readNode(p.slug, id);
    assert.equal(created.parent_id, docs.id);
    assert.equal(created.type, "article");
    assert.equal(created.title, "Second article");
    // A deep link with a locale survives a reload.
    await page.goto(`${URL_BASE}/studio/p/${p.slug}/nodes/${id}?locale=fr`);
    await page.reload();
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    assert.match(page.url(), /locale=fr/);
    assert.match((await page.getByRole("button", { name: /Locale/ }).textContent()) ?? "", /fr/i);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
