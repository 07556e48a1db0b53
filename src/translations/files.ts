// The files translators use (docs/translation.md, "Files translators use"): a node's, or a subtree's,
// translatable units into one locale as an XLIFF 2.1 document or as flat JSON, each unit with the
// hash of the source text it was exported with; and the import of such a file, which checks each
// unit's hash against the node's source as it is now (a unit whose source changed since is reported,
// not applied), maps XLIFF states to unit statuses and writes each node's translation once, through
// upsertTranslation, with origin `import`. A file imported as it was exported writes nothing.
import { DOMParser, type Element } from "@xmldom/xmldom";
import { and, asc, eq, like, ne, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nodes, type Project, translationJobUnits, translationUnits, type UnitOrigin, type UnitStatus } from "../../db/schema";
import { findTranslation, getBlocks, getNode, projectLocale } from "../content/service";
import { AppError, notFound } from "../errors";
import { isUuid } from "../lib/ids";
import { isStorableText } from "../lib/json";
import { escapeLike } from "../lib/sql";
import { setTranslatedText, sourceUnits, type TranslationValues, translatedText, type Unit } from "../model/units";
import type { WriteContext } from "../write/context";
import { getJob } from "./jobs";
import { upsertTranslation } from "./service";
import { type FieldStatus, fieldStatus, modelOf, originOf, type UnitState, unitRows } from "./status";

const XLIFF_NS = "urn:oasis:names:tc:xliff:document:2.0";
const MDA_NS = "urn:oasis:names:tc:xliff:metadata:2.0";
export const XLIFF_TYPE = "application/xliff+xml; charset=utf-8";
/** Nodes one export or import covers at most (a subtree's). */
const MAX_FILE_NODES = 500;

/** The XLIFF segment states, in the order of the standard (initial, translated, reviewed, final). */
export type XliffState = "initial" | "translated" | "reviewed" | "final";

/** A unit's status as a segment state: missing and stale are initial (nothing to take as a translation of the source as it is). */
function stateOf(status: FieldStatus["status"]): XliffState {
  if (status === "machine" || status === "needs_review") return "translated";
  if (status === "approved") return "reviewed";
  if (status === "published") return "final";
  return "initial";
}

/** What an imported state makes of a unit: initial applies nothing; translated awaits review; reviewed and final are approved. */
const statusOfState = (state: XliffState): UnitStatus | null => (state === "initial" ? null : state === "translated" ? "needs_review" : "approved");

/**
 * A unit's pointer as an XLIFF id (an NMTOKEN), reversibly: `/` becomes `.`; letters, digits and
 * `-` stay; any other character is `_` + its code point in hex + `_` ("/fields/summary" →
 * ".fields.summary", "/fields/a.b" → ".fields.a_2e_b").
 */
export function unitId(pointer: string): string {
  let out = "";
  for (const ch of pointer) {
    if (ch === "/") out += ".";
    else if (/^[A-Za-z0-9-]$/.test(ch)) out += ch;
    else out += `_${(ch.codePointAt(0) ?? 0).toString(16)}_`;
  }
  return out;
}

/** The pointer a unit id names, or null when the id is not one unitId writes. */
export function pointerOfId(id: string): string | null {
  let out = "";
  for (let i = 0; i < id.length; i++) {
    const ch = id[i] as string;
    if (ch === ".") out += "/";
    else if (/^[A-Za-z0-9-]$/.test(ch)) out += ch;
    else if (ch === "_") {
      const end = id.indexOf("_", i + 1);
      const hex = end < 0 ? "" : id.slice(i + 1, end);
      if (!/^[0-9a-f]{1,6}$/.test(hex) || Number.parseInt(hex, 16) > 0x10ffff) return null;
      out += String.fromCodePoint(Number.parseInt(hex, 16));
      i = end;
    } else return null;
  }
  return out.startsWith("/") ? out : null;
}

// ---------------------------------------------------------------------------------------------
// Export

interface ExportUnit {
  readonly id: string;
  readonly pointer: string;
  readonly source: string;
  readonly target: string | null;
  readonly source_hash: string;
  readonly state: XliffState;
  /** Our status behind the state (missing, machine, needs_review, stale, approved, published). */
  readonly status: FieldStatus["status"];
  readonly format: Unit["format"];
}

export interface ExportFile {
  readonly node_id: string;
  readonly path: string;
  readonly revision: number;
  readonly units: ExportUnit[];
}

/** One node's units into `locale`: its source, its translation's working copy and each unit's status. */
async function nodeFile(
  db: Db,
  project: Project,
  node: { id: string; path: string; revision: number; title: string; type: string; seo?: unknown; fields?: unknown },
  locale: string,
): Promise<ExportFile> {
  const [blocks, model, tr, rows] = await Promise.all([getBlocks(db, node.id), modelOf(db, project.id), findTranslation(db, node.id, locale), unitRows(db, node.id, locale)]);
  const units = sourceUnits({ ...node, blocks }, model);
  const values: TranslationValues = tr
    ? { meta: tr.meta as Record<string, unknown>, fields: tr.fields as Record<string, unknown>, blocks: tr.blocks as TranslationValues["blocks"] }
    : { meta: {}, fields: {}, blocks: {} };
  const statuses = fieldStatus(units, values, rows);
  return {
    node_id: node.id,
    path: node.path,
    revision: node.revision,
    units: units.map((u) => {
      const status = statuses[u.pointer]?.status ?? "missing";
      return { id: unitId(u.pointer), pointer: u.pointer, source: u.text, target: translatedText(values, u.pointer) ?? null, source_hash: u.hash, state: stateOf(status), status, format: u.format };
    }),
  };
}

/** The node's file, or with `subtree` the node's and each descendant's (by path), into `locale`. */
export async function exportFiles(db: Db, project: Project, nodeId: string, locale: string, subtree: boolean): Promise<{ locale: string; files: ExportFile[] }> {
  const loc = targetLocale(project, locale);
  const root = await getNode(db, project.id, nodeId);
  const all = subtree
    ? await db
        .select()
        .from(nodes)
        .where(and(eq(nodes.projectId, project.id), or(eq(nodes.id, root.id), like(nodes.path, `${escapeLike(root.path)}/%`))))
        .orderBy(asc(nodes.path))
        .limit(MAX_FILE_NODES + 1)
    : [root];
  if (all.length > MAX_FILE_NODES) throw new AppError("invalid_request", `the subtree has more than ${MAX_FILE_NODES} nodes: export its branches one by one`, { field: "subtree" });
  const files: ExportFile[] = [];
  for (const n of all) files.push(await nodeFile(db, project, n, loc));
  return { locale: loc, files };
}

/**
 * A translation job's units into one of its locales (`locale` may be omitted when it has only one):
 * one file per node of the job, by path, holding the units the job lists for that locale that the
 * node still has, with their source as it is now (its hash the one an import checks).
 */
export async function exportJobFiles(db: Db, project: Project, jobId: string, locale: string | undefined): Promise<{ locale: string; files: ExportFile[] }> {
  const job = await getJob(db, project.id, jobId);
  const loc = locale === undefined ? job.locales[0] : targetLocale(project, locale);
  if (loc === undefined || (locale === undefined && job.locales.length > 1))
    throw new AppError("invalid_request", `locale: this job translates into ${job.locales.join(", ")}: name one`, { field: "locale", locales: job.locales });
  if (!job.locales.includes(loc)) throw new AppError("invalid_locale", `locale: the job does not translate into "${loc}" (it does into ${job.locales.join(", ")})`, { field: "locale" });
  const units = await db
    .select({ nodeId: translationJobUnits.nodeId, pointer: translationJobUnits.pointer, path: nodes.path })
    .from(translationJobUnits)
    .innerJoin(nodes, and(eq(nodes.id, translationJobUnits.nodeId), eq(nodes.projectId, project.id)))
    .where(and(eq(translationJobUnits.jobId, job.id), eq(translationJobUnits.locale, loc)))
    .orderBy(asc(nodes.path));
  const byNode = new Map<string, Set<string>>();
  for (const u of units) byNode.set(u.nodeId, (byNode.get(u.nodeId) ?? new Set()).add(u.pointer));
  if (byNode.size > MAX_FILE_NODES)
    throw new AppError("invalid_request", `the job covers more than ${MAX_FILE_NODES} nodes: export its subtrees with GET /admin/p/{ref}/nodes/{id}/xliff?subtree=true`, { field: "job_id" });
  const files: ExportFile[] = [];
  for (const [nodeId, pointers] of byNode) {
    const file = await nodeFile(db, project, await getNode(db, project.id, nodeId), loc);
    const kept = file.units.filter((u) => pointers.has(u.pointer));
    if (kept.length > 0) files.push({ ...file, units: kept });
  }
  return { locale: loc, files };
}

function targetLocale(project: Project, locale: string): string {
  const loc = projectLocale(project, locale);
  if (loc === project.defaultLocale) throw new AppError("invalid_locale", `"${loc}" is the project's default locale (the source): name the locale to translate into`, { field: "locale" });
  return loc;
}

// XML 1.0 text: & < > escaped, CR kept as a character reference (a parser would fold it into LF), and
// the characters XML 1.0 cannot carry at all (C0 controls but tab, LF and CR) written as nothing.
const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;" };
const escapeXml = (s: string): string => s.replace(/[&<>"\r]/g, (c) => XML_ESCAPES[c] ?? c).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "");

const meta = (type: string, value: string | number): string => `<mda:meta type="${type}">${escapeXml(String(value))}</mda:meta>`;

/**
 * An XLIFF 2.1 document: one `<file>` per node (id `n<node id>`, original its path), the node's id
 * and revision in its metadata; one `<unit>` per translatable unit (id from its pointer, name the
 * pointer), the pointer, source hash, format and status in the unit's metadata
 * (urn:oasis:names:tc:xliff:metadata:2.0, category "cms"), one segment with its state, the source
 * and the target when the translation carries one. Markup (html, markdown) is text, escaped.
 */
export function toXliff(sourceLocale: string, targetLocale: string, files: readonly ExportFile[]): string {
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<xliff xmlns="${XLIFF_NS}" xmlns:mda="${MDA_NS}" version="2.1" srcLang="${escapeXml(sourceLocale)}" trgLang="${escapeXml(targetLocale)}">`,
  ];
  for (const f of files) {
    out.push(` <file id="n${f.node_id}" original="${escapeXml(f.path)}">`);
    out.push(`  <mda:metadata><mda:metaGroup category="cms">${meta("node_id", f.node_id)}${meta("revision", f.revision)}</mda:metaGroup></mda:metadata>`);
    if (f.units.length === 0) out.push(`  <group id="empty"/>`); // a file holds at least one unit or group
    for (const u of f.units) {
      const metas = `${meta("pointer", u.pointer)}${meta("source_hash", u.source_hash)}${u.format ? meta("format", u.format) : ""}${meta("status", u.status)}`;
      out.push(`  <unit id="${u.id}" name="${escapeXml(u.pointer)}">`);
      out.push(`   <mda:metadata><mda:metaGroup category="cms">${metas}</mda:metaGroup></mda:metadata>`);
      const target = u.target === null ? "" : `<target>${escapeXml(u.target)}</target>`;
      out.push(`   <segment state="${u.state}"><source>${escapeXml(u.source)}</source>${target}</segment>`);
      out.push("  </unit>");
    }
    out.push(" </file>");
  }
  out.push("</xliff>", "");
  return out.join("\n");
}

/** The flat JSON form of one node's file. */
export const jsonFile = (locale: string, f: ExportFile) => ({
  node_id: f.node_id,
  locale,
  path: f.path,
  revision: f.revision,
  units: f.units.map((u) => ({ id: u.id, pointer: u.pointer, source: u.source, target: u.target, source_hash: u.source_hash, state: u.state, status: u.status, format: u.format })),
});

// ---------------------------------------------------------------------------------------------
// Import

/** A unit as a file brings it back. */
export interface ImportUnit {
  /** The unit's id in the file (what a rejection names). */
  readonly unit: string;
  readonly pointer: string | null;
  readonly source_hash: string | null;
  readonly target: string | null;
  readonly state: XliffState;
  /** Why the unit cannot be taken as it is (not one segment, inline elements): it is rejected with this reason. */
  readonly invalid?: string;
}

export interface ImportFile {
  readonly node_id: string;
  readonly locale: string;
  readonly units: readonly ImportUnit[];
}

const bad = (message: string, details: Record<string, unknown> = {}): AppError => new AppError("invalid_request", message, { field: "document", ...details });

const STATES = new Set<string>(["initial", "translated", "reviewed", "final"]);

/**
 * The units of an XLIFF 2.x document (2.0 or 2.1: the core is the same). Parsed as XML (xmldom),
 * never by pattern; a DOCTYPE (and so any entity declaration) is refused, as is anything that is
 * not well-formed, not XLIFF 2, or not into one locale.
 */
export function parseXliff(text: string): { srcLang: string; trgLang: string; files: Array<{ node_id: string; units: ImportUnit[] }> } {
  if (!isStorableText(text)) throw bad("the document must not contain NUL characters or unpaired surrogates");
  let doc: ReturnType<DOMParser["parseFromString"]>;
  let first: string | undefined;
  try {
    // Every error stops the parse (xmldom throws what onError throws, as a ParseError).
    doc = new DOMParser({
      onError: (level, message) => {
        if (level === "warning") return;
        first ??= message;
        throw new Error(message);
      },
    }).parseFromString(text, "text/xml");
  } catch (err) {
    // xmldom expands no entity it was not born with: a document declaring its own fails on its first use.
    if (/<!DOCTYPE/i.test(text)) throw bad("a DOCTYPE is not accepted (XLIFF 2 documents have none)", { problem: "doctype" });
    throw bad(`the document is not well-formed XML: ${first ?? (err instanceof Error ? err.message : String(err))}`, { problem: "not_xml" });
  }
  return readXliff(doc.documentElement, doc.doctype !== null);
}

function readXliff(root: Element | null, hasDoctype: boolean): ReturnType<typeof parseXliff> {
  if (hasDoctype) throw bad("a DOCTYPE is not accepted (XLIFF 2 documents have none)", { problem: "doctype" });
  if (!root || root.namespaceURI !== XLIFF_NS || root.localName !== "xliff") throw bad(`the document is not XLIFF 2 (its root must be <xliff> in ${XLIFF_NS})`, { problem: "not_xliff" });
  const version = root.getAttribute("version");
  if (version !== "2.0" && version !== "2.1") throw bad(`XLIFF version ${JSON.stringify(version)} is not read here: export an XLIFF 2.1 file`, { problem: "version" });
  const srcLang = root.getAttribute("srcLang") ?? "";
  const trgLang = root.getAttribute("trgLang") ?? "";
  if (srcLang === "" || trgLang === "") throw bad("the document must name srcLang and trgLang", { problem: "languages" });
  const files = children(root, XLIFF_NS, "file").map((file) => {
    const nodeId = cmsMeta(file).get("node_id") ?? (file.getAttribute("id") ?? "").replace(/^n/, "");
    if (!isUuid(nodeId)) throw bad(`file ${JSON.stringify(file.getAttribute("id"))} does not name a node (a node_id in its metadata, or an id n<node id>)`, { problem: "file" });
    return { node_id: nodeId.toLowerCase(), units: unitsOf(file) };
  });
  if (files.length === 0) throw bad("the document holds no <file>", { problem: "not_xliff" });
  return { srcLang, trgLang, files };
}

const children = (el: Element, ns: string, name: string): Element[] => {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && (c as Element).namespaceURI === ns && (c as Element).localName === name) out.push(c as Element);
  return out;
};

/** The `cms` metadata of an element (its own <mda:metadata>, not its descendants'). */
function cmsMeta(el: Element): Map<string, string> {
  const out = new Map<string, string>();
  for (const md of children(el, MDA_NS, "metadata"))
    for (const group of children(md, MDA_NS, "metaGroup")) {
      if (group.getAttribute("category") !== "cms") continue;
      for (const m of children(group, MDA_NS, "meta")) out.set(m.getAttribute("type") ?? "", m.textContent ?? "");
    }
  return out;
}

/** A file's units, groups walked through. */
function unitsOf(el: Element): ImportUnit[] {
  const out: ImportUnit[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType !== 1 || (c as Element).namespaceURI !== XLIFF_NS) continue;
    const child = c as Element;
    if (child.localName === "group") out.push(...unitsOf(child));
    else if (child.localName === "unit") out.push(readUnit(child));
  }
  return out;
}

/** Text only: inline elements (<ph>, <pc>, <mrk>…) are not part of what this service exports. */
function plainText(el: Element): string | null {
  let out = "";
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3 || c.nodeType === 4) out += c.nodeValue ?? "";
    else if (c.nodeType === 1) return null;
  }
  return out;
}

function readUnit(el: Element): ImportUnit {
  const id = el.getAttribute("id") ?? "";
  const metas = cmsMeta(el);
  const pointer = metas.get("pointer") ?? pointerOfId(id);
  const segments = children(el, XLIFF_NS, "segment");
  const seg = segments[0];
  const base = { unit: id, pointer, source_hash: metas.get("source_hash") ?? null };
  if (segments.length !== 1 || !seg) return { ...base, target: null, state: "initial", invalid: "the unit must hold exactly one <segment> (as exported)" };
  const stateAttr = seg.getAttribute("state") || "initial";
  const state = (STATES.has(stateAttr) ? stateAttr : "initial") as XliffState;
  const targetEl = children(seg, XLIFF_NS, "target")[0];
  const target = targetEl ? plainText(targetEl) : null;
  if (targetEl && target === null) return { ...base, target: null, state, invalid: "the target holds inline elements; this service reads text only (markup as escaped text)" };
  return { ...base, target, state };
}

export interface ImportResult {
  /** Units whose text (or only their state) was written. */
  applied: number;
  /** Units as the service has them already (or initial: nothing to apply). */
  unchanged: number;
  rejected: Array<{ unit: string; node_id: string; reason: string }>;
  nodes: Array<{ node_id: string; applied: number; revision: number }>;
}

/** What one node's units ask: new texts (each with the status its state maps to), state-only changes, and how many are as they are. */
interface NodePlan {
  readonly texts: Map<string, { text: string; status: UnitStatus }>;
  readonly states: Map<string, { status: UnitStatus; hash: string }>;
  unchanged: number;
}

/**
 * Imports files (XLIFF read by parseXliff, or flat JSON) into `locale`: every node they name must be
 * the project's (404 otherwise, nothing written); then each unit is checked against the node's
 * source as it is now, and each node's changed units are written in one upsertTranslation.
 */
export async function importFiles(db: Db, ctx: WriteContext, project: Project, locale: string, files: readonly ImportFile[], now: Date): Promise<ImportResult> {
  const loc = targetLocale(project, locale);
  const byNode = new Map<string, ImportUnit[]>();
  for (const f of files) {
    if (targetLocale(project, f.locale) !== loc) throw bad("every file of one import must be into the same locale", { problem: "languages" });
    byNode.set(f.node_id, [...(byNode.get(f.node_id) ?? []), ...f.units]);
  }
  if (byNode.size > MAX_FILE_NODES) throw bad(`an import covers at most ${MAX_FILE_NODES} nodes`, { problem: "too_many_nodes" });
  // Every node first: an unknown node, or another project's, is 404 before anything is written.
  const found = new Map<string, Node>();
  for (const id of byNode.keys()) {
    const node = await getNode(db, project.id, id).catch((err: unknown) => {
      throw err instanceof AppError && err.code === "not_found" ? notFound(`node ${id}`) : err;
    });
    found.set(id, node);
  }
  const result: ImportResult = { applied: 0, unchanged: 0, rejected: [], nodes: [] };
  const who = originOf(ctx.actor);
  const state: UnitState = { origin: { ...who, kind: "import" } satisfies UnitOrigin, humanEdited: who.kind === "person" };
  for (const [nodeId, units] of byNode) {
    const node = found.get(nodeId) as Node;
    const plan = await planNode(db, project, node, loc, units, result);
    result.unchanged += plan.unchanged;
    if (plan.texts.size === 0 && plan.states.size === 0) continue;
    const written = await writeNode(db, ctx, project, node, loc, plan, state, now).catch((err: unknown) => {
      // The write refused (the content model, say): the node's units are reported, the other nodes go on.
      if (!(err instanceof AppError) || err.status >= 500 || err.code === "not_found") throw err;
      for (const pointer of [...plan.texts.keys(), ...plan.states.keys()]) result.rejected.push({ unit: unitId(pointer), node_id: nodeId, reason: `${err.code}: ${err.message}` });
      return false;
    });
    if (!written) continue;
    const applied = plan.texts.size + plan.states.size;
    result.applied += applied;
    result.nodes.push({ node_id: nodeId, applied, revision: (await getNode(db, project.id, nodeId)).revision });
  }
  return result;
}

type Node = Awaited<ReturnType<typeof getNode>>;

const valuesOf = (tr: Awaited<ReturnType<typeof findTranslation>>): TranslationValues =>
  tr ? { meta: tr.meta as Record<string, unknown>, fields: tr.fields as Record<string, unknown>, blocks: tr.blocks as TranslationValues["blocks"] } : { meta: {}, fields: {}, blocks: {} };

async function planNode(db: Db, project: Project, node: Node, loc: string, units: readonly ImportUnit[], result: ImportResult): Promise<NodePlan> {
  const [blocks, model, tr, rows] = await Promise.all([getBlocks(db, node.id), modelOf(db, project.id), findTranslation(db, node.id, loc), unitRows(db, node.id, loc)]);
  const source = new Map(sourceUnits({ ...node, blocks }, model).map((u) => [u.pointer, u]));
  const values = valuesOf(tr);
  const statuses = fieldStatus([...source.values()], values, rows);
  const plan: NodePlan = { texts: new Map(), states: new Map(), unchanged: 0 };
  const reject = (u: ImportUnit, reason: string) => result.rejected.push({ unit: u.unit, node_id: node.id, reason });
  const seen = new Set<string>();
  for (const u of units) {
    if (u.invalid) {
      reject(u, u.invalid);
      continue;
    }
    const src = u.pointer === null ? undefined : source.get(u.pointer);
    if (u.pointer === null || !src) {
      reject(u, `unknown_unit: the node has no translatable unit ${u.pointer === null ? `with id ${JSON.stringify(u.unit)}` : `at ${u.pointer}`}`);
      continue;
    }
    if (seen.has(u.pointer)) {
      reject(u, `duplicate_unit: ${u.pointer} appears twice in the file`);
      continue;
    }
    seen.add(u.pointer);
    const wanted = statusOfState(u.state);
    if (wanted === null) {
      plan.unchanged++; // initial: nothing to apply
      continue;
    }
    if (u.source_hash === null) {
      reject(u, "no_source_hash: the unit carries no source hash; export the file again and translate that");
      continue;
    }
    if (u.source_hash !== src.hash) {
      reject(u, `source_changed: the source of ${u.pointer} changed since the file was exported (its hash is now ${src.hash}, the file's ${u.source_hash}); export it again`);
      continue;
    }
    if (u.target === null || u.target.trim() === "") {
      reject(u, `no_target: state ${u.state} without a target`);
      continue;
    }
    if (!isStorableText(u.target)) {
      reject(u, "invalid_text: the target contains NUL characters or unpaired surrogates");
      continue;
    }
    const current = statuses[u.pointer]?.status ?? "missing";
    if (translatedText(values, u.pointer) !== u.target) plan.texts.set(u.pointer, { text: u.target, status: wanted });
    // The same text: only its state may say something new (a reviewer's approval); as exported (published is
    // exported final, machine translated) it changes nothing, and a state never takes a published unit back.
    else if (stateOf(current) === u.state || wanted === current || current === "published") plan.unchanged++;
    else plan.states.set(u.pointer, { status: wanted, hash: src.hash });
  }
  return plan;
}

/**
 * The node's write: its translation's working copy with the imported texts, in one upsertTranslation
 * (each unit with its status, origin import); then the units whose state alone changed (a reviewer's
 * approval of the text as it is) get their status, made from the source as it is now.
 */
async function writeNode(db: Db, ctx: WriteContext, project: Project, node: Node, loc: string, plan: NodePlan, state: UnitState, now: Date): Promise<true> {
  if (plan.texts.size > 0) {
    const [blocks, tr] = await Promise.all([getBlocks(db, node.id), findTranslation(db, node.id, loc)]);
    const values = structuredClone(valuesOf(tr));
    for (const [pointer, { text }] of plan.texts) setTranslatedText(values, { ...node, blocks }, pointer, text);
    const perUnit = (pointer: string): UnitState | undefined => {
      const change = plan.texts.get(pointer);
      return change ? { ...state, status: change.status } : undefined;
    };
    // Held to the revision the units were checked against: a write to the node since (its source, say) is a conflict, reported for its units.
    ctx.state.checked = false;
    const held: WriteContext = { ...ctx, expected: { nodeId: node.id, revision: node.revision } };
    await upsertTranslation(db, held, project, node.id, loc, { meta: values.meta, fields: values.fields, blocks: values.blocks }, now, false, state.origin, perUnit);
  }
  if (plan.states.size > 0)
    await db.transaction(async (tx) => {
      for (const [pointer, { status, hash }] of plan.states)
        await tx
          .update(translationUnits)
          .set({ status, sourceHash: hash, sourceRevision: node.revision, staleSince: null, updatedAt: now })
          .where(and(eq(translationUnits.nodeId, node.id), eq(translationUnits.locale, loc), eq(translationUnits.pointer, pointer), ne(translationUnits.status, status)));
    });
  return true;
}
