// Translating in the studio, in Chromium: the Locale switcher, translatable fields only with the
// base value beside each, untranslated ones marked, `Translate with AI` filling a draft through the
// project's provider (a loopback stand-in for an OpenAI-compatible vendor), saving the translation,
// and publishing it, seen on delivery in French. axe on the translation screen.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { api, axeViolations, launch, newNode, newPerson, newProject, openPage, signIn, URL_BASE } from "./harness.ts";
import { startVendor, type Vendor } from "./vendor.ts";

const MODEL = {
  node_types: [
    {
      name: "page",
      fields: {
        type: "object",
        properties: {
          summary: { type: "string", title: "Summary", translatable: true },
          sku: { type: "string", title: "SKU" },
        },
      },
    },
  ],
};

describe("translating in the studio", () => {
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

  test("Locale, translatable fields beside their base values, Translate with AI, save, publish: delivery answers the French page", async () => {
    const p = await newProject(MODEL);
    const provider = await api("POST", `/admin/p/${p.slug}/ai/providers`, { name: "Loopback", kind: "openai", base_url: vendor.baseUrl, api_key: "sk-test-key", model: "gpt-test", is_default: true });
    assert.equal(provider.status, 201, JSON.stringify(provider.json));
    const node = await newNode(p.slug, { slug: "about", title: "About us", type: "page", fields: { summary: "Who we are", sku: "A-1" } });
    assert.equal((await api("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`)).status, 200);
    const editor = await newPerson(p.id, "editor");
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signIn(page, editor.email, editor.password, `/studio/p/${p.slug}/nodes/${node.id}`);
    await page.getByRole("textbox", { name: "Title" }).waitFor();
    // The locale switcher: French.
    await page.getByRole("button", { name: /Locale/ }).click();
    await page.getByRole("option", { name: /fr/ }).click();
    await page.waitForURL(/locale=fr/);
    const summary = page.getByRole("textbox", { name: /^Summary/ });
    await summary.waitFor();
    // Only translatable fields are editable; the base value is shown beside; untranslated ones are marked.
    assert.equal(await page.getByRole("textbox", { name: /^SKU/ }).count(), 0);
    assert.ok((await page.getByText("Who we are").count()) > 0, "the base value is shown");
    assert.ok((await page.getByText(/Not translated/).count()) > 0, "an untranslated field is marked");
    assert.deepEqual(await axeViolations(page), []);
    await page.getByRole("button", { name: "Translate with AI" }).click();
    await page.waitForFunction(() => [...document.querySelectorAll("input, textarea")].some((e) => (e as HTMLInputElement).value.startsWith("[fr]")), undefined, { timeout: 15_000 });
    assert.ok(vendor.requests > 0, "the provider was called");
    const draft = await api("GET", `/admin/p/${p.slug}/nodes/${node.id}/translations/fr`);
    assert.equal(draft.status, 200);
    assert.equal(draft.json.data.status, "draft");
    assert.match(draft.json.data.fields.summary, /^\[fr\] /);
    // Each machine-made field says so beside it (and in its description).
    const state = (el: Element) =>
      (el.getAttribute("aria-describedby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" | ");
    await page.locator('[data-pointer="/fields/summary"]').getByText("Machine translation, not reviewed").waitFor();
    assert.match(await summary.evaluate(state), /Machine translation, not reviewed/);
    assert.deepEqual(await axeViolations(page), []);
    // Reviewed by a person: the title edited, saved (still a draft), then published.
    await page.getByRole("textbox", { name: "Title" }).fill("À propos");
    await page.getByRole("textbox", { name: "Slug" }).fill("a-propos");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Saved$/ })
      .waitFor();
    const saved = await api("GET", `/admin/p/${p.slug}/nodes/${node.id}/translations/fr`);
    assert.equal(saved.json.data.meta.title, "À propos");
    assert.equal(saved.json.data.status, "draft");
    assert.equal((await fetch(`${URL_BASE}/api/p/${p.slug}/nodes/by-path/a-propos?locale=fr`)).status, 404);
    await page.getByRole("button", { name: "Publish" }).click();
    // Published: the editor offers Unpublish.
    await page.getByRole("button", { name: "Unpublish", exact: true }).waitFor();
    const live = await fetch(`${URL_BASE}/api/p/${p.slug}/nodes/by-path/a-propos?locale=fr`);
    assert.equal(live.status, 200);
    const body = await live.json();
    assert.equal(body.data.title, "À propos");
    assert.match(body.data.fields.summary, /^\[fr\] /);
    assert.equal(body.data.fields.sku, "A-1");
    // The original's summary changes: the French summary is marked stale in the translation view.
    assert.equal((await api("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { fields: { summary: "Who we are, and why", sku: "A-1" } })).status, 200);
    await page.reload();
    await page.locator('[data-pointer="/fields/summary"]').getByText("Stale: the original changed since").waitFor();
    assert.equal(await page.getByText("Stale: the original changed since").count(), 1);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
