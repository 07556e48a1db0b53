// The machine obeys the house (issue 41): a glossary per project and locale (JSON and CSV), style
// notes, and one pipeline for every caller, tested against loopback vendors that break it on
// purpose (tests/fake-vendors.ts: "sloppy" loses a tag or a URL and ignores the glossary,
// "sloppy-once" until told, "obedient" follows it): each bad answer is retried once, then stored as
// needs_review with its failures, never as a good translation. The translation memory and the
// unchanged-source skip are counted in vendor calls.
import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { glossaryTerms, translations } from "../db/schema";
import { type Scenario, startFakeVendors, fakeTranslation as T } from "./fake-vendors";
import { keyWith, seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

const vendors = await startFakeVendors();

describe("glossary and the machine translation pipeline", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "2000" });
  const { h } = m;
  const db = h.deps.db;
  afterAll(async () => {
    m.stop();
    await vendors.stop();
  });

  async function project(scenario: "ok" | "obedient" | "sloppy" | "sloppy-once" = "ok") {
    const p = await seedProject(h, { locales: ["en", "de", "fr"] });
    const res = await h.request("POST", `/admin/p/${p.id}/ai/providers`, {
      body: { name: scenario, kind: "openai", model: "gpt-test", base_url: vendors.base(scenario), api_key: "sk-test-1234567890", is_default: true },
    });
    if (res.status !== 201) throw new Error(`provider: ${res.status} ${res.text}`);
    return p;
  }
  const GLOSSARY = {
    terms: [
      { source: "Cart", target: "Warenkorb", locale: "de", kind: "forced" },
      { source: "Acme Cloud", locale: "*", kind: "dnt", case_sensitive: true },
      { source: "Einkaufswagen", locale: "de", kind: "forbidden" },
    ],
    style: { default: "Plain words.", locales: { de: "Sie, never du." } },
  };
  const translate = (slug: string, id: string, locale = "de", body: Record<string, unknown> = {}) => h.request("POST", `/admin/p/${slug}/nodes/${id}/translations/${locale}/translate`, { body });
  const systemPrompts = (scenario: Scenario, from: number) =>
    vendors
      .received(scenario)
      .slice(from)
      .map((r) => r.body.messages.find((x: any) => x.role === "system").content as string);
  const userTexts = (scenario: Scenario, from: number) =>
    vendors
      .received(scenario)
      .slice(from)
      .map((r) => r.body.messages.find((x: any) => x.role === "user").content as string);

  test("the glossary: replaced and read whole, as JSON and CSV; bad terms are 400 with nothing written; another project's is its own", async () => {
    const p = await project();
    const put = await h.request("PUT", `/admin/p/${p.slug}/glossary`, { body: GLOSSARY });
    expect(put.status).toBe(200);
    const read = await h.request("GET", `/admin/p/${p.slug}/glossary`);
    expect(read.json.data).toEqual({
      terms: [
        { source: "Acme Cloud", locale: "*", kind: "dnt", case_sensitive: true },
        { source: "Cart", target: "Warenkorb", locale: "de", kind: "forced", case_sensitive: false },
        { source: "Einkaufswagen", locale: "de", kind: "forbidden", case_sensitive: false },
      ],
      style: GLOSSARY.style,
    });
    // CSV out: a header, one row per term; a cell that reads as a formula is guarded.
    await h.request("PUT", `/admin/p/${p.slug}/glossary`, { body: { terms: [...GLOSSARY.terms, { source: "=SUM(A1)", locale: "fr", kind: "dnt" }] } });
    const csv = await h.request("GET", `/admin/p/${p.slug}/glossary.csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.text.split("\r\n")).toEqual([
      "source,target,locale,kind,case_sensitive",
      "Acme Cloud,,*,dnt,true",
      "Cart,Warenkorb,de,forced,false",
      "Einkaufswagen,,de,forbidden,false",
      `"'=SUM(A1)",,fr,dnt,false`,
    ]);
    // The style notes were kept by the PUT without style; CSV in replaces the terms, round trip exact.
    expect((await h.request("GET", `/admin/p/${p.slug}/glossary`)).json.data.style).toEqual(GLOSSARY.style);
    const back = await h.request("PUT", `/admin/p/${p.slug}/glossary.csv`, { raw: csv.text, headers: { "content-type": "text/csv" } });
    expect(back.status).toBe(200);
    expect((await h.request("GET", `/admin/p/${p.slug}/glossary.csv`)).text).toBe(csv.text);
    const quoted = await h.request("PUT", `/admin/p/${p.slug}/glossary.csv`, {
      raw: 'kind,source,target,locale\r\nforced,"Sign in, now","Anmelden, jetzt",de\r\n',
      headers: { "content-type": "text/csv" },
    });
    expect(quoted.json.data.terms).toEqual([{ source: "Sign in, now", target: "Anmelden, jetzt", locale: "de", kind: "forced", case_sensitive: false }]);

    const before = await db.select().from(glossaryTerms).where(eq(glossaryTerms.projectId, p.id));
    for (const [terms, field] of [
      [[{ source: "Cart", locale: "de", kind: "forced" }], "terms.0.target"],
      [[{ source: "Cart", target: "X", locale: "de", kind: "dnt" }], "terms.0.target"],
      [[{ source: "Cart", target: "X", locale: "it", kind: "forced" }], "terms.0.locale"],
      [
        [
          { source: "Cart", locale: "de", kind: "dnt" },
          { source: "Cart", locale: "de", kind: "dnt" },
        ],
        "terms.1.source",
      ],
    ] as const) {
      const r = await h.request("PUT", `/admin/p/${p.slug}/glossary`, { body: { terms } });
      expect([r.status, r.json.error.details.field]).toEqual([400, field]);
    }
    const badCsv = await h.request("PUT", `/admin/p/${p.slug}/glossary.csv`, { raw: "source,locale,kind\r\nCart,de,sometimes\r\n", headers: { "content-type": "text/csv" } });
    expect([badCsv.status, badCsv.json.error.message]).toEqual([400, "CSV row 2: kind must be forced, dnt or forbidden"]);
    expect(await db.select().from(glossaryTerms).where(eq(glossaryTerms.projectId, p.id))).toEqual(before);
    // Another project: its own (empty) glossary; a reader may read but not write.
    const q = await project();
    expect((await h.request("GET", `/admin/p/${q.slug}/glossary`)).json.data).toEqual({ terms: [], style: {} });
    const reader = await keyWith(h, ["content:read"], [p.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/glossary`, { key: reader })).status).toBe(200);
    expect((await h.request("PUT", `/admin/p/${p.slug}/glossary`, { key: reader, body: GLOSSARY })).status).toBe(403);
    // Over MCP, an agent reads it.
    const client = await m.connect((await m.token(p.slug)).token);
    expect((await call(client, "get_glossary", {})).terms).toHaveLength(1);
  });

  test("a vendor that drops a tag or changes a URL: retried once, then stored as needs_review with the failures; one that mends on retry is machine", async () => {
    const sloppy = await project("sloppy");
    const n = await seedNode(h, sloppy.slug, { slug: "links", title: "Visit https://shop.example/cart now", seo: { description: "Read <b>this</b> first" } });
    const from = vendors.received("sloppy").length;
    const r = await translate(sloppy.slug, n.id);
    expect(r.status).toBe(200);
    const fields = r.json.data.translated_fields as Array<{ pointer: string; status: string; failures: string[] }>;
    expect(fields.map((f) => [f.pointer, f.status])).toEqual([
      ["/title", "needs_review"],
      ["/seo/description", "needs_review"],
    ]);
    expect(fields[0]!.failures).toEqual(['missing: "https://shop.example/cart" must be kept as it is']);
    expect(fields[1]!.failures).toEqual(['missing: "<b>" must be kept as it is']);
    // Two calls each (the retry names what was wrong), and what is stored says it needs review.
    expect(vendors.received("sloppy").length - from).toBe(4);
    expect(systemPrompts("sloppy", from)[1]).toContain('A previous answer was refused for these reasons; avoid them: missing: "https://shop.example/cart" must be kept as it is.');
    const status = (await h.request("GET", `/admin/p/${sloppy.slug}/nodes/${n.id}/translations/de`)).json.data.field_status;
    expect([status["/title"].status, status["/seo/description"].status]).toEqual(["needs_review", "needs_review"]);
    // needs_review is never sent to the memory: a second node with the same title goes to the vendor again.
    const twin = await seedNode(h, sloppy.slug, { slug: "twin", title: "Visit https://shop.example/cart now" });
    const again = vendors.received("sloppy").length;
    expect((await translate(sloppy.slug, twin.id)).json.data.translated_fields[0].from_memory).toBe(false);
    expect(vendors.received("sloppy").length - again).toBe(2);

    const mends = await project("sloppy-once");
    const m2 = await seedNode(h, mends.slug, { slug: "links", title: "Visit https://shop.example/cart now" });
    const from2 = vendors.received("sloppy-once").length;
    const ok = (await translate(mends.slug, m2.id)).json.data.translated_fields[0];
    expect([ok.status, ok.failures, vendors.received("sloppy-once").length - from2]).toEqual(["machine", [], 2]);
    const [stored] = await db.select().from(translations).where(eq(translations.nodeId, m2.id));
    expect(stored!.meta.title).toBe(T("Visit https://shop.example/cart now"));
  });

  test("the glossary and style go to the vendor; forced terms must be used, forbidden ones absent, do-not-translate terms kept", async () => {
    const plain = await project("ok");
    const obedient = await project("obedient");
    for (const p of [plain, obedient]) expect((await h.request("PUT", `/admin/p/${p.slug}/glossary`, { body: GLOSSARY })).status).toBe(200);
    const title = "Your Cart on Acme Cloud";
    const [a, b] = [await seedNode(h, plain.slug, { slug: "cart", title }), await seedNode(h, obedient.slug, { slug: "cart", title })];

    // The "ok" vendor knows no glossary: "Cart" stays "Cart", twice, so it needs review.
    const fromOk = vendors.received("ok").length;
    const ignored = (await translate(plain.slug, a.id)).json.data.translated_fields[0];
    expect([ignored.status, ignored.failures]).toEqual(["needs_review", ['glossary: "Cart" must be translated as "Warenkorb"']]);
    // The vendor saw the term as a token, the glossary and the style notes.
    expect(userTexts("ok", fromOk)[0]).toBe("Your Cart on ⟦1⟧");
    const system = systemPrompts("ok", fromOk)[0]!;
    expect(system).toContain('Glossary for de: always translate "Cart" as "Warenkorb".');
    expect(system).toContain('Never use these words in the translation: "Einkaufswagen".');
    expect(system).toContain("House style: Plain words.\nSie, never du.");

    // The obedient vendor follows it: machine, one call, "Acme Cloud" kept.
    const fromOb = vendors.received("obedient").length;
    const followed = (await translate(obedient.slug, b.id)).json.data;
    expect([followed.translated_fields[0].status, vendors.received("obedient").length - fromOb]).toEqual(["machine", 1]);
    expect(followed.translation.meta.title).toBe("[translated] Your Warenkorb on Acme Cloud");

    // A forbidden term in the answer is refused (here the glossary forces it, so the vendor uses it).
    await h.request("PUT", `/admin/p/${obedient.slug}/glossary`, {
      body: { terms: [...GLOSSARY.terms.filter((t) => t.kind !== "forced"), { source: "Cart", target: "Einkaufswagen", locale: "de", kind: "forced" }] },
    });
    const c = await seedNode(h, obedient.slug, { slug: "cart-2", title: "The Cart" });
    const forbidden = (await translate(obedient.slug, c.id)).json.data.translated_fields[0];
    expect([forbidden.status, forbidden.failures]).toEqual(["needs_review", ['glossary: "Einkaufswagen" must not appear in the translation']]);
    // translate_text goes through the same pipeline.
    const text = await h.request("POST", `/admin/p/${obedient.slug}/ai/translate`, { body: { text: "Welcome to Acme Cloud", to: "de" } });
    expect(text.json.data).toMatchObject({ translation: "[translated] Welcome to Acme Cloud", status: "machine", failures: [] });
  });

  test("the memory and the unchanged source: counted in vendor calls", async () => {
    const p = await project("ok");
    const blocks = [{ type: "text", data: { text: "Shared paragraph" } }];
    const first = await seedNode(h, p.slug, { slug: "one", title: "First page", blocks });
    const from = vendors.received("ok").length;
    const one = (await translate(p.slug, first.id)).json.data;
    expect(vendors.received("ok").length - from).toBe(2);
    expect(one.translated_fields.every((f: { from_memory: boolean }) => !f.from_memory)).toBe(true);
    // Again, nothing changed: no call, nothing written.
    const revision = (await h.request("GET", `/admin/p/${p.slug}/nodes/${first.id}`)).json.data.revision;
    const same = (await translate(p.slug, first.id)).json.data;
    expect([same.translated_fields, same.skipped.map((s: { reason: string }) => s.reason), vendors.received("ok").length - from]).toEqual([
      [],
      ["already translated from this source", "already translated from this source"],
      2,
    ]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${first.id}`)).json.data.revision).toBe(revision);
    // Another page sharing a paragraph: that unit comes from the memory, the title from the vendor.
    const second = await seedNode(h, p.slug, { slug: "two", title: "Second page", blocks });
    const two = (await translate(p.slug, second.id)).json.data;
    expect(two.translated_fields.map((f: { pointer: string; from_memory: boolean }) => f.from_memory)).toEqual([false, true]);
    expect(vendors.received("ok").length - from).toBe(3);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${second.id}/translations/de`)).json.data.field_status[`/blocks/${second.blocks[0].id}/data/text`].origin.kind).toBe("memory");
    // One source field changed: only that field goes to the vendor.
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${first.id}`, { body: { title: "First page, renamed" } });
    const changed = (await translate(p.slug, first.id)).json.data;
    expect([changed.translated_fields.map((f: { pointer: string }) => f.pointer), vendors.received("ok").length - from]).toEqual([["/title"], 4]);
  });
});
