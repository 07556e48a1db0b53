import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { publishedTranslations, translations } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { fakeTranslation, type Scenario, startFakeVendors } from "./fake-vendors";
import { seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

const vendors = await startFakeVendors();
const T = fakeTranslation;

describe("MCP AI tools: translate_text and translate_node", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "2000" });
  afterAll(async () => {
    m.stop();
    await vendors.stop();
  });
  const db = m.h.deps.db;
  const apiKey = `sk-mcp-${crypto.randomUUID().replace(/-/g, "")}`;

  async function setup(scenario: Scenario | null = "ok") {
    const p = await seedProject(m.h, { locales: ["en", "fr", "de"] });
    let providerId: string | null = null;
    if (scenario) {
      const res = await m.h.request("POST", `/admin/p/${p.slug}/ai/providers`, {
        body: { name: "vendor", kind: "openai", model: "gpt-test", base_url: vendors.base(scenario), api_key: apiKey, is_default: true },
      });
      if (res.status !== 201) throw new Error(`provider: ${res.status} ${res.text}`);
      providerId = res.json.data.id;
    }
    const { token } = await m.token(p.slug);
    return { p, providerId, client: await m.connect(token) };
  }

  test("translate_text translates with the default or a chosen provider and its stored key", async () => {
    const { client, providerId } = await setup();
    const before = vendors.received("ok").length;
    const r = await call(client, "translate_text", { text: "Hello {name}", to: "fr", field: "title" });
    expect(r).toEqual({
      translation: T("Hello {name}"),
      provider: "openai",
      model: "gpt-test",
      status: "machine",
      failures: [],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
    const sent = vendors.received("ok").slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(JSON.stringify(sent[0]!.body.messages)).toContain("English (en)");
    expect(JSON.stringify(sent[0]!.body.messages)).toContain("French (fr)");
    const chosen = await call(client, "translate_text", { text: "Bonjour", from: "fr", to: "de", provider_id: providerId });
    expect(chosen.translation).toBe(T("Bonjour"));
  });

  test("translate_text errors: no provider, unknown provider, vendor refusal (key never echoed), bad input", async () => {
    const none = await setup(null);
    expect(await callError(none.client, "translate_text", { text: "Hi", to: "fr" })).toMatch(/^no_provider/);
    expect(await callError(none.client, "translate_text", { text: "Hi", to: "fr", provider_id: uuidv7() })).toMatch(/^not_found: provider not found/);
    const refused = await setup("401");
    const text = await callError(refused.client, "translate_text", { text: "Hi", to: "fr" });
    expect(text).toMatch(/^provider_error/);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(apiKey.slice(-8));
    const ok = await setup();
    expect(await callError(ok.client, "translate_text", { text: "", to: "fr" })).toContain("text");
    expect(await callError(ok.client, "translate_text", { text: "x".repeat(32_001), to: "fr" })).toContain("text");
    expect(await callError(ok.client, "translate_text", { text: "Hi", to: "not a tag" })).toMatch(/invalid_locale/);
    expect(m.h.logs.join("\n")).not.toContain(apiKey);
  });

  test("translate_node translates title, SEO description and block prose into a draft, keeping links, ids and styling", async () => {
    const { p, client } = await setup();
    const n = await seedNode(m.h, p.slug, {
      slug: "home",
      title: "Welcome home",
      seo: { description: "The best place", canonical: "https://example.com/home" },
      blocks: [
        { type: "hero", data: { heading: "Big news", cta: { label: "Read more", href: "https://example.com/news" }, color: "#ff0000" } },
        {
          type: "list",
          data: {
            items: [
              { text: "First point", url: "/one" },
              { text: "Second point", icon: "star" },
            ],
          },
        },
        { type: "image", data: { src: "https://cdn.example.com/a.png", alt: "A sunset", width: 800 } },
        { type: "spacer", data: { size: "lg" } },
      ],
    });
    const [hero, list, image, spacer] = n.blocks.map((b: any) => b.id);
    // An existing published translation with a localised slug: the slug survives; the machine output is its
    // working copy, awaiting review (state changed), and what readers see stays the published version.
    await m.h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { slug: "accueil", title: "Old" }, blocks: { [spacer]: { size: "sm" } }, status: "published" } });

    const before = vendors.received("ok").length;
    const r = await call(client, "translate_node", { node_id: n.id, locale: "fr" });
    expect(r.provider).toBe("openai");
    expect(r.model).toBe("gpt-test");
    // jsonb keeps object keys in its own order, so compare the set of fields.
    expect(r.translated_fields.map((f: any) => f.field).sort()).toEqual(
      ["seo.description", `blocks.${hero}.heading`, `blocks.${hero}.cta.label`, `blocks.${list}.items.0.text`, `blocks.${list}.items.1.text`, `blocks.${image}.alt`].sort(),
    );
    expect(r.translated_fields[0]).toEqual({ field: "seo.description", pointer: "/seo/description", chars: "The best place".length, status: "machine", from_memory: false, failures: [] });
    // The title a person wrote (and published) is kept: never overwritten without force.
    expect(r.skipped).toEqual([{ field: "title", pointer: "/title", reason: "written by a person: kept (force re-translates it)" }]);
    expect(vendors.received("ok").length - before).toBe(6);

    expect(r.translation).toMatchObject({ locale: "fr", status: "published", state: "changed", meta: { slug: "accueil", title: "Old", description: T("The best place") } });
    const [row] = await db
      .select()
      .from(translations)
      .where(and(eq(translations.nodeId, n.id), eq(translations.locale, "fr")));
    expect(row!).toMatchObject({ status: "published", changed: true });
    const [live] = await db
      .select()
      .from(publishedTranslations)
      .where(and(eq(publishedTranslations.nodeId, n.id), eq(publishedTranslations.locale, "fr")));
    expect(live!).toMatchObject({ meta: { slug: "accueil", title: "Old" }, blocks: { [spacer]: { size: "sm" } } });
    expect(row!.blocks).toEqual({
      [hero]: { heading: T("Big news"), cta: { label: T("Read more") } },
      [list]: {
        items: [
          { text: T("First point"), url: "/one" },
          { text: T("Second point"), icon: "star" },
        ],
      },
      [image]: { alt: T("A sunset") },
      [spacer]: { size: "sm" },
    });
    // Asked again: nothing changed at the source, so nothing is sent; with force, every field is sent anew (the memory is not asked).
    const again = await call(client, "translate_node", { node_id: n.id, locale: "fr" });
    expect([again.translated_fields, again.skipped.length, vendors.received("ok").length - before]).toEqual([[], 7, 6]);
    const forced = await call(client, "translate_node", { node_id: n.id, locale: "fr", force: true });
    expect([forced.translated_fields.length, vendors.received("ok").length - before]).toEqual([7, 13]);
    const merged = await call(client, "get_node", { id: n.id, locale: "fr" });
    expect(merged.node).toMatchObject({ title: T("Welcome home"), translated: true, translation_status: "published", translation_state: "changed" });
    expect(merged.node.blocks[0].data).toEqual({ heading: T("Big news"), cta: { label: T("Read more"), href: "https://example.com/news" }, color: "#ff0000" });
    expect(merged.node.blocks[2].data).toEqual({ src: "https://cdn.example.com/a.png", alt: T("A sunset"), width: 800 });
  });

  test("translate_node errors: default or unknown locale, unknown node, no provider, failing vendor: nothing stored", async () => {
    const { p, client } = await setup();
    const n = await seedNode(m.h, p.slug, { slug: "page", title: "Page" });
    const before = vendors.requests.length;
    expect(await callError(client, "translate_node", { node_id: n.id, locale: "en" })).toMatch(/^invalid_locale: "en" is the project's default locale/);
    expect(await callError(client, "translate_node", { node_id: n.id, locale: "it" })).toMatch(/^invalid_locale/);
    expect(await callError(client, "translate_node", { node_id: uuidv7(), locale: "fr" })).toMatch(/^not_found/);
    expect(vendors.requests.length).toBe(before);

    const none = await setup(null);
    const n2 = await seedNode(m.h, none.p.slug, { slug: "page" });
    expect(await callError(none.client, "translate_node", { node_id: n2.id, locale: "fr" })).toMatch(/^no_provider/);
    expect(await db.select().from(translations).where(eq(translations.nodeId, n2.id))).toHaveLength(0);

    const failing = await setup("500");
    const n3 = await seedNode(m.h, failing.p.slug, { slug: "page", blocks: [{ type: "text", data: { text: "Body" } }] });
    await m.h.request("PUT", `/admin/p/${failing.p.slug}/nodes/${n3.id}/translations/de`, { body: { meta: { title: "Seite" }, status: "published" } });
    const sent = vendors.received("500").length;
    expect(await callError(failing.client, "translate_node", { node_id: n3.id, locale: "de" })).toMatch(/^provider_error/);
    expect(vendors.received("500").length - sent).toBe(1); // stops at the first failure
    const [kept] = await db.select().from(translations).where(eq(translations.nodeId, n3.id));
    expect(kept).toMatchObject({ status: "published", changed: false, meta: { title: "Seite" } });
  });
});
