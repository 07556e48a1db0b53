// Editing in the studio, in Chromium: every field format of the content model, a node reference
// found by its text, blocks added, moved and removed by keyboard, save, a conflict, validation
// errors at their fields, a reload keeping unsaved edits, publish seen on delivery, a viewer's
// read-only form, a change made elsewhere shown live; axe on each screen; the page's CSP never
// violated.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

const ODD_MARKDOWN = "Setext title\n============\n\n+ plus item\n+ another   \n\n\n\tindented with a tab\n__strong__ and *em*  \r\nend";

const MODEL = {
  strict: false,
  block_types: [
    { name: "hero", description: "A big heading", schema: { type: "object", properties: { heading: { type: "string", title: "Heading", maxLength: 80 } }, required: ["heading"] } },
    { name: "text", description: "Prose", schema: { type: "object", properties: { body: { type: "string", title: "Body text", format: "markdown" } } } },
  ],
  node_types: [
    {
      name: "page",
      description: "A page",
      fields: {
        type: "object",
        properties: {
          summary: { type: "string", title: "Summary", description: "Shown in lists", minLength: 3, maxLength: 160, translatable: true },
          notes: { type: "string", title: "Notes", format: "markdown" },
          intro: { type: "string", title: "Intro", format: "html" },
          link: { type: "string", title: "Link", format: "uri" },
          event_at: { type: "string", title: "Event time", format: "date-time" },
          accent: { type: "string", title: "Accent", format: "color" },
          kind: { type: "string", title: "Kind", enum: ["news", "guide", "faq", "story", "note"] },
          featured: { type: "boolean", title: "Featured" },
          rating: { type: "number", title: "Rating", minimum: 0, maximum: 5 },
          count: { type: "integer", title: "Count" },
          tags: { type: "array", title: "Tags", items: { type: "string" } },
          author: { type: "object", title: "Author", properties: { name: { type: "string", title: "Name" } } },
          related: { type: "string", title: "Related page", format: "node" },
        },
      },
      blocks: [
        { type: "hero", max: 1 },
        { type: "text", max: 10 },
      ],
    },
  ],
};

describe("editing in the studio", () => {
  let browser: Browser;
  let project: { id: string; slug: string };
  let editor: { email: string; password: string };
  before(async () => {
    browser = await launch();
    project = await newProject(MODEL);
    editor = await newPerson(project.id, "editor");
  });
  after(async () => {
    await browser.close();
  });

  async function openNode(id: string, as = editor, query = ""): Promise<{ page: Page; problems: string[]; context: BrowserContext }> {
    // A 24-hour clock and a fixed zone: typed times mean the same whatever the hour of the run.
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, locale: "en-GB", timezoneId: "UTC" });
    const { page, problems } = await openPage(context);
    await signIn(page, as.email, as.password, `/studio/p/${project.slug}/nodes/${id}${query}`);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    return { page, problems, context };
  }
  const save = async (page: Page): Promise<void> => {
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
  };

  test("every field format, saved through the one write path; axe on the editor", async () => {
    const other = await newNode(project.slug, { slug: "team", title: "Our team" });
    const node = await newNode(project.slug, { slug: "formats", title: "Formats", type: "page" });
    const { page, problems, context } = await openNode(node.id);
    assert.deepEqual(await axeViolations(page), []);
    await page.getByRole("textbox", { name: "Title" }).fill("Every format");
    await page.getByRole("textbox", { name: /^Summary/ }).fill("A short summary");
    assert.match((await page.getByText(/15 \/ 160/).textContent()) ?? "", /15 \/ 160/);
    await page.getByRole("textbox", { name: /^Link/ }).fill("https://example.com/a");
    // React Aria's checkbox input is visually hidden under its label: by keyboard, as a person would.
    await page.getByRole("checkbox", { name: "Featured" }).focus();
    await page.keyboard.press("Space");
    await page.getByRole("textbox", { name: /^Rating/ }).fill("4.5");
    await page.getByRole("textbox", { name: /^Count/ }).fill("3");
    await page.getByRole("textbox", { name: /^Name/ }).fill("Ada");
    await page.getByRole("textbox", { name: /^Accent/ }).fill("#1d4ed8");
    // enum (five options: a select)
    await page.getByRole("button", { name: /Kind/ }).click();
    await page.getByRole("option", { name: "guide" }).click();
    // array of strings
    const tags = page.getByRole("group", { name: /^Tags/ });
    await tags.getByRole("button", { name: "Add item" }).click();
    await tags.getByRole("textbox").last().fill("alpha");
    await tags.getByRole("button", { name: "Add item" }).click();
    await tags.getByRole("textbox").last().fill("beta");
    // node reference: a combobox searching by title
    const related = page.getByRole("combobox", { name: /^Related page/ });
    await related.fill("Our t");
    await page.getByRole("option", { name: /Our team/ }).click();
    // markdown in CodeMirror: the text as typed, kept as is
    const md = page.getByRole("textbox", { name: /^Notes/ });
    await md.click();
    // Enter in a list continues it (CodeMirror's markdown keymap): the marker is the editor's.
    await page.keyboard.type("# Heading\n\n* one\ntwo");
    // html in TipTap
    const html = page.getByRole("textbox", { name: /^Intro/ });
    await html.click();
    await page.keyboard.type("Hello world");
    // date-time: the segments of React Aria's date picker, by keyboard
    const when = page.getByRole("group", { name: /^Event time/ });
    await when.getByRole("spinbutton").first().click();
    await page.keyboard.type("15062027"); // en-GB: day, month, year
    await page.keyboard.type("0930");
    await save(page);
    const stored = await readNode(project.slug, node.id);
    assert.equal(stored.title, "Every format");
    const f = stored.fields;
    assert.equal(f.summary, "A short summary");
    assert.equal(f.link, "https://example.com/a");
    assert.equal(f.featured, true);
    assert.equal(f.rating, 4.5);
    assert.equal(f.count, 3);
    assert.deepEqual(f.author, { name: "Ada" });
    assert.equal(f.accent.toLowerCase(), "#1d4ed8");
    assert.equal(f.kind, "guide");
    assert.deepEqual(f.tags, ["alpha", "beta"]);
    assert.equal(f.related, other.id);
    assert.equal(f.notes, "# Heading\n\n* one\n* two");
    assert.match(f.intro, /<p>Hello world<\/p>/);
    assert.match(f.event_at, /^2027-06-15T09:30:00(\.000)?(Z|\+00:00)$/);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("node reference: a page found by a word of its text (the admin search), chosen by keyboard; axe with the list open", async () => {
    // "quillwort" is in the target's block text only; a title match still comes first.
    const target = await newNode(project.slug, { slug: "greenhouse", title: "Glass rooms", type: "page", blocks: [{ type: "text", data: { body: "We grow quillwort under glass." } }] });
    await newNode(project.slug, { slug: "quillwort-notes", title: "Quillwort notes" });
    const node = await newNode(project.slug, { slug: "picker", title: "Picker", type: "page" });
    const { page, problems, context } = await openNode(node.id);
    const related = page.getByRole("combobox", { name: /^Related page/ });
    await related.focus();
    await related.pressSequentially("quillwort");
    await page.getByRole("option", { name: "Glass rooms, greenhouse", exact: true }).waitFor();
    // Each named by its title and path, the title match first.
    assert.deepEqual(await page.getByRole("option").allTextContents(), ["Quillwort notes, quillwort-notes", "Glass rooms, greenhouse"]);
    // The open list and its box (React Aria hides the rest of the page from screen readers meanwhile).
    assert.deepEqual(await axeViolations(page, ["[role=combobox]", "[role=listbox]"]), []);
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    assert.equal(await related.inputValue(), "Glass rooms");
    await page.getByText(`Chosen: Glass rooms (id ${target.id})`).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await save(page);
    assert.equal((await readNode(project.slug, node.id)).fields.related, target.id);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("blocks: added, moved and removed by keyboard, ids kept; min and max respected", async () => {
    const node = await newNode(project.slug, {
      slug: "blocks",
      title: "Blocks",
      type: "page",
      blocks: [
        // Markdown an agent wrote, in a form an editor would normalise: it must come back byte for byte.
        { type: "text", data: { body: ODD_MARKDOWN } },
        { type: "text", data: { body: "second" } },
      ],
    });
    const { page, problems, context } = await openNode(node.id);
    const add = page.getByRole("button", { name: "Add block" });
    await add.focus();
    await page.keyboard.press("Enter");
    await page.getByRole("menuitem", { name: /hero/ }).waitFor();
    await page.keyboard.press("Enter"); // the first offered type: hero
    const hero = page.getByRole("group", { name: /^hero 1$|^A big heading 1$|^hero/ });
    await hero.getByRole("textbox", { name: /^Heading/ }).fill("Big news");
    // hero has max 1: not offered again
    await add.focus();
    await page.keyboard.press("Enter");
    assert.equal(await page.getByRole("menuitem", { name: /hero/ }).count(), 0);
    await page.keyboard.press("Escape");
    // Move the hero (third) up twice by keyboard
    for (let i = 0; i < 2; i++) {
      const up = page.getByRole("group", { name: /hero/ }).getByRole("button", { name: "Move up" });
      await up.focus();
      await page.keyboard.press("Enter");
    }
    // Remove the last text block ("second") by keyboard
    const groups = page.getByRole("group", { name: /^(text|Prose) \d+$/ });
    const last = groups.last();
    await last.getByRole("button", { name: "Remove block" }).focus();
    await page.keyboard.press("Enter");
    await save(page);
    const stored = await readNode(project.slug, node.id);
    assert.deepEqual(
      stored.blocks.map((b: { type: string; data: Record<string, unknown> }) => [b.type, b.data.heading ?? b.data.body]),
      [
        ["hero", "Big news"],
        ["text", ODD_MARKDOWN],
      ],
    );
    assert.equal(stored.blocks[1].id, node.blocks[0].id, "the kept block keeps its id");
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("validation errors are shown at their fields, focus on the first; nothing saved", async () => {
    const node = await newNode(project.slug, { slug: "invalid", title: "Invalid", type: "page" });
    const { page, context } = await openNode(node.id);
    await page.getByRole("textbox", { name: /^Summary/ }).fill("ab"); // minLength 3: the server's check
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: /problem/ })
      .waitFor();
    const summary = page.getByRole("textbox", { name: /^Summary/ });
    assert.equal(await summary.getAttribute("aria-invalid"), "true");
    const described = (await summary.getAttribute("aria-describedby")) ?? "";
    const texts = await Promise.all(described.split(/\s+/).map((id) => page.locator(`[id="${id}"]`).textContent()));
    assert.ok(
      texts.some((t) => /3|short|fewer|least/i.test(t ?? "")),
      `the error is described at the field: ${JSON.stringify(texts)}`,
    );
    // Focus moves to the first violation once it is on screen (a frame or two after the answer).
    await summary.evaluate(
      (el) =>
        new Promise<void>((resolve, reject) => {
          const until = performance.now() + 5000;
          const check = () => (el === document.activeElement ? resolve() : performance.now() > until ? reject(new Error("focus did not move to the field")) : requestAnimationFrame(check));
          check();
        }),
    );
    assert.equal((await readNode(project.slug, node.id)).revision, node.revision);
    assert.deepEqual(await axeViolations(page), []);
    await context.close();
  });

  test("a conflict: nothing overwritten silently; load theirs, or save mine over theirs on purpose", async () => {
    const node = await newNode(project.slug, { slug: "conflict", title: "Original" });
    const { page, context } = await openNode(node.id);
    await page.getByRole("textbox", { name: "Title" }).fill("Mine");
    const theirs = await api("PATCH", `/admin/p/${project.slug}/nodes/${node.id}`, { title: "Theirs" });
    assert.equal(theirs.status, 200);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const panel = page.getByRole("region", { name: "Conflict" });
    await panel.waitFor();
    assert.match((await panel.textContent()) ?? "", /conflict/i);
    assert.equal((await readNode(project.slug, node.id)).title, "Theirs");
    assert.deepEqual(await axeViolations(page), []);
    await panel.getByRole("button", { name: "Save mine over theirs" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
    assert.equal((await readNode(project.slug, node.id)).title, "Mine");
    // Again, and this time take theirs.
    await page.getByRole("textbox", { name: "Title" }).fill("Mine again");
    await api("PATCH", `/admin/p/${project.slug}/nodes/${node.id}`, { title: "Theirs again" });
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("region", { name: "Conflict" }).getByRole("button", { name: "Load theirs" }).click();
    // Theirs is read again from the server: the Title box shows it once that answer is in.
    await page.waitForFunction(() => [...document.querySelectorAll("input")].some((i) => i.value === "Theirs again"), undefined, { timeout: 10_000 });
    assert.equal(await page.getByRole("textbox", { name: "Title" }).inputValue(), "Theirs again");
    assert.equal((await readNode(project.slug, node.id)).title, "Theirs again");
    await context.close();
  });

  test("unsaved edits survive a reload and are offered back; publish is seen on delivery", async () => {
    const node = await newNode(project.slug, { slug: "reload", title: "Before reload" });
    const { page, context } = await openNode(node.id);
    await page.getByRole("textbox", { name: "Title" }).fill("Typed, not saved");
    await page.getByRole("status").filter({ hasText: "Unsaved changes" }).waitFor();
    // The draft is kept every 300 ms of quiet; reload as soon as it is there.
    await page.waitForFunction(() => Object.keys(localStorage).some((k) => k.startsWith("cms-studio:draft:")));
    page.on("dialog", (d) => void d.accept());
    await page.reload();
    await page.getByRole("region", { name: "Restored changes" }).waitFor();
    assert.equal(await page.getByRole("textbox", { name: "Title" }).inputValue(), "Typed, not saved");
    await save(page);
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    // Published: the editor offers Unpublish.
    await page.getByRole("button", { name: "Unpublish", exact: true }).waitFor();
    const live = await fetch(`${URL_BASE}/api/p/${project.slug}/nodes/by-path/reload`);
    assert.equal(live.status, 200);
    assert.equal((await live.json()).data.title, "Typed, not saved");
    await context.close();
  });

  test("a viewer sees the form read-only, with no Save", async () => {
    const viewer = await newPerson(project.id, "viewer");
    const node = await newNode(project.slug, { slug: "readonly", title: "Read only" });
    const { page, context } = await openNode(node.id, viewer);
    assert.equal(await page.getByRole("button", { name: "Save", exact: true }).count(), 0);
    assert.equal(await page.getByRole("button", { name: "Publish", exact: true }).count(), 0);
    const title = page.getByRole("textbox", { name: "Title" });
    assert.equal((await title.isEditable()) === false, true);
    assert.deepEqual(await axeViolations(page), []);
    await context.close();
  });

  test("a change made elsewhere shows within 2 s, and never discards unsaved edits", async () => {
    const node = await newNode(project.slug, { slug: "live", title: "Live", type: "page", fields: { summary: "Original" } });
    const { page, context } = await openNode(node.id);
    const t0 = Date.now();
    await api("PATCH", `/admin/p/${project.slug}/nodes/${node.id}`, { title: "Changed by an agent" });
    await page.waitForFunction(() => (document.querySelector("h1")?.textContent ?? "").includes("Changed by an agent"), undefined, { timeout: 2000 });
    assert.ok(Date.now() - t0 < 2000);
    assert.equal(await page.getByRole("textbox", { name: "Title" }).inputValue(), "Changed by an agent");
    await page.getByRole("textbox", { name: /^Summary/ }).fill("My unsaved summary");
    await api("PATCH", `/admin/p/${project.slug}/nodes/${node.id}`, { title: "Changed again" });
    await page.getByRole("region", { name: "Page changed" }).waitFor({ timeout: 2000 });
    assert.equal(await page.getByRole("textbox", { name: /^Summary/ }).inputValue(), "My unsaved summary");
    await context.close();
  });
});
