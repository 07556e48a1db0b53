// A project's glossary and style notes (docs/translation.md, "The machine obeys the house"):
// forced terms (source → target), do-not-translate and forbidden terms per locale (`*`: every
// locale), case-sensitive or not, and a style note per project and per locale. Read and replaced
// whole (JSON or CSV); the machine translation pipeline (src/ai/pipeline.ts) obeys them.
import { asc, eq } from "drizzle-orm";
import Papa from "papaparse";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type GlossaryKind, glossaryTerms, type Project, type TranslationStyle, translationSettings } from "../../db/schema";
import { AppError } from "../errors";
import { uuidv7 } from "../lib/ids";
import { canonicalLocale } from "../lib/locales";
import type { GlossaryOut, GlossaryTermIn } from "./glossary-model";

export const MAX_TERMS = 5000;
const KINDS: readonly GlossaryKind[] = ["forced", "dnt", "forbidden"];
const CSV_COLUMNS = ["source", "target", "locale", "kind", "case_sensitive"] as const;

type Term = z.output<typeof GlossaryTermIn>;
type Glossary = z.output<typeof GlossaryOut>;

/** A term's locale as stored: `*`, or one of the project's locales (canonical); anything else is 400. */
function termLocale(project: Project, locale: string, at: string): string {
  if (locale === "*") return "*";
  const canonical = canonicalLocale(locale);
  const found = canonical ? project.locales.find((l) => l.toLowerCase() === canonical.toLowerCase()) : undefined;
  if (!found) throw new AppError("invalid_locale", `${at}: "${locale}" is not one of the project's locales (or * for every locale)`, { field: at });
  return found;
}

export async function readGlossary(db: Db, projectId: string): Promise<Glossary> {
  const [terms, [settings]] = await Promise.all([
    db.select().from(glossaryTerms).where(eq(glossaryTerms.projectId, projectId)).orderBy(asc(glossaryTerms.locale), asc(glossaryTerms.source), asc(glossaryTerms.kind)),
    db.select({ style: translationSettings.style }).from(translationSettings).where(eq(translationSettings.projectId, projectId)),
  ]);
  return {
    terms: terms.map((t) => ({ source: t.source, ...(t.target !== null ? { target: t.target } : {}), locale: t.locale, kind: t.kind, case_sensitive: t.caseSensitive })),
    style: settings?.style ?? {},
  };
}

/** Checks every term (400 naming the first bad one, by its index) and answers them as stored. */
function checkedTerms(project: Project, terms: readonly Term[]) {
  if (terms.length > MAX_TERMS) throw new AppError("invalid_request", `a glossary holds at most ${MAX_TERMS} terms`, { field: "terms" });
  const seen = new Set<string>();
  return terms.map((t, i) => {
    const at = `terms.${i}`;
    const source = t.source.trim();
    if (source === "") throw new AppError("invalid_request", `${at}.source is empty`, { field: `${at}.source` });
    if (t.kind === "forced" && !t.target?.trim()) throw new AppError("invalid_request", `${at}: a forced term needs its target`, { field: `${at}.target` });
    if (t.kind !== "forced" && t.target !== undefined && t.target !== null && t.target !== "")
      throw new AppError("invalid_request", `${at}: only a forced term has a target (${t.kind} terms are kept or refused as they are)`, { field: `${at}.target` });
    const locale = termLocale(project, t.locale, `${at}.locale`);
    const key = `${locale}\u0000${t.kind}\u0000${source}`;
    if (seen.has(key)) throw new AppError("invalid_request", `${at}: "${source}" (${t.kind}, ${locale}) appears twice`, { field: `${at}.source` });
    seen.add(key);
    return { locale, kind: t.kind, source, target: t.kind === "forced" ? (t.target ?? "").trim() : null, caseSensitive: t.case_sensitive ?? false };
  });
}

function checkedStyle(project: Project, style: TranslationStyle | undefined): TranslationStyle | undefined {
  if (style === undefined) return undefined;
  const locales = Object.fromEntries(Object.entries(style.locales ?? {}).map(([l, note]) => [termLocale(project, l, `style.locales.${l}`), note]));
  return { ...(style.default ? { default: style.default } : {}), ...(Object.keys(locales).length > 0 ? { locales } : {}) };
}

/** Replaces the glossary's terms (and its style, when given) in one transaction. */
export async function replaceGlossary(db: Db, project: Project, input: { terms: readonly Term[]; style?: TranslationStyle }, now: Date): Promise<Glossary> {
  const terms = checkedTerms(project, input.terms);
  const style = checkedStyle(project, input.style);
  await db.transaction(async (tx) => {
    await tx.delete(glossaryTerms).where(eq(glossaryTerms.projectId, project.id));
    for (let i = 0; i < terms.length; i += 500) {
      await tx.insert(glossaryTerms).values(terms.slice(i, i + 500).map((t) => ({ id: uuidv7(now.getTime()), projectId: project.id, createdAt: now, ...t })));
    }
    if (style !== undefined) {
      await tx
        .insert(translationSettings)
        .values({ projectId: project.id, style, updatedAt: now })
        .onConflictDoUpdate({ target: translationSettings.projectId, set: { style, updatedAt: now } });
    }
  });
  return readGlossary(db, project.id);
}

/** The terms as CSV: a header row, then source, target, locale, kind, case_sensitive (true/false). */
export function glossaryCsv(glossary: Glossary): string {
  return Papa.unparse(
    {
      fields: [...CSV_COLUMNS],
      data: glossary.terms.map((t) => [t.source, t.target ?? "", t.locale, t.kind, t.case_sensitive ? "true" : "false"]),
    },
    { newline: "\r\n", escapeFormulae: true },
  );
}

/** Terms from CSV (the same columns, any order, a header row): 400 naming the row of the first bad one. */
export function termsFromCsv(csv: string): Term[] {
  const parsed = Papa.parse<Record<string, string>>(csv.replace(/^\uFEFF/, ""), { header: true, skipEmptyLines: "greedy", transformHeader: (h) => h.trim().toLowerCase() });
  const fatal = parsed.errors.find((e) => e.type !== "FieldMismatch" || e.code === "TooManyFields");
  if (fatal) throw new AppError("invalid_request", `CSV row ${(fatal.row ?? 0) + 2}: ${fatal.message}`, { field: "body" });
  const columns = parsed.meta.fields ?? [];
  for (const needed of ["source", "locale", "kind"]) {
    if (!columns.includes(needed)) throw new AppError("invalid_request", `the CSV has no "${needed}" column (columns: ${CSV_COLUMNS.join(", ")})`, { field: "body" });
  }
  return parsed.data.map((row, i) => {
    const kind = (row.kind ?? "").trim().toLowerCase();
    if (!KINDS.includes(kind as GlossaryKind)) throw new AppError("invalid_request", `CSV row ${i + 2}: kind must be forced, dnt or forbidden`, { field: `terms.${i}.kind` });
    const flag = (row.case_sensitive ?? "").trim().toLowerCase();
    if (!["", "true", "false", "yes", "no", "1", "0"].includes(flag))
      throw new AppError("invalid_request", `CSV row ${i + 2}: case_sensitive must be true or false`, { field: `terms.${i}.case_sensitive` });
    // A cell Papa guarded against formula injection on export ('=…) comes back without its guard.
    const cell = (v: string | undefined) => (v ?? "").replace(/^'(?=[=+\-@\t\r])/, "");
    const target = cell(row.target).trim();
    return { source: cell(row.source), target: target === "" ? undefined : target, locale: (row.locale ?? "").trim(), kind: kind as GlossaryKind, case_sensitive: ["true", "yes", "1"].includes(flag) };
  });
}
