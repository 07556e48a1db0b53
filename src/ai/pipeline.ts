// One machine translation pipeline for every caller (docs/translation.md, "The machine obeys the
// house"): the translation memory first (an unchanged source already translated is reused without
// a vendor call); otherwise markup, URLs, placeholders and do-not-translate terms are replaced by
// tokens the vendor is told to keep, the glossary and the style notes go into the instructions,
// and the answer is checked before anything is stored: every token back exactly once, forced
// terms used, forbidden terms absent, the model's maxLength kept, the same number of lines. A
// failing answer is retried once with the failures named; failing again, it is answered as
// needs_review with its failures, never as a good translation.
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type GlossaryKind, glossaryTerms, type Project, translationMemory, translationSettings, type UnitOrigin } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { escapeRegExp } from "../lib/regexp";
import { textHash } from "../model/units";
import { translationPrompt } from "./prompt";
import { translateText } from "./service";

interface Term {
  readonly source: string;
  readonly target: string | null;
  readonly kind: GlossaryKind;
  readonly caseSensitive: boolean;
}

/** What the house asks of translations into one locale. */
export interface HouseRules {
  readonly terms: readonly Term[];
  readonly style: string | null;
}

export interface MachineAnswer {
  readonly text: string;
  readonly status: "machine" | "needs_review" | "approved";
  /** Why the answer was not good (needs_review): one line each. */
  readonly failures: readonly string[];
  readonly origin: UnitOrigin;
  /** Vendor calls made (0: from the memory). */
  readonly calls: number;
  /** The tokens those calls used, as the vendor reported them. */
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number };
}

/** The glossary's terms for `locale` (its own and those for every locale) and the style notes. */
export async function houseRules(db: Db, projectId: string, locale: string): Promise<HouseRules> {
  const [terms, [settings]] = await Promise.all([
    db
      .select({ source: glossaryTerms.source, target: glossaryTerms.target, kind: glossaryTerms.kind, caseSensitive: glossaryTerms.caseSensitive })
      .from(glossaryTerms)
      .where(and(eq(glossaryTerms.projectId, projectId), inArray(glossaryTerms.locale, [locale, "*"]))),
    db.select({ style: translationSettings.style }).from(translationSettings).where(eq(translationSettings.projectId, projectId)),
  ]);
  const notes = [settings?.style.default, settings?.style.locales?.[locale]].filter((n): n is string => typeof n === "string" && n.trim() !== "");
  return { terms, style: notes.length > 0 ? notes.join("\n") : null };
}

/** A term as a whole word (or words): letters and digits around it end a match. */
const termRe = (t: Pick<Term, "source" | "caseSensitive">, flags = ""): RegExp =>
  new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(t.source)}(?![\\p{L}\\p{N}])`, `u${t.caseSensitive ? "" : "i"}${flags}`);

/** What is kept as it is: code, markup, link targets, URLs, e-mail addresses, placeholders. */
const KEEP: readonly RegExp[] = [
  /```[\s\S]*?```/g, // fenced code
  /`[^`\n]+`/g, // inline code
  /\]\([^)\s]*(?:\s+"[^"]*")?\)/g, // a Markdown link's or image's target: ](url "title")
  /<\/?[A-Za-z][^<>]*>/g, // HTML tags (and <https://…> autolinks)
  /&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);/g, // HTML entities
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`)\]]+/gi, // URLs
  /\bmailto:[^\s<>"'`)\]]+/gi,
  /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, // e-mail addresses
  /\{\{[^{}\n]+\}\}|\{[A-Za-z0-9_.-]+\}|%(?:\d+\$)?[sdf]/g, // placeholders: {{name}}, {name}, %s, %1$s
];

const token = (i: number): string => `⟦${i}⟧`;
const TOKEN_RE = /⟦(\d+)⟧/g;

/** The text with what must be kept replaced by tokens ⟦1⟧, ⟦2⟧…, and what each stands for. */
function protect(text: string, dnt: readonly Term[]): { text: string; kept: string[] } {
  const kept: string[] = [];
  const replace = (s: string, re: RegExp): string =>
    s.replace(re, (m) => {
      kept.push(m);
      return token(kept.length);
    });
  let out = KEEP.reduce(replace, text);
  for (const t of [...dnt].sort((a, b) => b.source.length - a.source.length)) out = replace(out, termRe(t, "g"));
  return { text: out, kept };
}

/** The answer with its tokens back; each token missing, repeated or unknown is a failure. */
function restore(answer: string, kept: readonly string[]): { text: string; failures: string[] } {
  const failures: string[] = [];
  const seen = new Map<number, number>();
  for (const m of answer.matchAll(TOKEN_RE)) seen.set(Number(m[1]), (seen.get(Number(m[1])) ?? 0) + 1);
  kept.forEach((original, i) => {
    const n = seen.get(i + 1) ?? 0;
    if (n === 0) failures.push(`missing: ${JSON.stringify(original)} must be kept as it is`);
    else if (n > 1) failures.push(`repeated: ${JSON.stringify(original)} appears ${n} times`);
  });
  for (const [i] of seen) if (i < 1 || i > kept.length) failures.push(`unknown placeholder ${token(i)} in the answer`);
  return { text: answer.replace(TOKEN_RE, (m, i: string) => kept[Number(i) - 1] ?? m), failures };
}

const lines = (s: string): number => s.split("\n").filter((l) => l.trim() !== "").length;

/** The checks of a restored answer against its source and the house's rules. */
function checkAnswer(source: string, answer: string, rules: HouseRules, maxLength: number | null): string[] {
  const failures: string[] = [];
  for (const t of rules.terms) {
    if (t.kind === "forced" && t.target !== null && termRe(t).test(source) && !termRe({ source: t.target, caseSensitive: t.caseSensitive }).test(answer))
      failures.push(`glossary: "${t.source}" must be translated as "${t.target}"`);
    if (t.kind === "forbidden" && termRe(t).test(answer)) failures.push(`glossary: "${t.source}" must not appear in the translation`);
    if (t.kind === "dnt" && termRe(t).test(source) && !termRe(t).test(answer)) failures.push(`glossary: "${t.source}" must be kept untranslated`);
  }
  if (maxLength !== null && [...answer].length > maxLength) failures.push(`too long: ${[...answer].length} characters, the field allows ${maxLength}`);
  if (lines(answer) !== lines(source)) failures.push(`segments: the source has ${lines(source)} lines, the translation ${lines(answer)}`);
  return failures;
}

/** The instructions the vendor gets beside the base prompt: tokens, the glossary, the style, and why a first answer was refused. */
function instructions(kept: number, rules: HouseRules, to: string, refused: readonly string[]): string[] {
  const out: string[] = [];
  if (kept > 0) out.push("Tokens such as ⟦1⟧ stand for text that must stay as it is: keep every one exactly once, unchanged, where it belongs in the sentence.");
  const forced = rules.terms.filter((t) => t.kind === "forced" && t.target !== null);
  if (forced.length > 0) out.push(`Glossary for ${to}: always translate ${forced.map((t) => `"${t.source}" as "${t.target}"`).join(", ")}.`);
  const forbidden = rules.terms.filter((t) => t.kind === "forbidden");
  if (forbidden.length > 0) out.push(`Never use these words in the translation: ${forbidden.map((t) => `"${t.source}"`).join(", ")}.`);
  if (rules.style) out.push(`House style: ${rules.style}`);
  if (refused.length > 0) out.push(`A previous answer was refused for these reasons; avoid them: ${refused.join("; ")}.`);
  return out;
}

/** A rough count of tokens (words and marks each one; within about 10 % of the o200k tokenizer on prose and on our prompts). */
const estimateTokens = (s: string): number => (s.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu) ?? []).length;

/** What one call for `text` is estimated to cost: the system prompt and the protected text in, about as much text out. */
export function estimateCall(
  input: { from: string; to: string; text: string; format: "markdown" | "html" | null; field: string | null },
  rules: HouseRules,
): { input_tokens: number; output_tokens: number } {
  const { text, kept } = protect(
    input.text,
    rules.terms.filter((t) => t.kind === "dnt"),
  );
  const system = [translationPrompt({ from: input.from, to: input.to, field: input.field, format: input.format }), ...instructions(kept.length, rules, input.to, [])].join("\n");
  const words = estimateTokens(text);
  return { input_tokens: estimateTokens(system) + words + 11, output_tokens: Math.ceil(words * 1.1) + 2 };
}

/**
 * Translates one text into `to` through the pipeline. `maxLength`: the content model's limit on the
 * field. The vendor is called at most twice (a failing answer is retried once).
 */
export async function machineTranslate(
  deps: AppDeps,
  project: Project,
  input: {
    from: string;
    to: string;
    text: string;
    format: "markdown" | "html" | null;
    field: string | null;
    maxLength?: number | null;
    provider_id?: string | null;
    /** Look in the translation memory first (default true; translate_text, which stores nothing and tests a provider, does not). */
    memory?: boolean;
  },
  rules?: HouseRules,
): Promise<MachineAnswer> {
  const hash = textHash(input.text);
  const [memory] =
    input.memory === false
      ? []
      : await deps.db
          .select({ target: translationMemory.target, origin: translationMemory.origin })
          .from(translationMemory)
          .where(and(eq(translationMemory.projectId, project.id), eq(translationMemory.locale, input.to), eq(translationMemory.sourceHash, hash)));
  if (memory) {
    const status = memory.origin.kind === "person" || memory.origin.kind === "import" ? "approved" : "machine";
    return {
      text: memory.target,
      status,
      failures: [],
      origin: { kind: "memory", actor: memory.origin.actor ?? null, provider_kind: memory.origin.provider_kind ?? null, model: memory.origin.model ?? null },
      calls: 0,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
  }
  const house = rules ?? (await houseRules(deps.db, project.id, input.to));
  const { text, kept } = protect(
    input.text,
    house.terms.filter((t) => t.kind === "dnt"),
  );
  let refused: string[] = [];
  let last = { text: input.text, provider: "", model: "" };
  const usage = { input_tokens: 0, output_tokens: 0 };
  for (let attempt = 1; attempt <= 2; attempt++) {
    const answer = await translateText(deps, project, {
      provider_id: input.provider_id ?? undefined,
      from: input.from,
      to: input.to,
      text,
      field: input.field ?? undefined,
      format: input.format,
      instructions: instructions(kept.length, house, input.to, refused),
    });
    usage.input_tokens += answer.usage?.input_tokens ?? 0;
    usage.output_tokens += answer.usage?.output_tokens ?? 0;
    const restored = restore(answer.translation, kept);
    const failures = [...restored.failures, ...checkAnswer(input.text, restored.text, house, input.maxLength ?? null)];
    last = { text: restored.text, provider: answer.provider, model: answer.model };
    const origin: UnitOrigin = { kind: "machine", provider_kind: answer.provider, model: answer.model };
    if (failures.length === 0) return { text: restored.text, status: "machine", failures: [], origin, calls: attempt, usage };
    refused = failures;
  }
  return { text: last.text, status: "needs_review", failures: refused, origin: { kind: "machine", provider_kind: last.provider, model: last.model }, calls: 2, usage };
}
