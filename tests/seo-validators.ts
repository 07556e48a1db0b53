// Outside validators for delivery SEO, offline: the `jsonld` processor (safe mode) over the
// schema.org context, schema.org's own vocabulary (release 30.0) for property/type checks, and
// libxml2 (xmllint-wasm) with the sitemaps.org XSDs. Fixtures: tests/fixtures/README.md.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import jsonld from "jsonld";
import { memoryPages, validateXML } from "xmllint-wasm";

const FIXTURES = join(import.meta.dir, "fixtures");
const read = (path: string): string => readFileSync(join(FIXTURES, path), "utf8");

const SCHEMA_CONTEXT = JSON.parse(read("schemaorg/schemaorgcontext.jsonld"));
const VOCAB = JSON.parse(read("schemaorg/vocabulary.json")) as {
  properties: Record<string, { domains: string[]; ranges: string[] }>;
  types: Record<string, string[]>;
};

/** The context document of https://schema.org, from the fixture; anything else is refused (no network). */
async function documentLoader(url: string): Promise<{ contextUrl: null; documentUrl: string; document: unknown }> {
  if (/^https?:\/\/schema\.org\/?$/.test(url)) return { contextUrl: null, documentUrl: url, document: SCHEMA_CONTEXT };
  throw new Error(`no document loading in tests: ${url}`);
}

/** Expanded with jsonld in safe mode: throws on any dropped term, relative @id or invalid value. */
export async function expandSafe(doc: unknown): Promise<unknown[]> {
  return (await jsonld.expand(doc as jsonld.JsonLdDocument, { documentLoader, safe: true } as unknown as jsonld.Options.Expand)) as unknown[];
}

/** The type and all its supertypes (schema.org subTypeOf, transitively). */
function typeAndSupertypes(type: string): Set<string> {
  const out = new Set<string>();
  const todo = [type];
  while (todo.length > 0) {
    const t = todo.pop()!;
    if (out.has(t)) continue;
    out.add(t);
    todo.push(...(VOCAB.types[t] ?? []));
  }
  return out;
}

const URL_PROPERTIES = new Set(["url", "item", "image"]);
const DATE_PROPERTIES = new Set(["datePublished", "dateModified"]);

/**
 * Every property checked against the type it sits on (schema.org domainIncludes, with
 * supertypes), typed values against its rangeIncludes, @id references against the node they name,
 * URLs absolute http(s), dates ISO 8601. Returns the problems found (empty = valid).
 */
export function schemaProblems(doc: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const graph = (Array.isArray(doc["@graph"]) ? doc["@graph"] : [doc]) as Record<string, unknown>[];
  const byId = new Map<string, Record<string, unknown>>();
  for (const n of graph) if (typeof n["@id"] === "string") byId.set(n["@id"], n);
  const typeOf = (v: Record<string, unknown>): string | null => {
    if (typeof v["@type"] === "string") return v["@type"];
    const ref = typeof v["@id"] === "string" ? byId.get(v["@id"]) : undefined;
    return ref && typeof ref["@type"] === "string" ? ref["@type"] : null;
  };
  const visit = (node: Record<string, unknown>, where: string): void => {
    const type = node["@type"];
    if (typeof type !== "string") {
      problems.push(`${where}: no @type`);
      return;
    }
    if (!(type in VOCAB.types)) problems.push(`${where}: ${type} is not a schema.org type`);
    const lineage = typeAndSupertypes(type);
    for (const [prop, value] of Object.entries(node)) {
      if (prop.startsWith("@")) continue;
      const def = VOCAB.properties[prop];
      if (!def) {
        problems.push(`${where}.${prop}: not a schema.org property`);
        continue;
      }
      if (!def.domains.some((d) => lineage.has(d))) problems.push(`${where}.${prop}: not a property of ${type} (domains: ${def.domains.join(", ")})`);
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === "object" && v !== null) {
          const vt = typeOf(v as Record<string, unknown>);
          if (vt === null) problems.push(`${where}.${prop}: object without a type or a known @id`);
          else if (!def.ranges.some((r) => typeAndSupertypes(vt).has(r))) problems.push(`${where}.${prop}: ${vt} is not in its range (${def.ranges.join(", ")})`);
          if (typeof (v as Record<string, unknown>)["@type"] === "string") visit(v as Record<string, unknown>, `${where}.${prop}`);
        } else if (URL_PROPERTIES.has(prop)) {
          if (typeof v !== "string" || !/^https?:\/\/[^/\s]+/.test(v)) problems.push(`${where}.${prop}: ${String(v)} is not an absolute URL`);
        } else if (DATE_PROPERTIES.has(prop)) {
          if (typeof v !== "string" || Number.isNaN(Date.parse(v)) || !/^\d{4}-\d{2}-\d{2}T/.test(v)) problems.push(`${where}.${prop}: ${String(v)} is not an ISO date-time`);
        } else if (!def.ranges.some((r) => ["Text", "Number", "Integer", "URL", "Date", "DateTime", "Boolean", "Language"].includes(r))) {
          problems.push(`${where}.${prop}: a literal where ${def.ranges.join(", ")} is expected`);
        }
      }
    }
  };
  for (const [i, n] of graph.entries()) visit(n, `@graph[${i}]`);
  return problems;
}

// ---- sitemaps ----

const xsd = (name: string) => ({ fileName: name, contents: read(`sitemaps/${name}`) });

/** xmllint --schema over the sitemaps.org XSDs (urlset with the xhtml:link and image:image declarations, or siteindex). */
export async function xsdProblems(xml: string, kind: "urlset" | "index"): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: kind === "urlset" ? "sitemap.xml" : "sitemap-index.xml", contents: xml }],
    schema: [kind === "urlset" ? xsd("urlset-hreflang.xsd") : xsd("siteindex.xsd")],
    preload: kind === "urlset" ? [xsd("sitemap.xsd"), xsd("xhtml-link.xsd"), xsd("image.xsd")] : [],
    initialMemoryPages: 256,
    maxMemoryPages: 3 * memoryPages.GiB,
  });
  return result.errors.map((e) => e.message).slice(0, 10);
}
