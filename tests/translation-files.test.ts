// The files translators use (issue 41): a node or a subtree exported as XLIFF 2.1 (every export
// validated by libxml2's xmllint against the OASIS XLIFF 2.1 core schema and its metadata module,
// offline: tests/fixtures/xliff/README.md) and as flat JSON; a translated file imported back (states
// mapped to statuses, origin import, each node written once), a unit whose source changed since the
// export rejected with its reason, an unchanged file writing nothing, and bad files refused (400 or
// 404) with nothing written.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DOMParser, type Element, XMLSerializer } from "@xmldom/xmldom";
import { and, eq, sql } from "drizzle-orm";
import { memoryPages, validateXML } from "xmllint-wasm";
import { translationJobUnits, translations, translationUnits } from "../db/schema";
import { OPERATIONS } from "../src/operations";
import { pointerOfId, unitId } from "../src/translations/files";
import { startTranslationWorker } from "../src/translations/jobs-worker";
import { startFakeVendors } from "./fake-vendors";
import { harness, keyWith, seedNode, seedProject, waitFor } from "./helpers";
import { setModel } from "./model.helpers";

const XLIFF = "urn:oasis:names:tc:xliff:document:2.0";
const MDA = "urn:oasis:names:tc:xliff:metadata:2.0";
const SCHEMAS = join(import.meta.dir, "fixtures", "xliff");
const schemaFile = (path: string) => ({ fileName: path, contents: readFileSync(join(SCHEMAS, path), "utf8") });

/** xmllint --schema over the XLIFF 2.1 core schema and the metadata module (local files only). */
async function xsdProblems(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: "export.xlf", contents: xml }],
    schema: [schemaFile("xliff-with-metadata.xsd")],
    preload: [schemaFile("xliff_core_2.0.xsd"), schemaFile("metadata.xsd"), schemaFile("informativeCopiesOf3rdPartySchemas/w3c/xml.xsd")],
    initialMemoryPages: 256,
    maxMemoryPages: memoryPages.GiB,
  });
  return result.valid ? [] : result.errors.map((e) => e.message).slice(0, 10);
}

const MODEL = {
  strict: false,
  block_types: [{ name: "text", schema: { type: "object", properties: { text: { type: "string", translatable: true }, anchor: { type: "string" } } } }],
  node_types: [
    {
      name: "article",
      fields: {
        type: "object",
        properties: {
          summary: { type: "string", translatable: true },
          body: { type: "string", format: "html", translatable: true },
          code: { type: "string" },
        },
      },
    },
  ],
};

const BODY = 'Read <b>this</b> & "that"\r\nfirst';

describe("XLIFF 2.1 and flat JSON files for translators", async () => {
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "5000" }); // a job's units: the job's translations come from a loopback vendor
  const db = h.deps.db;

  async function scene() {
    const p = await seedProject(h, { locales: ["en", "fr", "de"] });
    await setModel(db, p.id, MODEL);
    const n = await seedNode(h, p.slug, {
      slug: "guide",
      title: "The guide",
      type: "article",
      fields: { summary: "A short guide", body: BODY, code: "X-1" },
      blocks: [
        { type: "text", data: { text: "First block", anchor: "one" } },
        { type: "text", data: { text: "Second block", anchor: "two" } },
      ],
    });
    // Not a type of the model: its prose strings are units, under keys that need escaping in an XLIFF id.
    const child = await seedNode(h, p.slug, { slug: "child", title: "The child page", type: "page", parent_id: n.id, fields: { "intro.text": "Welcome home", my_key: "Some more words" } });
    const [b1, b2] = (n.blocks as Array<{ id: string }>).map((b) => b.id);
    return { p, n, child, b1: b1 as string, b2: b2 as string };
  }

  const exportXliff = async (ref: string, id: string, query = "locale=fr") => {
    const res = await h.request("GET", `/admin/p/${ref}/nodes/${id}/xliff?${query}`);
    expect(res.status).toBe(200);
    return res;
  };
  const importFile = (ref: string, xml: string, query = "") => h.request("POST", `/admin/p/${ref}/xliff${query}`, { raw: xml, headers: { "content-type": "application/xliff+xml" } });
  const parse = (xml: string) => new DOMParser().parseFromString(xml, "text/xml");
  const units = (doc: ReturnType<typeof parse>): Element[] => Array.from(doc.getElementsByTagNameNS(XLIFF, "unit"));
  const metaOf = (unit: Element, type: string): string | undefined => Array.from(unit.getElementsByTagNameNS(MDA, "meta")).find((m) => m.getAttribute("type") === type)?.textContent ?? undefined;
  /** Sets a unit's target and state (the unit found by its pointer). */
  function fill(doc: ReturnType<typeof parse>, pointer: string, target: string, state: string): void {
    const unit = units(doc).find((u) => metaOf(u, "pointer") === pointer);
    if (!unit) throw new Error(`no unit ${pointer}`);
    const segment = unit.getElementsByTagNameNS(XLIFF, "segment")[0] as Element;
    segment.setAttribute("state", state);
    let t = segment.getElementsByTagNameNS(XLIFF, "target")[0];
    if (!t) {
      t = doc.createElementNS(XLIFF, "target");
      segment.appendChild(t);
    }
    while (t.firstChild) t.removeChild(t.firstChild);
    t.appendChild(doc.createTextNode(target));
  }
  // xmldom writes a CR in text as it is (which any parser reads as a line feed): as a reference, as the export does.
  const serialize = (doc: ReturnType<typeof parse>): string => new XMLSerializer().serializeToString(doc).replaceAll("\r", "&#13;");
  const fieldStatus = async (ref: string, id: string, locale: string) => {
    const res = await h.request("GET", `/admin/p/${ref}/nodes/${id}/translations/${locale}`);
    expect(res.status).toBe(200);
    return res.json.data as {
      fields: Record<string, unknown>;
      meta: Record<string, unknown>;
      blocks: Record<string, Record<string, unknown>>;
      field_status: Record<string, { status: string; origin: { kind: string } | null; human_edited: boolean }>;
    };
  };
  const revision = async (ref: string, id: string): Promise<number> => (await h.request("GET", `/admin/p/${ref}/nodes/${id}`)).json.data.revision;
  const translationRows = async (projectId: string): Promise<number> =>
    Number((await db.select({ n: sql<number>`count(*)::int` }).from(translations).where(eq(translations.projectId, projectId)))[0]?.n);

  test("pointers become XLIFF ids (NMTOKENs) and back", () => {
    for (const pointer of ["/title", "/fields/summary", "/fields/intro.text", "/fields/my_key", "/blocks/0193a1b2-0000-7000-8000-000000000001/data/items/0/text", "/fields/été ~1 x", "/fields/🙂"]) {
      const id = unitId(pointer);
      expect(id).toMatch(/^[A-Za-z0-9._:-]+$/);
      expect(pointerOfId(id)).toBe(pointer);
    }
    expect(unitId("/fields/summary")).toBe(".fields.summary");
    expect(pointerOfId("fields")).toBeNull();
    expect(pointerOfId(".a_zz_")).toBeNull();
  });

  test("an export is XLIFF 2.1 that validates against the OASIS schema: one unit per translatable unit, its source hash, states from the statuses", async () => {
    const { p, n, b1, b2 } = await scene();
    // A person's title (approved), a machine-like summary through an agent would be machine; here: a person's, then published.
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Le guide" } } })).status).toBe(200);
    const res = await exportXliff(p.slug, n.id);
    expect(res.headers.get("content-type")).toBe("application/xliff+xml; charset=utf-8");
    expect(await xsdProblems(res.text)).toEqual([]);
    // The validation can fail: a state the standard lacks, an id that is no NMTOKEN, a metadata element out of its module.
    expect((await xsdProblems(res.text.replace('state="initial"', 'state="done"'))).join()).toContain("state");
    expect((await xsdProblems(res.text.replace('id=".title"', 'id="/title"'))).join()).toContain("NMTOKEN");
    expect(await xsdProblems(res.text.replace('<mda:meta type="pointer">', '<mda:meta kind="pointer">'))).not.toEqual([]);
    const doc = parse(res.text);
    const root = doc.documentElement as Element;
    expect([root.namespaceURI, root.getAttribute("version"), root.getAttribute("srcLang"), root.getAttribute("trgLang")]).toEqual([XLIFF, "2.1", "en", "fr"]);
    const files = Array.from(doc.getElementsByTagNameNS(XLIFF, "file"));
    expect(files.map((f) => f.getAttribute("id"))).toEqual([`n${n.id}`]);
    const got = units(doc).map((u) => ({
      id: u.getAttribute("id"),
      pointer: metaOf(u, "pointer"),
      state: (u.getElementsByTagNameNS(XLIFF, "segment")[0] as Element).getAttribute("state"),
      source: u.getElementsByTagNameNS(XLIFF, "source")[0]?.textContent,
      target: u.getElementsByTagNameNS(XLIFF, "target")[0]?.textContent ?? null,
      hash: metaOf(u, "source_hash"),
    }));
    const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
    expect(got).toEqual([
      { id: ".title", pointer: "/title", state: "reviewed", source: "The guide", target: "Le guide", hash: sha("The guide") },
      // Fields in the order the node stores them (jsonb: shorter keys first).
      { id: ".fields.body", pointer: "/fields/body", state: "initial", source: BODY, target: null, hash: sha(BODY) },
      { id: ".fields.summary", pointer: "/fields/summary", state: "initial", source: "A short guide", target: null, hash: sha("A short guide") },
      { id: unitId(`/blocks/${b1}/data/text`), pointer: `/blocks/${b1}/data/text`, state: "initial", source: "First block", target: null, hash: sha("First block") },
      { id: unitId(`/blocks/${b2}/data/text`), pointer: `/blocks/${b2}/data/text`, state: "initial", source: "Second block", target: null, hash: sha("Second block") },
    ]);
    // Markup is text, escaped (no inline codes); the CR survives as a character reference.
    expect(res.text).toContain("<source>Read &lt;b&gt;this&lt;/b&gt; &amp; &quot;that&quot;&#13;\nfirst</source>");

    // Published: final; the export still validates.
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Le guide" }, fields: { summary: "Un guide" }, status: "published" } })).status).toBe(
      200,
    );
    const published = parse((await exportXliff(p.slug, n.id)).text);
    const states = Object.fromEntries(units(published).map((u) => [metaOf(u, "pointer"), (u.getElementsByTagNameNS(XLIFF, "segment")[0] as Element).getAttribute("state")]));
    expect([states["/title"], states["/fields/summary"], states["/fields/body"]]).toEqual(["final", "final", "initial"]);
  });

  test("a subtree: one <file> per node, valid; flat JSON carries the same units", async () => {
    const { p, n, child } = await scene();
    const res = await exportXliff(p.slug, n.id, "locale=fr&subtree=true");
    expect(await xsdProblems(res.text)).toEqual([]);
    const doc = parse(res.text);
    expect(Array.from(doc.getElementsByTagNameNS(XLIFF, "file")).map((f) => [f.getAttribute("id"), f.getAttribute("original")])).toEqual([
      [`n${n.id}`, "guide"],
      [`n${child.id}`, "guide/child"],
    ]);
    const childUnits = units(doc).filter((u) => (u.parentNode as Element).getAttribute("id") === `n${child.id}`);
    expect(childUnits.map((u) => [u.getAttribute("id"), metaOf(u, "pointer")])).toEqual([
      [".title", "/title"],
      [".fields.my_5f_key", "/fields/my_key"],
      [".fields.intro_2e_text", "/fields/intro.text"],
    ]);

    const json = await exportXliff(p.slug, n.id, "locale=fr&format=json");
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(json.json).toMatchObject({ node_id: n.id, locale: "fr", source_locale: "en" });
    expect(json.json.units[0]).toEqual({
      id: ".title",
      pointer: "/title",
      source: "The guide",
      target: null,
      source_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      state: "initial",
      status: "missing",
      format: null,
    });
    expect(json.json.units.map((u: { pointer: string }) => u.pointer)).toEqual(units(parse((await exportXliff(p.slug, n.id)).text)).map((u) => metaOf(u, "pointer")));
    const sub = await exportXliff(p.slug, n.id, "locale=fr&format=json&subtree=true");
    expect(sub.json.files.map((f: { node_id: string }) => f.node_id)).toEqual([n.id, child.id]);
  });

  test("a round trip: targets filled, imported, statuses and origin as mapped, the text in the translation; the same file again changes nothing", async () => {
    const { p, n, child, b1, b2 } = await scene();
    const doc = parse((await exportXliff(p.slug, n.id, "locale=fr&subtree=true")).text);
    const frBody = 'Lisez <b>ceci</b> & "cela"\r\nd\'abord';
    fill(doc, "/title", "Le guide", "reviewed");
    fill(doc, "/fields/summary", "Un petit guide", "translated");
    fill(doc, "/fields/body", frBody, "final");
    fill(doc, `/blocks/${b1}/data/text`, "Premier bloc", "translated");
    // b2 left initial: nothing applied. The child's escaped ids come back to their pointers.
    const childUnit = (pointer: string) => units(doc).find((u) => (u.parentNode as Element).getAttribute("id") === `n${child.id}` && metaOf(u, "pointer") === pointer) as Element;
    for (const [pointer, text] of [
      ["/fields/intro.text", "Bienvenue"],
      ["/fields/my_key", "Encore des mots"],
    ] as const) {
      const u = childUnit(pointer);
      const seg = u.getElementsByTagNameNS(XLIFF, "segment")[0] as Element;
      seg.setAttribute("state", "translated");
      const t = doc.createElementNS(XLIFF, "target");
      t.appendChild(doc.createTextNode(text));
      seg.appendChild(t);
    }
    const filled = serialize(doc);
    expect(await xsdProblems(filled)).toEqual([]);
    const before = await revision(p.slug, n.id);
    const res = await importFile(p.slug, filled);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ applied: 6, rejected: [] });
    expect(res.json.data.nodes.map((x: { node_id: string; applied: number }) => [x.node_id, x.applied])).toEqual([
      [n.id, 4],
      [child.id, 2],
    ]);
    // One write per node and locale.
    expect(await revision(p.slug, n.id)).toBe(before + 1);

    const fr = await fieldStatus(p.slug, n.id, "fr");
    expect(fr.meta.title).toBe("Le guide");
    expect(fr.fields).toEqual({ summary: "Un petit guide", body: frBody });
    expect(fr.blocks).toEqual({ [b1]: { text: "Premier bloc" } });
    const s = fr.field_status;
    expect(Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.status]))).toEqual({
      "/title": "approved",
      "/fields/summary": "needs_review",
      "/fields/body": "approved",
      [`/blocks/${b1}/data/text`]: "needs_review",
      [`/blocks/${b2}/data/text`]: "missing",
    });
    expect(s["/title"]?.origin?.kind).toBe("import");
    expect(s["/fields/summary"]?.origin?.kind).toBe("import");
    expect((await fieldStatus(p.slug, child.id, "fr")).fields).toEqual({ "intro.text": "Bienvenue", my_key: "Encore des mots" });

    // The same file again, and a fresh export of the result as it is: nothing written.
    const rows = await db.select().from(translationUnits).where(eq(translationUnits.nodeId, n.id));
    const [tr] = await db
      .select()
      .from(translations)
      .where(and(eq(translations.nodeId, n.id), eq(translations.locale, "fr")));
    const again = await importFile(p.slug, filled);
    expect(again.status).toBe(200);
    expect(again.json.data).toMatchObject({ applied: 0, rejected: [], nodes: [] });
    const fresh = (await exportXliff(p.slug, n.id, "locale=fr&subtree=true")).text;
    expect(await xsdProblems(fresh)).toEqual([]);
    expect((await importFile(p.slug, fresh)).json.data).toMatchObject({ applied: 0, rejected: [], nodes: [] });
    const jsonExport = await exportXliff(p.slug, n.id, "locale=fr&format=json&subtree=true");
    const viaJson = await h.request("POST", `/admin/p/${p.slug}/xliff`, { body: jsonExport.json });
    expect(viaJson.status).toBe(200);
    expect(viaJson.json.data).toMatchObject({ applied: 0, rejected: [], nodes: [] });
    expect(await revision(p.slug, n.id)).toBe(before + 1);
    expect(await db.select().from(translationUnits).where(eq(translationUnits.nodeId, n.id))).toEqual(rows);
    expect(
      (
        await db
          .select()
          .from(translations)
          .where(and(eq(translations.nodeId, n.id), eq(translations.locale, "fr")))
      )[0]?.updatedAt,
    ).toEqual(tr?.updatedAt);

    // A reviewer's approval of the text as it is (translated → reviewed): the status alone changes.
    const review = parse(fresh);
    fill(review, "/fields/summary", "Un petit guide", "reviewed");
    const approved = await importFile(p.slug, serialize(review));
    expect(approved.json.data).toMatchObject({ applied: 1, rejected: [] });
    expect((await fieldStatus(p.slug, n.id, "fr")).field_status["/fields/summary"]?.status).toBe("approved");
  });

  test("a unit whose source changed since the export is rejected with its reason; the others are applied", async () => {
    const { p, n } = await scene();
    const doc = parse((await exportXliff(p.slug, n.id)).text);
    fill(doc, "/title", "Le guide", "translated");
    fill(doc, "/fields/summary", "Un petit guide", "translated");
    const patch = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { fields: { summary: "A shorter guide", body: BODY, code: "X-1" } } });
    expect(patch.status).toBe(200);
    const res = await importFile(p.slug, serialize(doc));
    expect(res.status).toBe(200);
    expect(res.json.data.applied).toBe(1);
    expect(res.json.data.rejected).toEqual([
      { unit: ".fields.summary", node_id: n.id, reason: expect.stringMatching(/^source_changed: the source of \/fields\/summary changed since the file was exported/) },
    ]);
    const fr = await fieldStatus(p.slug, n.id, "fr");
    expect(fr.meta.title).toBe("Le guide");
    expect(fr.fields).toEqual({});
    expect(fr.field_status["/fields/summary"]?.status).toBe("missing");

    // The flat JSON form is checked alike.
    const json = (await exportXliff(p.slug, n.id, "locale=de&format=json")).json;
    json.units[0].source_hash = "0".repeat(64);
    json.units[0].target = "Der Leitfaden";
    json.units[0].state = "translated";
    const viaJson = await h.request("POST", `/admin/p/${p.slug}/xliff`, { body: json });
    expect(viaJson.json.data).toMatchObject({ applied: 0, rejected: [{ unit: ".title", reason: expect.stringMatching(/^source_changed/) }] });
  });

  test("bad files: not XML, a DOCTYPE, another version, an unknown or another project's node: 400 or 404, nothing written", async () => {
    const { p, n } = await scene();
    const other = await scene();
    const good = (await exportXliff(p.slug, n.id)).text;
    const filled = parse(good);
    fill(filled, "/title", "Le guide", "translated");
    const valid = serialize(filled);
    const count = await translationRows(p.id);

    const notXml = await importFile(p.slug, "<xliff version='2.1'><file>");
    expect([notXml.status, notXml.json.error.code, notXml.json.error.details.problem]).toEqual([400, "invalid_request", "not_xml"]);
    expect(notXml.json.error.message).toStartWith("the document is not well-formed XML: ");
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>${valid.replace(/^<\?xml[^>]*\?>/, "").replace("Le guide", "&lol3;")}`;
    const started = performance.now();
    const doctype = await importFile(p.slug, bomb);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(doctype.status).toBe(400);
    expect(doctype.json.error.details.problem).toBe("doctype");
    const external = await importFile(p.slug, `<?xml version="1.0"?><!DOCTYPE xliff SYSTEM "file:///etc/passwd">${valid.replace(/^<\?xml[^>]*\?>/, "")}`);
    expect([external.status, external.json.error.details.problem]).toEqual([400, "doctype"]);
    const v12 = await importFile(p.slug, valid.replace('version="2.1"', 'version="1.2"'));
    expect([v12.status, v12.json.error.details.problem]).toEqual([400, "version"]);
    const v1 = await importFile(p.slug, '<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2"><file/></xliff>');
    expect([v1.status, v1.json.error.details.problem]).toEqual([400, "not_xliff"]);
    const wrongSource = await importFile(p.slug, valid.replace('srcLang="en"', 'srcLang="de"'));
    expect([wrongSource.status, wrongSource.json.error.details.problem]).toEqual([400, "languages"]);
    const defaultTarget = await importFile(p.slug, valid.replace('trgLang="fr"', 'trgLang="en"'));
    expect([defaultTarget.status, defaultTarget.json.error.code]).toEqual([400, "invalid_locale"]);
    const empty = await h.request("POST", `/admin/p/${p.slug}/xliff`, { raw: "", headers: { "content-type": "application/xliff+xml" } });
    expect(empty.status).toBe(400);

    // An unknown node, and another project's, alongside a good file: 404, and the good one is not written either.
    const unknownId = "0193a1b2-0000-7000-8000-0000000000aa";
    const twoFiles = (id: string) => valid.replace("</xliff>", `${valid.slice(valid.indexOf(" <file"), valid.indexOf("</xliff>")).replaceAll(n.id, id)}</xliff>`);
    const unknown = await importFile(p.slug, twoFiles(unknownId));
    expect([unknown.status, unknown.json.error.code]).toEqual([404, "not_found"]);
    const foreign = await importFile(p.slug, twoFiles(other.n.id));
    expect([foreign.status, foreign.json.error.code]).toEqual([404, "not_found"]);
    const foreignJson = (await exportXliff(other.p.slug, other.n.id, "locale=fr&format=json")).json;
    expect((await h.request("POST", `/admin/p/${p.slug}/xliff`, { body: foreignJson })).status).toBe(404);
    // Exports alike: another project's node 404; the default locale or one the project lacks, 400.
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${other.n.id}/xliff?locale=fr`)).status).toBe(404);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/xliff?locale=en`)).json.error.code).toBe("invalid_locale");
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/xliff?locale=ja`)).json.error.code).toBe("invalid_locale");
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/xliff?locale=fr&format=po`)).status).toBe(400);

    // Too large: 413, like every admin body.
    const large = await importFile(p.slug, valid.replace("Le guide", "x".repeat(1024 * 1024)));
    expect([large.status, large.json.error.code]).toEqual([413, "payload_too_large"]);

    expect(await translationRows(p.id)).toBe(count);
    expect(await translationRows(other.p.id)).toBe(0);
    // And the good file alone is applied.
    expect((await importFile(p.slug, valid)).json.data).toMatchObject({ applied: 1, rejected: [] });
  });

  test("inline elements, units that are not the node's, a dry run, and the scopes", async () => {
    const { p, n } = await scene();
    const doc = parse((await exportXliff(p.slug, n.id)).text);
    fill(doc, "/title", "Le guide", "translated");
    fill(doc, "/fields/summary", "x", "translated");
    const summary = units(doc).find((u) => metaOf(u, "pointer") === "/fields/summary") as Element;
    const stray = summary.cloneNode(true) as Element;
    const target = summary.getElementsByTagNameNS(XLIFF, "target")[0] as Element;
    target.appendChild(doc.createElementNS(XLIFF, "ph"));
    stray.setAttribute("id", ".fields.nothing");
    for (const m of Array.from(stray.getElementsByTagNameNS(MDA, "meta"))) if (m.getAttribute("type") === "pointer") m.textContent = "/fields/nothing";
    summary.parentNode?.appendChild(stray);
    const xml = serialize(doc);

    const dry = await importFile(p.slug, xml, "?dry_run=true");
    expect(dry.status).toBe(200);
    expect(dry.json.dry_run).toBe(true);
    expect(await translationRows(p.id)).toBe(0);

    const reader = await keyWith(h, ["content:read"], [p.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/xliff?locale=fr`, { key: reader })).status).toBe(200);
    const refused = await h.request("POST", `/admin/p/${p.slug}/xliff`, { key: reader, raw: xml, headers: { "content-type": "application/xliff+xml" } });
    expect([refused.status, refused.json.error.code]).toEqual([403, "insufficient_scope"]);

    const res = await importFile(p.slug, xml);
    expect(res.status).toBe(200);
    expect(res.json.data.applied).toBe(1);
    expect(res.json.data.rejected.map((r: { unit: string; reason: string }) => [r.unit, r.reason.split(":")[0]])).toEqual([
      [".fields.summary", "the target holds inline elements; this service reads text only (markup as escaped text)"],
      [".fields.nothing", "unknown_unit"],
    ]);
  });

  test("a translation job's units: XLIFF 2.1 that validates, only the job's units in the asked locale; imported unchanged (XLIFF and JSON), nothing written", async () => {
    const vendors = await startFakeVendors();
    const worker = startTranslationWorker(h.deps, { intervalMs: 50 });
    try {
      const { p, n, child, b1 } = await scene();
      const provider = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, {
        body: { name: "ok", kind: "openai", model: "gpt-test", base_url: vendors.base("ok"), api_key: "sk-test-1234567890", is_default: true },
      });
      expect(provider.status).toBe(201);
      // A person's French title of the child: the job leaves it alone, so the job's file does not carry it.
      expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${child.id}/translations/fr`, { body: { meta: { title: "La page enfant" } } })).status).toBe(200);
      const started = await h.request("POST", `/admin/p/${p.slug}/translation-jobs`, { body: { root_node_id: n.id, locales: ["fr", "de"] } });
      expect(started.status).toBe(201);
      const jobId: string = started.json.data.id;
      await waitFor(async () => (await h.request("GET", `/admin/p/${p.slug}/translation-jobs/${jobId}`)).json.data.status === "done", { timeout: 30_000, what: "the job to finish" });
      const jobUnits = await db
        .select()
        .from(translationJobUnits)
        .where(and(eq(translationJobUnits.jobId, jobId), eq(translationJobUnits.locale, "fr")));
      const exportJob = (query: string) => h.request("GET", `/admin/p/${p.slug}/translation-jobs/${jobId}/xliff?${query}`);

      const res = await exportJob("locale=fr");
      expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/xliff+xml; charset=utf-8"]);
      expect(await xsdProblems(res.text)).toEqual([]);
      const doc = parse(res.text);
      expect(doc.documentElement?.getAttribute("trgLang")).toBe("fr");
      const files = Array.from(doc.getElementsByTagNameNS(XLIFF, "file")).map((f) => f.getAttribute("id"));
      expect(files).toEqual([`n${n.id}`, `n${child.id}`]);
      const exported = units(doc).map((u) => `${((u.parentNode as Element).getAttribute("id") ?? "").slice(1)} ${metaOf(u, "pointer")}`);
      expect(exported.toSorted()).toEqual(jobUnits.map((u) => `${u.nodeId} ${u.pointer}`).toSorted());
      expect(exported).not.toContain(`${child.id} /title`);
      expect(exported).toContain(`${n.id} /blocks/${b1}/data/text`);
      // The job's machine text, for review: state translated, the target its answer.
      const title = units(doc).find((u) => metaOf(u, "pointer") === "/title" && (u.parentNode as Element).getAttribute("id") === `n${n.id}`) as Element;
      expect(new XMLSerializer().serializeToString(title.getElementsByTagNameNS(XLIFF, "segment")[0] as Element)).toContain('state="translated"');
      expect(title.getElementsByTagNameNS(XLIFF, "target")[0]?.textContent).toBe("[translated] The guide");

      // The file as exported, imported: nothing written (no revision, no status, the translation untouched).
      const before = [await revision(p.slug, n.id), await revision(p.slug, child.id)];
      const rows = await db.select().from(translationUnits).where(eq(translationUnits.locale, "fr"));
      const trs = await db.select().from(translations).where(eq(translations.projectId, p.id));
      expect((await importFile(p.slug, res.text)).json.data).toMatchObject({ applied: 0, unchanged: jobUnits.length, rejected: [], nodes: [] });
      const json = await exportJob("locale=fr&format=json");
      expect(json.status).toBe(200);
      expect(json.json).toMatchObject({ job_id: jobId, locale: "fr", source_locale: "en" });
      expect(json.json.files.map((f: { node_id: string }) => f.node_id)).toEqual([n.id, child.id]);
      const viaJson = await h.request("POST", `/admin/p/${p.slug}/xliff`, { body: json.json });
      expect([viaJson.status, viaJson.json.data]).toEqual([200, expect.objectContaining({ applied: 0, rejected: [], nodes: [] })]);
      expect([await revision(p.slug, n.id), await revision(p.slug, child.id)]).toEqual(before);
      expect(await db.select().from(translationUnits).where(eq(translationUnits.locale, "fr"))).toEqual(rows);
      expect(await db.select().from(translations).where(eq(translations.projectId, p.id))).toEqual(trs);

      // The other locale; a locale to name; one the job lacks; another project's job.
      const de = await exportJob("locale=de");
      expect(await xsdProblems(de.text)).toEqual([]);
      expect(parse(de.text).documentElement?.getAttribute("trgLang")).toBe("de");
      expect(units(parse(de.text)).length).toBe(jobUnits.length + 1); // the child's title too
      const none = await exportJob("");
      expect([none.status, none.json.error.code, none.json.error.message]).toEqual([400, "invalid_request", expect.stringContaining("fr, de")]);
      const source = await exportJob("locale=en");
      expect([source.status, source.json.error.code]).toEqual([400, "invalid_locale"]);
      const q = await seedProject(h, { locales: ["en", "fr"] });
      expect((await h.request("GET", `/admin/p/${q.slug}/translation-jobs/${jobId}/xliff?locale=fr`)).status).toBe(404);
    } finally {
      await worker.stop();
      await vendors.stop();
    }
  });

  test("the routes are REST only and described in the OpenAPI document", async () => {
    const doc = (await h.request("GET", "/swagger/json")).json;
    const get = doc?.paths?.["/admin/p/{ref}/nodes/{id}/xliff"]?.get;
    expect(Object.keys(get?.responses?.["200"]?.content ?? {})).toEqual(["application/xliff+xml; charset=utf-8"]);
    expect(doc?.paths?.["/admin/p/{ref}/xliff"]?.post).toBeDefined();
    expect(Object.keys(doc?.paths?.["/admin/p/{ref}/translation-jobs/{id}/xliff"]?.get?.responses?.["200"]?.content ?? {})).toEqual(["application/xliff+xml; charset=utf-8"]);
    const ops = OPERATIONS.filter((op) => ["export_translation_file", "export_translation_job_file", "import_translation_file"].includes(op.name));
    expect(ops.map((op) => [op.name, op.tool])).toEqual([
      ["export_translation_file", undefined],
      ["export_translation_job_file", undefined],
      ["import_translation_file", undefined],
    ]);
  });
});
