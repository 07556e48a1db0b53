// The files translators use, over REST only (docs/translation.md, "Files translators use"): a
// node's, a subtree's or a translation job's units as XLIFF 2.1 or flat JSON, and the import of such a file. Files are
// for translators' tools; an agent reads and writes translations with get_translation and
// upsert_translation, so these are not MCP tools.
import { z } from "zod";
import { projectOperation } from "../core/operation";
import { AppError } from "../errors";
import { MAX_BODY_BYTES } from "../lib/json";
import { canonicalLocale } from "../lib/locales";
import { Id, Locale, NodeId } from "../lib/schemas";
import { type ExportFile, exportFiles, exportJobFiles, type ImportFile, importFiles, jsonFile, parseXliff, pointerOfId, toXliff, unitId, XLIFF_TYPE, type XliffState } from "./files";

const State = z.enum(["initial", "translated", "reviewed", "final"]);

const exportTranslationFileOp = projectOperation({
  name: "export_translation_file",
  title: "Export a node's units for translators",
  description:
    "A node's translatable units into one locale, for a translator's tool: an XLIFF 2.1 document (application/xliff+xml; one <file> per node, one <unit> per unit with its " +
    "JSON Pointer, source hash and status in the metadata module, the segment's state from the unit's status), or with format=json the same as flat JSON. " +
    "subtree=true: the node and every descendant. Translate the targets and send the file back to POST /admin/p/{ref}/xliff.",
  scopes: ["content:read"],
  input: z.object({
    node_id: NodeId,
    locale: Locale.describe("the locale to translate into (not the project's default locale)"),
    subtree: z.boolean().optional().describe("true: the node and its descendants, one file entry per node"),
    format: z.enum(["xliff", "json"]).optional().describe("xliff (default): XLIFF 2.1; json: flat JSON { node_id, locale, units: [...] }"),
  }),
  output: z.object({ content_type: z.string(), body: z.string() }),
  http: {
    method: "GET",
    path: "/admin/p/:ref/nodes/:id/xliff",
    params: { id: "node_id" },
    tag: "translations",
    raw: { field: "body", type: XLIFF_TYPE, typeField: "content_type" },
    summary: "Export a node (or a subtree) as XLIFF 2.1 or flat JSON for translators",
  },
  run: async ({ deps, project }, args) => {
    const { locale, files } = await exportFiles(deps.db, project, args.node_id, args.locale, args.subtree === true);
    const [first] = files;
    return fileAnswer(project.defaultLocale, locale, files, args.format, args.subtree || !first ? {} : null);
  },
});

const exportJobFileOp = projectOperation({
  name: "export_translation_job_file",
  title: "Export a translation job's units for translators",
  description:
    "A translation job's units in one of its locales (locale may be omitted when the job has one), for a translator's tool: the same XLIFF 2.1 document as a node's export " +
    "(one <file> per node of the job, by path; one <unit> per unit the job lists that the node still has, its source as it is now), or with format=json the flat JSON bundle " +
    "{ job_id, locale, source_locale, files }. The job's machine translations are the targets (state translated), for review. Send the file back to POST /admin/p/{ref}/xliff.",
  scopes: ["content:read"],
  input: z.object({
    job_id: Id,
    locale: Locale.optional().describe("one of the job's locales; required when it has more than one"),
    format: z.enum(["xliff", "json"]).optional().describe("xliff (default): XLIFF 2.1; json: flat JSON { job_id, locale, source_locale, files: [...] }"),
  }),
  output: z.object({ content_type: z.string(), body: z.string() }),
  http: {
    method: "GET",
    path: "/admin/p/:ref/translation-jobs/:id/xliff",
    params: { id: "job_id" },
    tag: "translations",
    raw: { field: "body", type: XLIFF_TYPE, typeField: "content_type" },
    summary: "Export a translation job's units as XLIFF 2.1 or flat JSON for translators",
  },
  run: async ({ deps, project }, args) => {
    const { locale, files } = await exportJobFiles(deps.db, project, args.job_id, args.locale);
    return fileAnswer(project.defaultLocale, locale, files, args.format, { job_id: args.job_id.toLowerCase() });
  },
});

/**
 * An export's answer: the XLIFF document, or the flat JSON form (`bundle`: the files listed under
 * `files`, after the bundle's own fields; null: the one node's file alone).
 */
function fileAnswer(sourceLocale: string, locale: string, files: readonly ExportFile[], format: "xliff" | "json" | undefined, bundle: Record<string, string> | null) {
  if (format !== "json") return { content_type: XLIFF_TYPE, body: toXliff(sourceLocale, locale, files) };
  const [first] = files;
  const body =
    bundle === null && first ? { ...jsonFile(locale, first), source_locale: sourceLocale } : { ...bundle, locale, source_locale: sourceLocale, files: files.map((f) => jsonFile(locale, f)) };
  return { content_type: "application/json; charset=utf-8", body: JSON.stringify(body, null, 1) };
}

// The flat JSON form as exported: every field it carries may come back (only node_id, locale and each
// unit's id or pointer, target, source_hash and state are read).
const JsonUnit = z.object({
  id: z.string().max(2000).optional(),
  pointer: z.string().max(2000).optional(),
  source: z.string().optional(),
  target: z.string().nullable().optional(),
  source_hash: z.string().max(128).nullable().optional(),
  state: State.optional().describe("default initial: nothing applied"),
  status: z.string().optional(),
  format: z.string().nullable().optional(),
});
const JsonFile = z.object({
  node_id: NodeId,
  locale: Locale,
  source_locale: Locale.optional(),
  path: z.string().optional(),
  revision: z.number().int().optional(),
  units: z.array(JsonUnit).max(10_000),
});
const JsonBundle = z.object({ job_id: Id.optional(), locale: Locale, source_locale: Locale.optional(), files: z.array(JsonFile.extend({ source_locale: Locale.optional() })).max(500) });

const importTranslationFileOp = projectOperation({
  name: "import_translation_file",
  title: "Import a translated file",
  description:
    "Import an XLIFF 2.0/2.1 document (the body, application/xliff+xml) or the flat JSON form, as exported by GET /admin/p/{ref}/nodes/{id}/xliff. " +
    "Every node it names must be this project's (404 otherwise, nothing written). Each unit's source hash is checked against the node's source as it is now: " +
    "a unit whose source changed since the export is rejected with its reason (source_changed), not applied. States map to statuses: initial applies nothing; " +
    "translated → needs_review; reviewed and final → approved. Each node's translation is written once, as a draft (its working copy), with origin import. " +
    "A file imported as it was exported changes nothing.",
  scopes: ["content:write"],
  input: z.object({
    document: z.union([z.string().min(1).max(MAX_BODY_BYTES), JsonFile, JsonBundle]).describe("the XLIFF document (the request body as text) or the flat JSON form"),
  }),
  output: z.object({
    applied: z.number().int().describe("units written (a new text, or a new state of the same text)"),
    unchanged: z.number().int().describe("units as they are already, or in state initial"),
    rejected: z.array(z.object({ unit: z.string(), node_id: z.string(), reason: z.string() })),
    nodes: z.array(z.object({ node_id: z.string(), applied: z.number().int(), revision: z.number().int() })).describe("each node written, with its revision after"),
  }),
  http: {
    method: "POST",
    path: "/admin/p/:ref/xliff",
    body: "document",
    tag: "translations",
    summary: "Import a translated XLIFF 2.1 (or flat JSON) file",
    description: "The body: an XLIFF document (Content-Type application/xliff+xml) or the flat JSON form (application/json), at most 1 MiB.",
    errors: [413],
  },
  run: async ({ deps, project, write, now }, { document }) => {
    const { locale, files } = readDocument(project.defaultLocale, document);
    return importFiles(deps.db, write, project, locale, files, now);
  },
});

const sameLocale = (a: string, b: string): boolean => (canonicalLocale(a) ?? a).toLowerCase() === (canonicalLocale(b) ?? b).toLowerCase();

function checkSource(defaultLocale: string, source: string | undefined): void {
  if (source !== undefined && !sameLocale(source, defaultLocale))
    throw new AppError("invalid_request", `the file's source language (${source}) is not the project's default locale (${defaultLocale})`, { field: "document", problem: "languages" });
}

/** The files a document holds, into one locale. */
function readDocument(defaultLocale: string, document: string | z.output<typeof JsonFile> | z.output<typeof JsonBundle>): { locale: string; files: ImportFile[] } {
  if (typeof document === "string") {
    const x = parseXliff(document);
    checkSource(defaultLocale, x.srcLang);
    return { locale: x.trgLang, files: x.files.map((f) => ({ node_id: f.node_id, locale: x.trgLang, units: f.units })) };
  }
  const fromJson = (f: z.output<typeof JsonFile>): ImportFile => {
    checkSource(defaultLocale, f.source_locale);
    return {
      node_id: f.node_id.toLowerCase(),
      locale: f.locale,
      units: f.units.map((u) => ({
        unit: u.id ?? (u.pointer === undefined ? "" : unitId(u.pointer)),
        pointer: u.pointer ?? (u.id === undefined ? null : pointerOfId(u.id)),
        source_hash: u.source_hash ?? null,
        target: u.target ?? null,
        state: (u.state ?? "initial") as XliffState,
      })),
    };
  };
  if ("files" in document) {
    checkSource(defaultLocale, document.source_locale);
    return { locale: document.locale, files: document.files.map(fromJson) };
  }
  return { locale: document.locale, files: [fromJson(document)] };
}

/** REST routes only: no MCP tool. */
export const translationFileOperations = [exportTranslationFileOp, exportJobFileOp, importTranslationFileOp];
