// The project's settings in the studio, in Chromium: tabs shown by the person's scopes; the project
// renamed, a locale added, a refused field shown at its field and a slug change followed; the theme's
// accent colour seen in the live preview, the logo and favicon chosen from the media library (one
// uploaded in the dialog) and seen there; a member's role changed and one removed, each confirmed;
// people added by email (an unknown email refused at its field);
// an AI provider added against the loopback vendor, edited with its key loaded, tested, made the
// default; an MCP token created, its plaintext shown once and usable, then deleted; a viewer sees no
// edit control; a person's sessions, another browser's ended. Actions by keyboard; axe on every tab
// and dialog; the API read afterwards.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import sharp from "sharp";
import { api, axeViolations, launch, newOwner, newPerson, newProject, openPage, signIn, URL_BASE } from "./harness.ts";
import { startVendor, type Vendor } from "./vendor.ts";

/** Focus a control and press a key on it, as a keyboard user does. */
async function press(target: Locator, key = "Enter"): Promise<void> {
  await target.focus();
  await target.page().keyboard.press(key);
}

/** Moves along the tab list with the arrow keys until the named tab is selected. */
async function openTab(page: Page, name: string): Promise<void> {
  const list = page.getByRole("tablist", { name: "Settings" });
  await list.getByRole("tab", { selected: true }).focus();
  for (let i = 0; i < 6; i++) {
    if ((await list.getByRole("tab", { name, exact: true }).getAttribute("aria-selected")) === "true") break;
    await page.keyboard.press("ArrowRight");
  }
  assert.equal(await list.getByRole("tab", { name, exact: true }).getAttribute("aria-selected"), "true", `tab ${name} selected`);
  await page.getByRole("tabpanel", { name }).waitFor();
}

/** Chooses an option of a React Aria Select by keyboard: opened with Enter, Home to the first option, then arrowed to the option. */
async function choose(page: Page, trigger: Locator, option: string): Promise<void> {
  await press(trigger);
  const listbox = page.getByRole("listbox");
  await listbox.waitFor();
  await page.keyboard.press("Home");
  for (let i = 0; i < 10; i++) {
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");
    if (focused === option) break;
    await page.keyboard.press("ArrowDown");
  }
  assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), option);
  await page.keyboard.press("Enter");
  await listbox.waitFor({ state: "detached" });
}

async function noAxe(page: Page, where: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `axe on ${where}`);
}

const mcpInitialize = (token: string) =>
  fetch(`${URL_BASE}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "settings-spec", version: "1" } } }),
  });

describe("project settings", () => {
  let browser: Browser;
  let vendor: Vendor;
  before(async () => {
    browser = await launch();
    vendor = await startVendor("fr");
  });
  after(async () => {
    await browser.close();
    await vendor.close();
  });

  /** A new project with an editor and a viewer, and its admin member signed in on the settings screen (which shows every tab). */
  async function asAdmin() {
    const p = await newProject();
    const admin = await newPerson(p.id, "admin");
    const editor = await newPerson(p.id, "editor");
    const leaving = await newPerson(p.id, "viewer");
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: URL_BASE });
    const { page, problems } = await openPage(context);
    await signIn(page, admin.email, admin.password, `/studio/p/${p.slug}/settings`);
    await page.getByRole("tablist", { name: "Settings" }).waitFor();
    assert.deepEqual(await page.getByRole("tablist", { name: "Settings" }).getByRole("tab").allTextContents(), ["Project", "Theme", "Members", "AI providers", "MCP tokens", "Agents"]);
    return { p, editor, leaving, context, page, problems };
  }

  test("project: renamed, a locale added, a refused field shown at its field, a new slug followed (projects:write); an admin member reads it only", async () => {
    const p = await newProject();
    const owner = await newOwner();
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, owner.email, owner.password, `/studio/p/${p.slug}/settings`);
    const panel = page.getByRole("tabpanel", { name: "Project" });
    const name = panel.getByRole("textbox", { name: "Name" });
    await name.waitFor();
    // An owner sees every tab.
    const tabs = await page.getByRole("tablist", { name: "Settings" }).getByRole("tab").allTextContents();
    assert.deepEqual(tabs, ["Project", "Theme", "Members", "AI providers", "MCP tokens", "Agents"]);
    await noAxe(page, "the Project tab");
    // A visible focus ring on the tab reached by keyboard.
    await page.getByRole("tab", { name: "Project" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowLeft");
    assert.notEqual(await page.getByRole("tab", { name: "Project" }).evaluate((el) => getComputedStyle(el).boxShadow), "none");
    // Renamed, a locale added by keyboard (Enter in the box adds it, it does not save the form).
    await name.fill("Renamed by the studio");
    await panel.getByRole("textbox", { name: "New locale" }).fill("de");
    await panel.getByRole("textbox", { name: "New locale" }).press("Enter");
    await panel.getByRole("list").getByText("de", { exact: true }).waitFor();
    // A base URL the server refuses: the message at its field.
    await panel.getByRole("textbox", { name: "Public base URL" }).fill("ftp://example.com");
    await press(panel.getByRole("button", { name: "Save project" }));
    const baseUrl = panel.getByRole("textbox", { name: "Public base URL" });
    await page.waitForFunction(() => document.querySelector('input[aria-invalid="true"]') !== null);
    assert.equal(await baseUrl.getAttribute("aria-invalid"), "true");
    assert.match(
      (await baseUrl.evaluate((el) =>
        el
          .getAttribute("aria-describedby")
          ?.split(" ")
          .map((id) => document.getElementById(id)?.textContent)
          .join(" "),
      )) ?? "",
      /http/,
    );
    await noAxe(page, "the Project tab with a refused field");
    assert.equal((await api("GET", `/admin/projects/${p.id}`)).json.data.name, `Studio ${p.slug}`, "nothing saved while refused");
    // Corrected and saved with Enter in a field.
    await baseUrl.fill("https://www.example.com");
    await baseUrl.press("Enter");
    await panel.getByRole("status").filter({ hasText: "Project settings saved." }).waitFor();
    const saved = (await api("GET", `/admin/projects/${p.id}`)).json.data;
    assert.equal(saved.name, "Renamed by the studio");
    assert.deepEqual(saved.locales, ["en", "fr", "de"]);
    assert.equal(saved.public_base_url, "https://www.example.com");
    // The breadcrumb follows the new name.
    await page.getByRole("navigation", { name: "Breadcrumbs" }).getByText("Renamed by the studio").waitFor();
    // A slug change: the screen moves to the new address.
    const newSlug = `${p.slug}-moved`;
    await panel.getByRole("textbox", { name: "Slug" }).fill(newSlug);
    await press(panel.getByRole("button", { name: "Save project" }));
    await page.waitForURL(`${URL_BASE}/studio/p/${newSlug}/settings`);
    assert.equal((await api("GET", `/admin/projects/${p.id}`)).json.data.slug, newSlug);
    await page.getByRole("tabpanel", { name: "Project" }).getByRole("textbox", { name: "Slug" }).waitFor();
    assert.equal(await page.getByRole("tabpanel", { name: "Project" }).getByRole("textbox", { name: "Slug" }).inputValue(), newSlug);
    assert.deepEqual(problems, []);
    await context.close();

    // An admin member holds no projects:write: the Project tab is read only.
    const admin = await newPerson(p.id, "admin");
    const c2 = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const second = await openPage(c2);
    await signIn(second.page, admin.email, admin.password, `/studio/p/${newSlug}/settings`);
    const adminPanel = second.page.getByRole("tabpanel", { name: "Project" });
    await adminPanel.getByRole("textbox", { name: "Name" }).waitFor();
    assert.equal(await adminPanel.getByRole("textbox", { name: "Name" }).getAttribute("readonly"), "");
    assert.equal(await adminPanel.getByRole("button", { name: "Save project" }).count(), 0);
    assert.equal(await adminPanel.getByRole("button", { name: "Add locale" }).count(), 0);
    await noAxe(second.page, "the read-only Project tab");
    assert.deepEqual(second.problems, []);
    await c2.close();
  });

  test("as an admin member: the theme's accent colour and name seen in the live preview, then saved", async () => {
    const { p, page, problems, context } = await asAdmin();
    // Theme: the accent colour and the name shown in the preview as they are typed, then saved.
    await openTab(page, "Theme");
    const theme = page.getByRole("tabpanel", { name: "Theme" });
    await theme.getByRole("textbox", { name: "Accent colour", exact: true }).waitFor();
    await noAxe(page, "the Theme tab");
    await theme.getByRole("textbox", { name: "Accent colour", exact: true }).fill("#0a7d55");
    await theme.getByRole("textbox", { name: "Name override" }).fill("Acme Shop");
    await theme.getByRole("textbox", { name: "Logo URL" }).fill("https://cdn.example.com/logo.png");
    const header = theme.getByTestId("theme-preview-header");
    assert.equal(await header.evaluate((el) => getComputedStyle(el).backgroundColor), "rgb(10, 125, 85)");
    assert.match((await header.textContent()) ?? "", /Acme Shop/);
    // A logo on another origin is named, not loaded (the CSP allows images from the studio's origin only).
    assert.equal(await header.locator("img").count(), 0);
    assert.match((await header.textContent()) ?? "", /cdn\.example\.com\/logo\.png/);
    await noAxe(page, "the Theme tab with its preview");
    await theme.getByRole("textbox", { name: "Name override" }).press("Enter");
    await theme.getByRole("status").filter({ hasText: "Theme saved." }).waitFor();
    const savedTheme = (await api("GET", `/admin/p/${p.slug}/theme`)).json.data;
    assert.equal(savedTheme.accent_color, "#0a7d55");
    assert.equal(savedTheme.name_override, "Acme Shop");
    assert.equal(savedTheme.logo_url, "https://cdn.example.com/logo.png");

    assert.deepEqual(problems, []);
    await context.close();
  });

  test("as an admin member: the logo chosen from the media library and the favicon uploaded in the same dialog, both seen in the preview, then saved", async () => {
    const { p, page, problems, context } = await asAdmin();
    const form = new FormData();
    const logoBytes = await sharp({ create: { width: 120, height: 40, channels: 3, background: "#0a7d55" } })
      .png()
      .toBuffer();
    form.append("file", new Blob([new Uint8Array(logoBytes)], { type: "image/png" }), "brand-logo.png");
    const uploaded = await fetch(`${URL_BASE}/admin/p/${p.slug}/media`, { method: "POST", headers: { authorization: `Bearer ${process.env.STUDIO_ADMIN_KEY}` }, body: form });
    assert.equal(uploaded.status, 201);
    const logo = (await uploaded.json()).data as { id: string; url: string };
    await openTab(page, "Theme");
    const theme = page.getByRole("tabpanel", { name: "Theme" });
    // The logo: Choose media, the file found by its name and picked with Enter.
    await press(theme.getByRole("button", { name: "Choose media for the logo" }));
    let dialog = page.getByRole("dialog", { name: "Choose media" });
    await dialog
      .getByRole("status")
      .filter({ hasText: /^1 file$/ })
      .waitFor();
    await noAxe(page, "the Choose media dialog of the theme");
    await press(dialog.getByRole("grid", { name: "Media to choose from" }).getByRole("row", { name: /brand-logo\.png/ }));
    await dialog.waitFor({ state: "detached" });
    // The address readers load, without the version tag (the theme takes no query).
    const address = (url: string) => url.replace(/\?.*$/, "");
    assert.equal(await theme.getByRole("textbox", { name: "Logo URL" }).inputValue(), address(logo.url));
    const header = theme.getByTestId("theme-preview-header");
    const shown = header.getByRole("img", { name: "Logo" });
    await shown.waitFor();
    await page.waitForFunction(() => (document.querySelector(".preview-logo") as HTMLImageElement | null)?.naturalWidth === 120);
    assert.match(new URL((await shown.getAttribute("src")) ?? "", URL_BASE).pathname, new RegExp(`^/api/p/${p.slug}/media/${logo.id}/`));
    // The favicon: uploaded inside the dialog, then picked.
    await press(theme.getByRole("button", { name: "Choose media for the favicon" }));
    dialog = page.getByRole("dialog", { name: "Choose media" });
    await dialog
      .getByRole("status")
      .filter({ hasText: /^1 file$/ })
      .waitFor();
    const faviconBytes = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#d22" } })
      .png()
      .toBuffer();
    await dialog.getByLabel("Upload", { exact: true }).setInputFiles([{ name: "favicon-32.png", mimeType: "image/png", buffer: faviconBytes }]);
    await dialog.getByRole("region", { name: "Uploads" }).getByRole("listitem", { name: "favicon-32.png" }).getByText("Uploaded 100%").waitFor();
    const row = dialog.getByRole("grid", { name: "Media to choose from" }).getByRole("row", { name: /favicon-32\.png/ });
    await row.waitFor();
    await press(row);
    await dialog.waitFor({ state: "detached" });
    const favicon = ((await api("GET", `/admin/p/${p.slug}/media?q=favicon-32`)).json.data as Array<{ id: string; url: string }>)[0];
    assert.ok(favicon, "the favicon was uploaded through the dialog");
    assert.equal(await theme.getByRole("textbox", { name: "Favicon URL" }).inputValue(), address(favicon.url));
    await header.getByRole("img", { name: "Favicon" }).waitFor();
    await page.waitForFunction(() => (document.querySelector(".preview-favicon") as HTMLImageElement | null)?.naturalWidth === 32);
    await noAxe(page, "the Theme tab with images from the library");
    await press(theme.getByRole("button", { name: "Save theme" }));
    await theme.getByRole("status").filter({ hasText: "Theme saved." }).waitFor();
    const saved = (await api("GET", `/admin/p/${p.slug}/theme`)).json.data;
    assert.equal(saved.logo_url, address(logo.url));
    assert.equal(saved.favicon_url, address(favicon.url));
    // The saved logo is what readers load: the media file on delivery.
    const file = await fetch(saved.logo_url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get("content-type"), "image/png");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("as an admin member: a member's role changed and another removed, each confirmed", async () => {
    const { p, page, problems, context, editor, leaving } = await asAdmin();
    // Members: one removed, then a role changed, each after a confirmation.
    await openTab(page, "Members");
    const members = page.getByRole("tabpanel", { name: "Members" });
    await members.getByRole("rowheader", { name: editor.email }).waitFor();
    await noAxe(page, "the Members tab");
    await press(members.getByRole("button", { name: `Remove ${leaving.email}` }));
    const removeDialog = page.getByRole("alertdialog", { name: "Remove from the project?" });
    await removeDialog.waitFor();
    await noAxe(page, "the remove member dialog");
    await press(removeDialog.getByRole("button", { name: "Remove member" }));
    await members.getByRole("rowheader", { name: leaving.email }).waitFor({ state: "detached" });
    await members
      .getByRole("status")
      .filter({ hasText: `${leaving.email} was removed from the project.` })
      .waitFor();
    let list = (await api("GET", `/admin/p/${p.slug}/members`)).json.data as Array<{ user_id: string; role: string }>;
    assert.equal(
      list.some((m) => m.user_id === leaving.id),
      false,
    );
    await choose(page, members.getByRole("button", { name: `Role of ${editor.email}` }), "admin");
    const roleDialog = page.getByRole("alertdialog", { name: "Change the role?" });
    await roleDialog.waitFor();
    await noAxe(page, "the role change dialog");
    await press(roleDialog.getByRole("button", { name: "Change role" }));
    const done = members.getByRole("status").filter({ hasText: `${editor.email} is now admin.` });
    await done.waitFor();
    list = (await api("GET", `/admin/p/${p.slug}/members`)).json.data;
    assert.equal(list.find((m) => m.user_id === editor.id)?.role, "admin");
    await members
      .getByRole("button", { name: `Role of ${editor.email}` })
      .filter({ hasText: "admin" })
      .waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("as an admin member: people added by email: an unknown email and a person outside the project refused at the field, an existing member given a new role", async () => {
    const { p, page, problems, context, editor } = await asAdmin();
    await openTab(page, "Members");
    const members = page.getByRole("tabpanel", { name: "Members" });
    await members.getByRole("rowheader", { name: editor.email }).waitFor();
    const form = members.getByRole("form", { name: "Add a person" });
    const box = form.getByRole("textbox", { name: "Email" });
    /** The text of what describes the Email box (its help and its refusal). */
    const describedBy = () =>
      box.evaluate((el) =>
        (el.getAttribute("aria-describedby") ?? "")
          .split(" ")
          .map((id) => document.getElementById(id)?.textContent ?? "")
          .join(" "),
      );
    const memberCount = async () => ((await api("GET", `/admin/p/${p.slug}/members`)).json.data as unknown[]).length;
    // An email nobody has: refused at its field, nothing added.
    await box.fill("nobody-here@example.com");
    await press(form.getByRole("button", { name: "Add member" }));
    await page.waitForFunction(() => document.querySelector('input[aria-invalid="true"]') !== null);
    assert.equal(await box.getAttribute("aria-invalid"), "true");
    assert.match(await describedBy(), /needs an account first, which an instance owner creates/);
    await noAxe(page, "the Members tab with a refused email");
    assert.equal(await memberCount(), 3, "nothing added");
    // A person with an account but in none of this admin's projects: the same answer (a project
    // admin reaches the people of the project only; nobody is revealed).
    const stranger = await api("POST", "/admin/users", { email: `stranger-${crypto.randomUUID()}@example.com`, password: `pw-${crypto.randomUUID()}`, role: "member" });
    assert.equal(stranger.status, 201);
    await box.fill(stranger.json.data.email);
    assert.equal(await box.getAttribute("aria-invalid"), null, "the refusal goes when the email changes");
    await press(form.getByRole("button", { name: "Add member" }));
    await page.waitForFunction(() => document.querySelector('input[aria-invalid="true"]') !== null);
    assert.equal(await memberCount(), 3, "nothing added");
    // An existing member added again gets the new role: typed in capitals, the role chosen by keyboard, Enter in the box.
    await box.fill(editor.email.toUpperCase());
    await choose(page, form.getByRole("button", { name: /Role/ }), "admin");
    await box.press("Enter");
    await members
      .getByRole("status")
      .filter({ hasText: `${editor.email} is now admin.` })
      .waitFor();
    const list = (await api("GET", `/admin/p/${p.slug}/members`)).json.data as Array<{ user_id: string; email: string; role: string }>;
    assert.equal(list.find((m) => m.user_id === editor.id)?.role, "admin");
    assert.equal(list.length, 3);
    await members
      .getByRole("button", { name: `Role of ${editor.email}` })
      .filter({ hasText: "admin" })
      .waitFor();
    assert.equal(await box.inputValue(), "", "the form is emptied for the next person");
    await noAxe(page, "the Members tab after adding");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("as an admin member: an AI provider added against the loopback vendor, edited with its key loaded, tested, a provider made the default, one deleted", async () => {
    const { p, page, problems, context } = await asAdmin();
    // AI providers: added against the loopback vendor.
    await openTab(page, "AI providers");
    const ai = page.getByRole("tabpanel", { name: "AI providers" });
    await ai.getByText(/No provider yet/).waitFor();
    await noAxe(page, "the AI providers tab");
    await press(ai.getByRole("button", { name: "Add provider" }));
    const add = page.getByRole("dialog", { name: "Add provider" });
    await add.getByRole("textbox", { name: "Name" }).waitFor();
    await add.getByRole("button", { name: /Kind/ }).filter({ hasText: "OpenAI" }).waitFor();
    await noAxe(page, "the Add provider dialog");
    await add.getByRole("textbox", { name: "Name" }).fill("Loopback");
    await choose(page, add.getByRole("button", { name: /Kind/ }), "OpenAI (or any OpenAI-compatible endpoint)");
    await add.getByRole("textbox", { name: "Model" }).fill("gpt-test");
    await add.getByRole("textbox", { name: "Base URL" }).fill(vendor.baseUrl);
    await add.getByLabel("API key", { exact: true }).fill("sk-vendor-key-1234");
    await press(add.getByRole("button", { name: "Add provider" }));
    await add.waitFor({ state: "detached" });
    const row = ai.getByRole("row", { name: /Loopback/ });
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /gpt-test/);
    assert.match((await row.textContent()) ?? "", /default/);
    assert.doesNotMatch((await page.content()) ?? "", /sk-vendor-key-1234/, "the list shows the key masked");
    let providers = (await api("GET", `/admin/p/${p.slug}/ai/providers`)).json.data as Array<{ id: string; name: string; kind: string; model: string; base_url: string; is_default: boolean }>;
    assert.equal(providers.length, 1);
    assert.deepEqual([providers[0]?.kind, providers[0]?.model, providers[0]?.base_url], ["openai", "gpt-test", vendor.baseUrl]);
    // Edited: the form loads the provider with its key, hidden until Show.
    await press(ai.getByRole("button", { name: "Edit Loopback" }));
    const edit = page.getByRole("dialog", { name: "Edit Loopback" });
    const key = edit.getByLabel("API key", { exact: true });
    await key.waitFor();
    assert.equal(await key.inputValue(), "sk-vendor-key-1234");
    assert.equal(await key.getAttribute("type"), "password");
    await noAxe(page, "the Edit provider dialog");
    await press(edit.getByRole("button", { name: "Show API key" }), "Space");
    assert.equal(await key.getAttribute("type"), "text");
    assert.equal(await edit.getByRole("button", { name: "Show API key" }).getAttribute("aria-pressed"), "true");
    await edit.getByRole("textbox", { name: "Model" }).fill("gpt-test-2");
    await press(edit.getByRole("button", { name: "Save provider" }));
    await edit.waitFor({ state: "detached" });
    await ai.getByRole("row", { name: /gpt-test-2/ }).waitFor();
    providers = (await api("GET", `/admin/p/${p.slug}/ai/providers`)).json.data;
    assert.equal(providers[0]?.model, "gpt-test-2");
    // Test connection: one word into the project's second locale, through the vendor.
    const before = vendor.requests;
    await press(ai.getByRole("button", { name: "Test connection of Loopback" }));
    await ai.getByRole("status").filter({ hasText: "[fr] Hello" }).waitFor({ timeout: 15_000 });
    assert.ok(vendor.requests > before, "the vendor was called");
    // A second provider (made through the API) becomes the default from the list.
    const other = await api("POST", `/admin/p/${p.slug}/ai/providers`, { name: "Backup", kind: "openai", base_url: vendor.baseUrl, is_default: false });
    assert.equal(other.status, 201, JSON.stringify(other.json));
    await page.reload();
    await openTab(page, "AI providers");
    await press(page.getByRole("tabpanel", { name: "AI providers" }).getByRole("button", { name: "Set default: Backup" }));
    await page.getByRole("tabpanel", { name: "AI providers" }).getByRole("button", { name: "Set default: Loopback" }).waitFor();
    providers = (await api("GET", `/admin/p/${p.slug}/ai/providers`)).json.data;
    assert.deepEqual(
      providers.filter((x) => x.is_default).map((x) => x.name),
      ["Backup"],
    );
    // A provider without a key: the vendor refuses it and Test connection shows the refusal.
    await press(page.getByRole("tabpanel", { name: "AI providers" }).getByRole("button", { name: "Test connection of Backup" }));
    await page.getByRole("tabpanel", { name: "AI providers" }).getByRole("alert").filter({ hasText: "Test connection of Backup failed" }).waitFor({ timeout: 15_000 });
    await noAxe(page, "the AI providers tab with two providers");
    // The delete confirmation.
    await press(page.getByRole("tabpanel", { name: "AI providers" }).getByRole("button", { name: "Delete Loopback" }));
    const delProvider = page.getByRole("alertdialog", { name: "Delete the provider?" });
    await delProvider.waitFor();
    await noAxe(page, "the Delete provider dialog");
    await press(delProvider.getByRole("button", { name: "Delete provider" }));
    await page
      .getByRole("tabpanel", { name: "AI providers" })
      .getByRole("row", { name: /Loopback/ })
      .waitFor({ state: "detached" });
    assert.deepEqual(
      ((await api("GET", `/admin/p/${p.slug}/ai/providers`)).json.data as Array<{ name: string }>).map((x) => x.name),
      ["Backup"],
    );

    assert.deepEqual(problems, []);
    await context.close();
  });

  test("as an admin member: an MCP token created, its plaintext shown once, copied and usable, absent from every later page, deleted", async () => {
    const { p, page, problems, context } = await asAdmin();
    // MCP tokens: created, its plaintext shown once, copied, usable; gone from every later page; deleted.
    await openTab(page, "MCP tokens");
    const mcp = page.getByRole("tabpanel", { name: "MCP tokens" });
    await mcp.getByText("No MCP token yet.").waitFor();
    await noAxe(page, "the MCP tokens tab");
    await press(mcp.getByRole("button", { name: "Create token" }));
    const create = page.getByRole("dialog", { name: "Create token" });
    await create.getByRole("textbox", { name: "Name" }).waitFor();
    await noAxe(page, "the Create token dialog");
    await create.getByRole("textbox", { name: "Name" }).fill("Agent of the spec");
    // content:publish left out, by keyboard.
    await press(create.getByRole("checkbox", { name: "content:publish" }), "Space");
    assert.equal(await create.getByRole("checkbox", { name: "content:publish" }).isChecked(), false);
    await press(create.getByRole("button", { name: "Create token" }));
    const once = page.getByRole("dialog", { name: /Token Agent of the spec created/ });
    await once.waitFor();
    const plaintext = ((await once.getByTestId("token-plaintext").textContent()) ?? "").trim();
    assert.match(plaintext, /^cms_mcp_/);
    assert.match((await once.textContent()) ?? "", /not shown again/);
    await noAxe(page, "the new token dialog");
    await press(once.getByRole("button", { name: "Copy" }));
    await once.getByRole("status").filter({ hasText: "Copied" }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), plaintext);
    const init = await mcpInitialize(plaintext);
    assert.equal(init.status, 200);
    await press(once.getByRole("button", { name: "Done" }));
    await once.waitFor({ state: "detached" });
    const tokenRow = mcp.getByRole("row", { name: /Agent of the spec/ });
    await tokenRow.waitFor();
    assert.match((await tokenRow.textContent()) ?? "", /content:write/);
    assert.doesNotMatch((await tokenRow.textContent()) ?? "", /content:publish/);
    assert.equal((await page.content()).includes(plaintext), false, "the plaintext is gone from the page");
    await page.reload();
    await openTab(page, "MCP tokens");
    await page
      .getByRole("tabpanel", { name: "MCP tokens" })
      .getByRole("row", { name: /Agent of the spec/ })
      .waitFor();
    assert.equal((await page.content()).includes(plaintext), false, "the plaintext is on no later page");
    const tokens = (await api("GET", `/admin/p/${p.slug}/ai/mcp/tokens`)).json.data as Array<{ id: string; name: string; scopes: string[] }>;
    assert.deepEqual(
      tokens.map((x) => [x.name, [...x.scopes].sort()]),
      [["Agent of the spec", ["ai:read", "content:read", "content:write"]]],
    );
    await press(page.getByRole("tabpanel", { name: "MCP tokens" }).getByRole("button", { name: "Delete Agent of the spec" }));
    const delToken = page.getByRole("alertdialog", { name: "Delete the token?" });
    await delToken.waitFor();
    await noAxe(page, "the Delete token dialog");
    await press(delToken.getByRole("button", { name: "Delete token" }));
    await page.getByRole("tabpanel", { name: "MCP tokens" }).getByText("No MCP token yet.").waitFor();
    assert.deepEqual((await api("GET", `/admin/p/${p.slug}/ai/mcp/tokens`)).json.data, []);
    assert.equal((await mcpInitialize(plaintext)).status, 401, "a deleted token stops at once");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a person's sessions: this browser marked, another browser's session ended by keyboard (it is signed out), axe", async () => {
    const p = await newProject();
    const person = await newPerson(p.id, "editor");
    // Two browsers signed in as the same person.
    const other = await browser.newContext({ userAgent: "Other browser 1.0" });
    const elsewhere = await openPage(other);
    await signIn(elsewhere.page, person.email, person.password);
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, person.email, person.password, "/studio/sessions");
    const table = page.getByRole("table", { name: "Sessions" });
    await table.getByRole("row", { name: /This browser/ }).waitFor();
    assert.equal(await table.getByRole("row").count(), 3, "a header and two sessions");
    await noAxe(page, "the Sessions screen");
    const row = table.getByRole("row", { name: /Other browser 1\.0/ });
    await press(row.getByRole("button", { name: "End session" }));
    await row.waitFor({ state: "detached" });
    assert.equal(await table.getByRole("row").count(), 2);
    // The other browser is signed out on its next request.
    const who = await elsewhere.page.evaluate(async () => (await fetch("/studio/api/session", { headers: { "X-CMS-Studio": "1" } })).status);
    assert.equal(who, 401);
    await table.getByRole("button", { name: "End session (this browser)" }).waitFor();
    assert.deepEqual(problems, []);
    assert.deepEqual(elsewhere.problems, []);
    await other.close();
    await context.close();
  });

  test("a viewer: the tabs their scopes allow, and no edit control in any", async () => {
    const p = await newProject();
    assert.equal((await api("POST", `/admin/p/${p.slug}/ai/providers`, { name: "Loopback", kind: "openai", base_url: vendor.baseUrl, api_key: "sk-viewer-test" })).status, 201);
    assert.equal((await api("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { name: "Existing" })).status, 201);
    const viewer = await newPerson(p.id, "viewer");
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, viewer.email, viewer.password, `/studio/p/${p.slug}/settings`);
    await page.getByRole("tabpanel", { name: "Project" }).getByRole("textbox", { name: "Name" }).waitFor();
    assert.deepEqual(await page.getByRole("tablist", { name: "Settings" }).getByRole("tab").allTextContents(), ["Project", "AI providers", "MCP tokens", "Agents"]);
    const project = page.getByRole("tabpanel", { name: "Project" });
    for (const label of ["Name", "Slug", "Public base URL"]) assert.equal(await project.getByRole("textbox", { name: label }).getAttribute("readonly"), "", `${label} is read only`);
    assert.equal(await project.getByRole("button", { name: /Save|Add locale|Remove/ }).count(), 0);
    await noAxe(page, "the viewer's Project tab");
    await openTab(page, "AI providers");
    const ai = page.getByRole("tabpanel", { name: "AI providers" });
    await ai.getByRole("row", { name: /Loopback/ }).waitFor();
    assert.equal(await ai.getByRole("button", { name: /Add provider|Edit|Delete|Set default/ }).count(), 0);
    await noAxe(page, "the viewer's AI providers tab");
    await openTab(page, "MCP tokens");
    const mcp = page.getByRole("tabpanel", { name: "MCP tokens" });
    await mcp.getByRole("row", { name: /Existing/ }).waitFor();
    assert.equal(await mcp.getByRole("button").count(), 0);
    await noAxe(page, "the viewer's MCP tokens tab");
    assert.deepEqual(problems, []);
    await context.close();
  });
});
