// The glossary's operations: read and replace it whole, as JSON or CSV.
import { z } from "zod";
import { projectOperation, READ_ONLY } from "../core/operation";
import { glossaryCsv, MAX_TERMS, readGlossary, replaceGlossary, termsFromCsv } from "./glossary";
import { GlossaryOut, GlossaryTermIn, TranslationStyleIn } from "./glossary-model";

const route = (method: "GET" | "PUT", path: string) => ({ method, path: `/admin/p/:ref/${path}`, tag: "translations" }) as const;

const getGlossaryOp = projectOperation({
  name: "get_glossary",
  title: "Read the glossary",
  description:
    "The project's glossary: forced terms (source → target), do-not-translate and forbidden terms per locale (* for every locale), and the style notes machine translation follows. " +
    "Use it when you translate yourself, so that your translations follow the house's terms.",
  scopes: ["content:read"],
  input: z.object({}),
  output: GlossaryOut,
  tool: READ_ONLY,
  http: { ...route("GET", "glossary"), summary: "Read the glossary and style notes" },
  run: ({ deps, project }) => readGlossary(deps.db, project.id),
});

const putGlossaryOp = projectOperation({
  name: "replace_glossary",
  title: "Replace the glossary",
  description: `Replace the project's glossary terms (at most ${MAX_TERMS}) and, when given, its style notes. Machine translation obeys them from the next call.`,
  scopes: ["content:write"],
  input: z.object({ terms: z.array(GlossaryTermIn).max(MAX_TERMS), style: TranslationStyleIn.optional() }),
  output: GlossaryOut,
  activity: { kind: "glossary" },
  http: { ...route("PUT", "glossary"), summary: "Replace the glossary (terms and style notes)" },
  run: ({ deps, project, now }, args) => replaceGlossary(deps.db, project, args, now),
});

const getGlossaryCsvOp = projectOperation({
  name: "export_glossary_csv",
  title: "Export the glossary as CSV",
  description: "The glossary's terms as CSV: source, target, locale, kind, case_sensitive, with a header row.",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ csv: z.string() }),
  http: { ...route("GET", "glossary.csv"), raw: { field: "csv", type: "text/csv; charset=utf-8" }, summary: "Export the glossary's terms as CSV" },
  run: async ({ deps, project }) => ({ csv: glossaryCsv(await readGlossary(deps.db, project.id)) }),
});

const putGlossaryCsvOp = projectOperation({
  name: "import_glossary_csv",
  title: "Import the glossary from CSV",
  description: "Replace the glossary's terms with the CSV's (columns source, target, locale, kind, case_sensitive, a header row; any order); the style notes stay.",
  scopes: ["content:write"],
  input: z.object({ csv: z.string().max(2_000_000) }),
  output: GlossaryOut,
  activity: { kind: "glossary" },
  http: { ...route("PUT", "glossary.csv"), body: "csv", summary: "Replace the glossary's terms from CSV (text/csv body)" },
  run: ({ deps, project, now }, args) => replaceGlossary(deps.db, project, { terms: termsFromCsv(args.csv) }, now),
});

export const glossaryOperations = [getGlossaryOp, putGlossaryOp, getGlossaryCsvOp, putGlossaryCsvOp];
