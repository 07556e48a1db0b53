// The project's semantic search in the studio (the AI providers tab), in Chromium: an owner picks
// one of the project's providers of a kind with embeddings (a chat-only kind is not offered), a cap
// the form refuses saves nothing, the saved setting is read back from the API and after a reload,
// the published page gets its vector from the loopback vendor and the state shows it, a server
// refusal is shown with the API's message, and Turn off (confirmed) leaves the API off. A project
// without such a provider says so and points to the providers; an admin member (no projects:write)
// reads the state only. Actions by keyboard; axe on the section and the dialog. STUDIO_SCREENSHOTS=<dir>
// keeps a picture of each state.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import { api, axeViolations, launch, newNode, newOwner, newPerson, newProject, openPage, signIn } from "./harness.ts";
import { startVendor, type Vendor } from "./vendor.ts";

/** Focus a control and press a key on it, as a keyboard user does. */
async function press(target: Locator, key = "Enter"): Promise<void> {
  await target.focus();
  await target.page().keyboard.press(key);
}

/** The settings screen of a project on its AI providers tab, and the semantic search section. */
async function openSection(page: Page): Promise<Locator> {
  const list = page.getByRole("tablist", { name: "Settings" });
  const tab = list.getByRole("tab", { name: "AI providers" });
  await tab.waitFor();
  await list.getByRole("tab", { selected: true }).focus();
  for (let i = 0; i < 6 && (await tab.getAttribute("aria-selected")) !== "true"; i++) await page.keyboard.press("ArrowRight");
  assert.equal(await tab.getAttribute("aria-selected"), "true");
  const section = page.getByRole("tabpanel", { name: "AI providers" }).getByRole("region", { name: "Semantic search" });
  await section.getByRole("definition").first().waitFor();
  return section;
}

/** The options of a React Aria Select, opened by keyboard; closed again with Escape. */
async function optionsOf(page: Page, trigger: Locator): Promise<string[]> {
  await press(trigger);
  const listbox = page.getByRole("listbox");
  await listbox.waitFor();
  const names = (await listbox.getByRole("option").allTextContents()).map((s) => s.trim());
  await page.keyboard.press("Escape");
  await listbox.waitFor({ state: "detached" });
  return names;
}

/** Chooses an option of a React Aria Select by keyboard: opened with Enter, arrowed to the option. */
async function choose(page: Page, trigger: Locator, option: string): Promise<void> {
  await press(trigger);
  const listbox = page.getByRole("listbox");
  await listbox.waitFor();
  await page.keyboard.press("Home");
  for (let i = 0; i < 10; i++) {
    if ((await page.evaluate(() => document.activeElement?.textContent?.trim() ?? "")) === option) break;
    await page.keyboard.press("ArrowDown");
  }
  assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), option);
  await page.keyboard.press("Enter");
  await listbox.waitFor({ state: "detached" });
}

/** The text of the description of a control (its help and its error). */
const describedBy = (control: Locator): Promise<string> =>
  control.evaluate(
    (el) =>
      el
        .getAttribute("aria-describedby")
        ?.split(" ")
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ") ?? "",
  );

/** The facts the section lists (term → description), read as a person reads them. */
async function facts(section: Locator): Promise<Record<string, string>> {
  const terms = await section.getByRole("term").allTextContents();
  const values = await section.getByRole("definition").allTextContents();
  return Object.fromEntries(terms.map((t, i) => [t.trim(), (values[i] ?? "").replace(/\s+/g, " ").trim()]));
}

const semanticOf = async (slug: string): Promise<any> => {
  const r = await api("GET", `/admin/p/${slug}/search/semantic`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.data.semantic;
};

/** With STUDIO_SCREENSHOTS set (a directory), a picture of the element to look at. */
async function shot(target: Locator, name: string): Promise<void> {
  const dir = process.env.STUDIO_SCREENSHOTS;
  if (dir) await target.screenshot({ path: join(dir, `${name}.png`) });
}

async function noAxe(page: Page, where: string, within?: readonly string[]): Promise<void> {
  assert.deepEqual(await axeViolations(page, within), [], `axe on ${where}`);
}

describe("semantic search settings", () => {
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

  const addProvider = async (slug: string, name: string, kind: string): Promise<string> => {
    const r = await api("POST", `/admin/p/${slug}/ai/providers`, { name, kind, base_url: vendor.baseUrl, api_key: "sk-semantic-spec-1234" });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    return r.json.data.id;
  };

  test("an owner turns it on with a qualifying provider, a refused cap saves nothing, the state is saved and shown, then turned off", async () => {
    const p = await newProject();
    const loopback = await addProvider(p.slug, "Loopback", "openai");
    const mistral = await addProvider(p.slug, "Backup", "mistral");
    await addProvider(p.slug, "Chat only", "groq");
    const node = await newNode(p.slug, { slug: "repairs", title: "Car repairs", type: "page", blocks: [{ type: "text", data: { body: "We fix your car quickly." } }] });
    assert.equal((await api("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`, {})).status, 200);
    const owner = await newOwner();
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, owner.email, owner.password, `/studio/p/${p.slug}/settings`);
    let section = await openSection(page);
    assert.equal((await facts(section)).State?.startsWith("Off"), true);
    await noAxe(page, "the semantic search section, off", ["section[aria-labelledby=semantic-heading]"]);
    await shot(section, "semantic-settings-off");

    // Only the providers whose kind has embeddings are offered; none is preselected among two.
    const providerButton = section.getByRole("button", { name: /Provider/ });
    assert.deepEqual(await optionsOf(page, providerButton), ["Loopback (openai)", "Backup (mistral)"]);
    assert.match((await providerButton.textContent()) ?? "", /Choose a provider/);

    // A cap the form refuses: shown at its field, nothing sent.
    await choose(page, providerButton, "Loopback (openai)");
    const cap = section.getByRole("textbox", { name: "Daily cap" });
    await cap.fill("0");
    await press(section.getByRole("button", { name: "Turn on semantic search" }));
    await page.waitForFunction(() => document.querySelector('input[aria-invalid="true"]') !== null);
    assert.equal(await cap.getAttribute("aria-invalid"), "true");
    assert.match(await describedBy(cap), /whole number of calls from 1 to 10,000,000/);
    await noAxe(page, "the section with a refused cap", ["section[aria-labelledby=semantic-heading]"]);
    await shot(section, "semantic-settings-refused");
    assert.equal(await semanticOf(p.slug), null, "nothing saved while refused");

    // Corrected and saved with Enter in the field; the model left to the kind's default.
    await cap.fill("5000");
    assert.equal(await cap.getAttribute("aria-invalid"), null, "the refusal goes when the cap changes");
    await cap.press("Enter");
    await section
      .getByRole("status")
      .filter({ hasText: /Semantic search is on/ })
      .waitFor();
    assert.deepEqual(await semanticOf(p.slug).then((s) => [s.provider_id, s.model, s.daily_cap]), [loopback, "text-embedding-3-small", 5000]);

    // The published page is embedded in the background; the section follows (read again while pages wait).
    await section.getByRole("definition").filter({ hasText: "1 page (per locale)" }).waitFor({ timeout: 30_000 });
    assert.ok(vendor.embeddings >= 1, "the vendor embedded the page");
    const meter = section.getByRole("meter", { name: "Embedding calls today" });
    await page.waitForFunction(() => document.querySelector('[role="meter"]')?.getAttribute("aria-valuetext")?.startsWith("1 of"));
    assert.equal(await meter.getAttribute("aria-valuetext"), "1 of 5,000 calls");

    // Reloaded: the saved state, and the form starts from it.
    await page.reload();
    section = await openSection(page);
    const shown = await facts(section);
    assert.deepEqual([shown.State, shown.Provider, shown.Model], ["On", "Loopback (openai)", "text-embedding-3-small"]);
    assert.match(shown["Daily cap"] ?? "", /^5,000 embedding calls a day/);
    assert.match(shown.Waiting ?? "", /^none/);
    assert.match((await section.getByRole("button", { name: /Provider/ }).textContent()) ?? "", /Loopback \(openai\)/);
    assert.equal(await section.getByRole("textbox", { name: "Daily cap" }).inputValue(), "5000");
    assert.equal(await section.getByRole("textbox", { name: "Embedding model" }).inputValue(), "text-embedding-3-small");
    await noAxe(page, "the semantic search section, on", ["section[aria-labelledby=semantic-heading]"]);
    await shot(section, "semantic-settings");

    // A refusal of the server is shown with its message: the provider chosen is deleted meanwhile.
    await choose(page, section.getByRole("button", { name: /Provider/ }), "Backup (mistral)");
    assert.equal(await section.getByRole("textbox", { name: "Embedding model" }).inputValue(), "", "another kind starts from its own default model");
    assert.equal((await api("DELETE", `/admin/ai/providers/${mistral}`)).status, 204);
    await press(section.getByRole("button", { name: "Save semantic search" }));
    await section.getByRole("alert").filter({ hasText: "provider not found" }).waitFor();
    assert.equal((await semanticOf(p.slug)).provider_id, loopback, "the refused change saved nothing");

    // Turned off, confirmed: the API says off and the section shows it.
    await press(section.getByRole("button", { name: "Turn off semantic search" }));
    const confirm = page.getByRole("alertdialog", { name: "Turn off semantic search?" });
    await confirm.waitFor();
    assert.match((await confirm.textContent()) ?? "", /1 stored vector is deleted/);
    await noAxe(page, "the Turn off dialog");
    await shot(confirm, "semantic-settings-turn-off");
    await press(confirm.getByRole("button", { name: "Turn off" }));
    await section.getByRole("status").filter({ hasText: "Semantic search is off" }).waitFor();
    assert.equal(await semanticOf(p.slug), null);
    assert.equal((await facts(section)).State?.startsWith("Off"), true);
    await section.getByRole("button", { name: "Turn on semantic search" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("without a qualifying provider the section says so and points to the providers; an admin member reads the state only", async () => {
    const p = await newProject();
    await addProvider(p.slug, "Chat only", "groq");
    const owner = await newOwner();
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, owner.email, owner.password, `/studio/p/${p.slug}/settings`);
    const section = await openSection(page);
    await section.getByText("No provider of this project can embed pages.").waitFor();
    assert.match((await section.textContent()) ?? "", /kind openai, gemini, mistral, openrouter \(the project’s providers are of other kinds\)/);
    assert.equal(await section.getByRole("link", { name: "AI providers" }).getAttribute("href"), "#providers-heading");
    assert.equal(await section.getByRole("button", { name: /Turn on|Save/ }).count(), 0);
    await noAxe(page, "the section without a qualifying provider", ["section[aria-labelledby=semantic-heading]"]);
    await shot(section, "semantic-settings-none");
    assert.deepEqual(problems, []);
    await context.close();

    // On (through the API), read by an admin member: the state, no control.
    const id = await addProvider(p.slug, "Loopback", "openai");
    assert.equal((await api("PUT", `/admin/p/${p.slug}/search/semantic`, { provider_id: id, daily_cap: 300 })).status, 200);
    const admin = await newPerson(p.id, "admin");
    const c2 = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const second = await openPage(c2);
    await signIn(second.page, admin.email, admin.password, `/studio/p/${p.slug}/settings`);
    const readOnly = await openSection(second.page);
    const shown = await facts(readOnly);
    assert.deepEqual([shown.State, shown.Provider, shown.Model], ["On", "Loopback (openai)", "text-embedding-3-small"]);
    assert.match(shown["Daily cap"] ?? "", /^300 embedding calls/);
    assert.equal(await readOnly.getByRole("button").count(), 0);
    assert.equal(await readOnly.getByRole("textbox").count(), 0);
    await readOnly.getByText("Changing semantic search needs the projects:write scope").waitFor();
    await noAxe(second.page, "the read-only section", ["section[aria-labelledby=semantic-heading]"]);
    await shot(readOnly, "semantic-settings-read-only");
    assert.deepEqual(second.problems, []);
    await c2.close();
  });
});
