// Wire shapes of the glossary, declared once as the operations' schemas.
import { z } from "zod";

export const GlossaryTermIn = z.object({
  source: z.string().min(1).max(200).describe("the term as the source text has it"),
  target: z.string().max(200).nullish().describe("forced terms: how it must be translated"),
  locale: z.string().min(1).max(35).describe("one of the project's locales, or * for every locale"),
  kind: z.enum(["forced", "dnt", "forbidden"]).describe("forced: always translated as target; dnt: never translated (kept as it is); forbidden: must not appear in a translation"),
  case_sensitive: z.boolean().optional().describe("match the term's case exactly (default false)"),
});

export const TranslationStyleIn = z
  .object({
    default: z.string().max(1000).optional().describe("for every locale, e.g. 'Friendly, plain words'"),
    locales: z.record(z.string(), z.string().max(1000)).optional().describe("per locale, e.g. { de: 'Sie, never du' }"),
  })
  .describe("style notes the machine translation is given");

export const GlossaryOut = z.object({
  terms: z.array(z.object({ source: z.string(), target: z.string().optional(), locale: z.string(), kind: z.enum(["forced", "dnt", "forbidden"]), case_sensitive: z.boolean() })),
  style: z.object({ default: z.string().optional(), locales: z.record(z.string(), z.string()).optional() }),
});
