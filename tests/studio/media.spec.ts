// The media library in Chromium: three files uploaded at once through the file input and three
// dropped on the grid at once (one refused each time, the others unaffected), the grid virtualised
// and paged as it scrolls (tests/studio/media-scale.spec.ts: 10,000 items),
// an item's alt text in two locales, its focal point by keyboard and by pointer, an AI alt draft
// accepted, a media field filled through Choose media, saved, published and read on delivery, and
// delete refused while referenced, then forced; axe on every screen and dialog, the CSP never violated.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, readNode, signIn, URL_BASE } from "./harness.ts";

const MODEL = {
  strict: false,
  block_types: [],
  node_types: [{ name: "article", description: "An article", fields: { type: "object", properties: { hero: { type: "string", title: "Hero image", format: "media" } } }, blocks: null }],
};

const DESCRIPTION = "A red square on a white background";

/** A solid-colour image of the given size and format. */
const image = (color: string, format: "png" | "jpeg", width = 64, height = 48): Promise<Buffer> =>
  sharp({ create: { width, height, channels: 3, background: color } })
    [format]()
    .toBuffer();

/** An OpenAI-compatible stand-in that describes any image with DESCRIPTION (and "translates" it unchanged). */
async function startDescriber(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: "vision-test",
          choices: [{ index: 0, message: { role: "assistant", content: DESCRIPTION }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** An upload through the admin API (the root key), for setting up. */
async function uploadApi(slug: string, name: string, bytes: Buffer, type: string): Promise<any> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)], { type }), name);
  const res = await fetch(`${URL_BASE}/admin/p/${slug}/media`, { method: "POST", headers: { authorization: `Bearer ${process.env.STUDIO_ADMIN_KEY}` }, body: form });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.data;
}

const listApi = async (slug: string, query = ""): Promise<{ data: any[]; total: number }> => (await api("GET", `/admin/p/${slug}/media?per_page=100${query}`)).json;
const mediaApi = async (slug: string, id: string): Promise<any> => (await api("GET", `/admin/p/${slug}/media/${id}`)).json?.data;

/** Presses a control by keyboard: focus, then Enter. */
async function press(page: Page, locator: ReturnType<Page["getByRole"]>, key = "Enter"): Promise<void> {
  await locator.focus();
  await page.keyboard.press(key);
}

describe("the media library", () => {
  let browser: Browser;
  let project: { id: string; slug: string };
  let editor: { email: string; password: string };
  let describer: { baseUrl: string; close: () => Promise<void> };
  before(async () => {
    browser = await launch();
    describer = await startDescriber();
    project = await newProject(MODEL);
    editor = await newPerson(project.id, "editor");
    const provider = await api("POST", `/admin/p/${project.slug}/ai/providers`, {
      name: "Loopback",
      kind: "openai",
      base_url: describer.baseUrl,
      api_key: "sk-test-key",
      model: "vision-test",
      is_default: true,
    });
    assert.equal(provider.status, 201, JSON.stringify(provider.json));
  });
  after(async () => {
    await browser.close();
    await describer.close();
  });

  async function open(path: string, as = editor): Promise<{ page: Page; problems: string[]; context: BrowserContext }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, as.email, as.password, path);
    return { page, problems, context };
  }
  const openLibrary = async (as = editor) => {
    const opened = await open(`/studio/p/${project.slug}/media`, as);
    await opened.page.getByRole("heading", { name: "Media", level: 1 }).waitFor();
    await opened.page
      .getByRole("status")
      .filter({ hasText: /\d+ files?/ })
      .waitFor();
    return opened;
  };
  const openItem = async (page: Page, name: string) => {
    const row = page.getByRole("grid", { name: "Media library" }).getByRole("row", { name: new RegExp(name.replace(".", "\\.")) });
    await press(page, row);
    const dialog = page.getByRole("dialog", { name });
    await dialog.waitFor();
    return dialog;
  };

  test("three files at once through Upload: two stored, the refused one shows its error, the others unaffected; and by keyboard", async () => {
    const { page, problems, context } = await openLibrary();
    assert.deepEqual(await axeViolations(page), []);
    await page.getByLabel("Upload", { exact: true }).setInputFiles([
      { name: "red.png", mimeType: "image/png", buffer: await image("#d22", "png") },
      { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("not an image, only words\n".repeat(20)) },
      { name: "blue.jpg", mimeType: "image/jpeg", buffer: await image("#22d", "jpeg", 80, 60) },
    ]);
    const uploads = page.getByRole("region", { name: "Uploads" });
    for (const name of ["red.png", "blue.jpg"]) await uploads.getByRole("listitem", { name }).getByText("Uploaded 100%").waitFor();
    const refused = uploads.getByRole("listitem", { name: "notes.txt" });
    await refused
      .getByRole("alert")
      .filter({ hasText: /Unsupported file type/ })
      .waitFor();
    assert.equal(await uploads.getByRole("alert").count(), 1, "only the refused file shows an error");
    // Each upload its own progress bar.
    assert.equal(await uploads.getByRole("progressbar").count(), 3);
    const listed = await listApi(project.slug);
    assert.equal(listed.total, 2);
    assert.deepEqual(listed.data.map((m) => m.filename).sort(), ["blue.jpg", "red.png"]);
    const grid = page.getByRole("grid", { name: "Media library" });
    await grid.getByRole("row", { name: /blue\.jpg/ }).waitFor();
    assert.equal(await grid.getByRole("row").count(), 2);
    assert.deepEqual(await axeViolations(page), []);

    // By keyboard: Tab reaches the file input, Space opens the chooser.
    await page.getByRole("searchbox", { name: "Search media" }).focus();
    const chooser = page.waitForEvent("filechooser");
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab");
      if (await page.getByLabel("Upload", { exact: true }).evaluate((el) => el === document.activeElement)) break;
    }
    assert.equal(await page.getByLabel("Upload", { exact: true }).evaluate((el) => el === document.activeElement), true, "Upload is reached by Tab");
    await page.keyboard.press("Space");
    await (await chooser).setFiles([{ name: "green.png", mimeType: "image/png", buffer: await image("#2a2", "png") }]);
    await uploads.getByRole("listitem", { name: "green.png" }).getByText("Uploaded 100%").waitFor();

    // Search by name and the type filter.
    await page.getByRole("searchbox", { name: "Search media" }).fill("blue");
    await page
      .getByRole("status")
      .filter({ hasText: /^1 file matching/ })
      .waitFor();
    assert.equal(await grid.getByRole("row").count(), 1);
    await page.getByRole("searchbox", { name: "Search media" }).fill("");
    await page.getByRole("button", { name: /Type/ }).click();
    await page.getByRole("option", { name: "PDF" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^0 files$/ })
      .waitFor();
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("three files dropped on the grid at once: each its own progress, the refused one its own error, the others stored", async () => {
    const dropped = await newProject(MODEL);
    const member = await newPerson(dropped.id, "editor");
    const { page, problems, context } = await open(`/studio/p/${dropped.slug}/media`, member);
    await page
      .getByRole("status")
      .filter({ hasText: /^0 files$/ })
      .waitFor();
    // Three files on disk, dropped as the browser's own drag machinery drops files from the
    // desktop (the DevTools protocol's Input.dispatchDragEvent: dragEnter, dragOver, drop, at the
    // grid's centre), so the drop carries real file entries.
    const dir = mkdtempSync(join(tmpdir(), "studio-drop-"));
    const files: Array<[string, Buffer]> = [
      ["drop-red.png", await image("#d22", "png")],
      ["drop-notes.txt", Buffer.from("words, not an image\n".repeat(10))],
      ["drop-blue.jpg", await image("#22d", "jpeg", 80, 60)],
    ];
    for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
    const box = await page.locator(".media-dropzone").boundingBox();
    assert.ok(box);
    const cdp = await context.newCDPSession(page);
    const data = { items: [], files: files.map(([name]) => join(dir, name)), dragOperationsMask: 1 };
    for (const type of ["dragEnter", "dragOver", "drop"]) await cdp.send("Input.dispatchDragEvent", { type: type as "drop", x: box.x + box.width / 2, y: box.y + box.height / 2, data });
    const uploads = page.getByRole("region", { name: "Uploads" });
    for (const name of ["drop-red.png", "drop-blue.jpg"]) await uploads.getByRole("listitem", { name }).getByText("Uploaded 100%").waitFor();
    const refused = uploads.getByRole("listitem", { name: "drop-notes.txt" });
    await refused
      .getByRole("alert")
      .filter({ hasText: /Unsupported file type/ })
      .waitFor();
    assert.equal(await refused.getByRole("progressbar").getAttribute("aria-valuetext"), "Failed");
    assert.equal(await uploads.getByRole("alert").count(), 1, "only the refused file shows an error");
    assert.equal(await uploads.getByRole("progressbar").count(), 3, "each file its own progress");
    const listed = await listApi(dropped.slug);
    assert.deepEqual(listed.data.map((m) => m.filename).sort(), ["drop-blue.jpg", "drop-red.png"]);
    const grid = page.getByRole("grid", { name: "Media library" });
    await grid.getByRole("row", { name: /drop-blue\.jpg/ }).waitFor();
    await grid.getByRole("row", { name: /drop-red\.png/ }).waitFor();
    await page
      .getByRole("status")
      .filter({ hasText: /^2 files$/ })
      .waitFor();
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("an item's panel: alt text in two locales, focal point by keyboard and pointer with live crops, an AI draft accepted", async () => {
    const { page, problems, context } = await openLibrary();
    const red = (await listApi(project.slug, "&q=red.png")).data[0];
    const dialog = await openItem(page, "red.png");
    await dialog.getByText("64 × 48 pixels").waitFor();
    assert.deepEqual(await axeViolations(page), []);

    await dialog.getByRole("textbox", { name: /^Alt text \(en\)/ }).fill("A red square");
    await dialog.getByRole("textbox", { name: /^Alt text \(fr\)/ }).fill("Un carré rouge");
    await press(page, dialog.getByRole("button", { name: "Save alt text" }));
    await dialog.getByRole("status").filter({ hasText: "Alt text saved" }).waitFor();
    assert.deepEqual((await mediaApi(project.slug, red.id)).alt, { en: "A red square", fr: "Un carré rouge" });

    // Focal point by keyboard: 0.5 → 0.6 across, 0.5 → 0.3 down.
    const x = dialog.getByRole("slider", { name: "Focal point X" });
    await x.focus();
    for (let i = 0; i < 10; i++) await page.keyboard.press("ArrowRight");
    const y = dialog.getByRole("slider", { name: "Focal point Y" });
    await y.focus();
    for (let i = 0; i < 20; i++) await page.keyboard.press("ArrowLeft");
    // The crops follow at once, before anything is saved.
    const square = dialog.getByRole("figure").filter({ hasText: "Square crop" }).locator("img");
    assert.equal(await square.evaluate((el) => (el as HTMLImageElement).style.objectPosition), "60% 30%");
    await dialog.getByRole("status").filter({ hasText: "Focal point saved" }).waitFor();
    await page.waitForFunction(
      async ([slug, id]) => {
        const r = await fetch(`/admin/p/${slug}/media/${id}`, { headers: { "X-CMS-Studio": "1" }, credentials: "same-origin" });
        const fp = (await r.json()).data.focal_point;
        return fp && fp.x === 0.6 && fp.y === 0.3;
      },
      [project.slug, red.id],
    );
    assert.deepEqual((await mediaApi(project.slug, red.id)).focal_point, { x: 0.6, y: 0.3 });

    // By pointer: a click on the preview at a quarter across, three quarters down.
    const preview = dialog.locator(".media-preview-img");
    const pbox = await preview.boundingBox();
    assert.ok(pbox);
    await preview.click({ position: { x: pbox.width * 0.25, y: pbox.height * 0.75 } });
    assert.match(await square.evaluate((el) => (el as HTMLImageElement).style.objectPosition), /^2[45]% 7[45]%$/);
    await page.waitForFunction(
      async ([slug, id]) => {
        const r = await fetch(`/admin/p/${slug}/media/${id}`, { headers: { "X-CMS-Studio": "1" }, credentials: "same-origin" });
        const fp = (await r.json()).data.focal_point;
        return fp && Math.abs(fp.x - 0.25) <= 0.02 && Math.abs(fp.y - 0.75) <= 0.02;
      },
      [project.slug, red.id],
    );

    // AI alt text: a draft shown for review, accepted into alt.
    await press(page, dialog.getByRole("button", { name: "Describe with AI" }));
    const draft = dialog.getByRole("group", { name: "AI draft (en)" });
    await draft.getByText(DESCRIPTION).waitFor();
    assert.equal((await mediaApi(project.slug, red.id)).alt.en, "A red square", "a draft is not alt text until accepted");
    assert.deepEqual(await axeViolations(page), []);
    await press(page, draft.getByRole("button", { name: "Accept" }));
    await page.waitForFunction(
      ([name, text]) => [...document.querySelectorAll("label")].some((l) => l.textContent?.startsWith(name as string) && (l.control as HTMLInputElement | null)?.value === text),
      ["Alt text (en)", DESCRIPTION] as const,
    );
    const stored = await mediaApi(project.slug, red.id);
    assert.equal(stored.alt.en, DESCRIPTION);
    assert.equal(stored.alt.fr, "Un carré rouge");
    await press(page, dialog.getByRole("button", { name: "Close" }));
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a media field: Choose media in the editor, save, publish, read on delivery; Remove", async () => {
    const blue = (await listApi(project.slug, "&q=blue")).data[0] ?? (await uploadApi(project.slug, "blue.jpg", await image("#22d", "jpeg", 80, 60), "image/jpeg"));
    assert.equal((await api("PATCH", `/admin/p/${project.slug}/media/${blue.id}`, { alt: { en: "A blue square", fr: "Un carré bleu" } })).status, 200);
    const node = await newNode(project.slug, { slug: "story", title: "Story", type: "article" });
    const { page, problems, context } = await open(`/studio/p/${project.slug}/nodes/${node.id}`);
    const field = page.getByRole("group", { name: /^Hero image/ });
    await field.getByText("No media chosen.").waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await press(page, field.getByRole("button", { name: "Choose media" }));
    const dialog = page.getByRole("dialog", { name: "Choose media" });
    await dialog
      .getByRole("status")
      .filter({ hasText: /^\d+ files?$/ })
      .waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await dialog.getByRole("searchbox", { name: "Search media" }).fill("blue");
    await dialog
      .getByRole("status")
      .filter({ hasText: /^1 file matching/ })
      .waitFor();
    await press(page, dialog.getByRole("grid", { name: "Media to choose from" }).getByRole("row", { name: /blue\.jpg/ }));
    await dialog.waitFor({ state: "detached" });
    await field.getByText("Alt text: A blue square").waitFor();
    assert.equal(await field.getByRole("img", { name: "A blue square" }).count(), 1);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
    assert.equal((await readNode(project.slug, node.id)).fields.hero, blue.id, "the stored value is the id");
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("button", { name: "Unpublish", exact: true }).waitFor();
    const live = await fetch(`${URL_BASE}/api/p/${project.slug}/nodes/by-path/story`);
    assert.equal(live.status, 200);
    const hero = (await live.json()).data.fields.hero;
    assert.equal(hero.id, blue.id);
    assert.equal(hero.alt, "A blue square");
    assert.equal(hero.width, 80);
    assert.match(hero.url, /\/api\/p\/.+\/media\//);
    // Remove clears the field (not saved: the reference stays for the delete test).
    await press(page, field.getByRole("button", { name: "Remove" }));
    await field.getByText("No media chosen.").waitFor();
    assert.equal(await field.getByRole("button", { name: "Remove" }).count(), 0);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("delete: refused while referenced (the nodes listed, Delete anyway forces it); an unused one after a confirmation", async () => {
    const blue = (await listApi(project.slug, "&q=blue")).data[0];
    assert.equal((await api("DELETE", `/admin/p/${project.slug}/media/${blue.id}`)).status, 409, "the service refuses while the story uses it");
    const { page, problems, context } = await openLibrary();
    const dialog = await openItem(page, "blue.jpg");
    await dialog.getByRole("link", { name: "Story" }).waitFor();
    await press(page, dialog.getByRole("button", { name: "Delete", exact: true }));
    const warning = dialog.getByRole("alert").filter({ hasText: "1 page uses this file" });
    await warning.getByRole("link", { name: "Story" }).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    assert.equal((await api("GET", `/admin/p/${project.slug}/media/${blue.id}`)).status, 200, "nothing deleted yet");
    await press(page, warning.getByRole("button", { name: "Delete anyway" }));
    await dialog.waitFor({ state: "detached" });
    assert.equal((await api("GET", `/admin/p/${project.slug}/media/${blue.id}`)).status, 404);
    await page
      .getByRole("status")
      .filter({ hasText: /^2 files$/ })
      .waitFor();

    const green = await openItem(page, "green.png");
    await green.getByText("No content uses this file.").waitFor();
    await press(page, green.getByRole("button", { name: "Delete", exact: true }));
    await press(page, green.getByRole("button", { name: "Delete file" }));
    await green.waitFor({ state: "detached" });
    assert.equal((await listApi(project.slug, "&q=green")).total, 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a viewer: no Upload, no Delete, alt text read-only", async () => {
    const viewer = await newPerson(project.id, "viewer");
    const { page, problems, context } = await openLibrary(viewer);
    assert.equal(await page.getByLabel("Upload", { exact: true }).count(), 0);
    const dialog = await openItem(page, "red.png");
    assert.equal(await dialog.getByRole("button", { name: "Delete", exact: true }).count(), 0);
    assert.equal(await dialog.getByRole("textbox", { name: /^Alt text \(en\)/ }).isEditable(), false);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("the grid is virtualised and fetches pages as it scrolls", async () => {
    const many = await newProject(MODEL);
    const bytes = await image("#888", "png", 16, 16);
    for (let i = 0; i < 130; i++) await uploadApi(many.slug, `tile-${String(i).padStart(3, "0")}.png`, bytes, "image/png");
    const member = await newPerson(many.id, "editor");
    const { page, problems, context } = await open(`/studio/p/${many.slug}/media`, member);
    await page
      .getByRole("status")
      .filter({ hasText: /^130 files$/ })
      .waitFor();
    const grid = page.getByRole("grid", { name: "Media library" });
    await grid.getByRole("row").first().waitFor();
    const rendered = await grid.getByRole("row").count();
    assert.ok(rendered > 0 && rendered < 100, `only the tiles in view are rendered (${rendered})`);
    // The oldest item is on the second page (newest first): scrolling to the end fetches it.
    assert.equal(await grid.getByRole("row", { name: /tile-000\.png/ }).count(), 0);
    for (let i = 0; i < 20 && (await grid.getByRole("row", { name: /tile-000\.png/ }).count()) === 0; i++) {
      await grid.evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await page.waitForTimeout(150); // fixed wait: lets the virtualizer lay out the next page after a scroll
    }
    await grid.getByRole("row", { name: /tile-000\.png/ }).waitFor();
    assert.ok((await grid.getByRole("row").count()) < 130, "still only what is in view");
    assert.deepEqual(problems, []);
    await context.close();
  });
});
