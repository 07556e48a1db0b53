// MCP prompts: ready-made requests a user picks in the client (a slash command), each naming the
// tools to use and carrying the page it is about as an embedded resource. Arguments are strings
// (the protocol's rule) and every one that names something of the project is completable.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, GetPromptRequestSchema, type GetPromptResult, ListPromptsRequestSchema, McpError, type Prompt, type PromptArgument } from "@modelcontextprotocol/sdk/types.js";
import { getNodeByPath, getNodeWithBlocks, type Node } from "../content/service";
import { AppError } from "../errors";
import { isStorableText } from "../lib/json";
import { getModel, typesInUse } from "../model/service";
import { hidden } from "./errors";
import { modelUri, nodeUri } from "./resources";
import { recentlyChanged } from "./suggest";
import type { ToolContext } from "./tools";

/** What an argument names, for completion/complete. */
export type ArgKind = "path" | "locale" | "collection" | "days";

/** `kind` null: free text, nothing to complete. */
type PromptArg = PromptArgument & { kind: ArgKind | null };

interface PromptDef extends Prompt {
  arguments: PromptArg[];
  /** Called once every required argument is present (checked by the prompts/get handler). */
  get(ctx: ToolContext, args: Record<string, string>): Promise<GetPromptResult>;
}

const PATH: PromptArg = { name: "path", description: "slug path of the page, e.g. about/team", required: true, kind: "path" };
const MAX_DAYS = 366;
const MAX_CHANGES = 50;

const PROMPTS: readonly PromptDef[] = [
  {
    name: "translate_page",
    title: "Translate a page into a locale",
    description: "Machine-translate a page into one of the project's locales as a draft, then review the result field by field.",
    arguments: [PATH, { name: "locale", description: "target locale, one of the project's other locales", required: true, kind: "locale" }],
    async get(ctx, { path = "", locale: wanted = "" }) {
      const node = await nodeAt(ctx, path);
      const locale = ctx.project.locales.find((l) => l.toLowerCase() === wanted.trim().toLowerCase());
      if (!locale) throw invalid(`locale ${JSON.stringify(wanted.slice(0, 40))} is not one of this project's locales (${ctx.project.locales.join(", ")})`);
      if (locale === ctx.project.defaultLocale) throw invalid(`"${locale}" is the default locale, the one the page is written in`);
      return page(ctx, node, `Translate the page "${node.title}" (${node.path}) into ${locale}.`, [
        `Call translate_node with node_id ${node.id} and locale ${locale}: it stores a DRAFT translation.`,
        `Then read it with get_node (id ${node.id}, locale ${locale}) and check each translated field against the original below: meaning, tone, terminology, links and placeholders kept.`,
        "Fix what needs fixing with upsert_translation (status draft), and tell me what you changed. Publish only if I ask.",
      ]);
    },
  },
  {
    name: "write_seo",
    title: "Write the SEO fields of a page",
    description: "Write the SEO description (and suggest robots/canonical where needed) for a page from its content.",
    arguments: [PATH],
    async get(ctx, args) {
      const node = await nodeAt(ctx, args.path ?? "");
      return page(ctx, node, `Write the SEO fields of the page "${node.title}" (${node.path}).`, [
        "Read the page below. Write seo.description: 120 to 155 characters, specific to this page, in the page's language, no quotes or markup.",
        "Keep the other seo fields unless they are wrong; set noindex only for pages that should not be found.",
        `Save with update_node (id ${node.id}, seo with every field you keep), then show me the before and after.`,
      ]);
    },
  },
  {
    name: "review_before_publish",
    title: "Review a page before publishing",
    description: "Check a page for missing content, broken structure, SEO gaps and missing translations before it is published.",
    arguments: [PATH],
    async get(ctx, args) {
      const node = await nodeAt(ctx, args.path ?? "");
      const others = ctx.project.locales.filter((l) => l !== ctx.project.defaultLocale);
      return page(ctx, node, `Review the page "${node.title}" (${node.path}, now ${node.status}) before it is published.`, [
        "Check: title and every block filled in, no placeholder or lorem ipsum text, links look valid, images have alt text, headings in order.",
        "Check seo.description is present and 50 to 160 characters.",
        others.length > 0 ? `Check the translations (${others.join(", ")}) with get_translation: present, published, and up to date with the original.` : "This project has a single locale.",
        `List the problems found, most important first. Do not publish: if everything is fine, say that publish_node (id ${node.id}) can be called.`,
      ]);
    },
  },
  {
    name: "summarise_recent_changes",
    title: "Summarise recent changes",
    description: "Summarise what changed in the project's content over the last days, optionally within one collection.",
    arguments: [
      { name: "days", description: `how many days back, 1 to ${MAX_DAYS} (default 7)`, required: false, kind: "days" },
      { name: "collection", description: "slug path of a collection to limit the summary to", required: false, kind: "collection" },
    ],
    async get(ctx, args) {
      const days = args.days ? Number(args.days) : 7;
      if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) throw invalid(`days must be a whole number from 1 to ${MAX_DAYS}`);
      const under = args.collection ? (await nodeAt(ctx, args.collection)).path : null;
      const since = new Date(ctx.now.getTime() - days * 86_400_000);
      const changed = await recentlyChanged(ctx.deps.db, ctx.project.id, since, under, MAX_CHANGES);
      const scope = under ? ` in the collection ${under}` : "";
      const text = [
        `Summarise the content changes of the project "${ctx.project.name}"${scope} over the last ${days} day${days > 1 ? "s" : ""} (since ${since.toISOString()}).`,
        changed.length === 0 ? "No node changed in that time: say so." : `The nodes changed, newest first${changed.length === MAX_CHANGES ? ` (the ${MAX_CHANGES} most recent)` : ""}:`,
        ...changed.map((n) => `- ${n.updatedAt.toISOString()} ${n.path} "${n.title}" (${n.type}, ${n.status})`),
        "Group them (new, edited, published, archived), read the important ones with get_node, and write a short summary for an editor.",
      ].join("\n");
      return { description: `Recent changes${scope}, last ${days} days`, messages: [{ role: "user", content: { type: "text", text } }] };
    },
  },
  {
    name: "model_content",
    title: "Propose a content model for the site",
    description: "Propose block types and node types (fields, translatable, indexed, allowed blocks and children) for the site, then apply them with update_content_model.",
    arguments: [{ name: "site", description: 'what the site is and holds, e.g. "a bakery: pages, a blog with authors, opening hours"', required: false, kind: null }],
    async get(ctx, args) {
      const model = await getModel(ctx.deps.db, ctx.project.id);
      const used = await typesInUse(ctx.deps.db, ctx.project.id);
      const site = args.site?.trim() ? ` The site: ${args.site.trim().slice(0, 2000)}` : "";
      const list = (types: { type: string; count: number }[]): string => types.map((t) => `${t.type} (${t.count})`).join(", ") || "none yet";
      const ask = `Propose a content model for the project "${ctx.project.name}".${site}`;
      const steps = [
        `The current model (version ${model.version}${model.version === 0 ? ", none yet: everything is free-form" : ""}) is below. The content uses node types: ${list(used.node_types)}; block types: ${list(used.block_types)}.`,
        "Block types: one per kind of section (hero, text, image, call to action…), each with a description for editors and a JSON Schema (2020-12) of its data: typed properties, required ones, additionalProperties: false when the shape is fixed.",
        "Node types: pages, collections and their entries, each with a fields schema (e.g. a post's author, date, category, tags), blocks it allows with min/max counts, and for a collection the types its children may have.",
        "Per property: format markdown or html for rich text, uri, date-time, color, node (the id of another node), media; translatable: true on text a translator changes (titles, prose, alt text), never on ids, links, numbers or dates; index: true on fields entries are filtered or sorted by (a date, a category).",
        "Keep the types the content already uses, or say exactly which nodes would have to change. Leave strict false unless I ask for it.",
        "Show me the proposal as a short table per type first. Once I agree: call update_content_model with the whole model and dry_run: true; if it lists nodes that would no longer match, fix them or ask me; then call it again without dry_run (force only if I say so). It needs the model:write scope.",
      ];
      return {
        description: ask,
        messages: [
          { role: "user", content: { type: "text", text: [ask, ...steps.map((s, i) => `${i + 1}. ${s}`)].join("\n") } },
          { role: "user", content: { type: "resource", resource: { uri: modelUri(ctx.project.slug), mimeType: "application/json", text: JSON.stringify(model) } } },
        ],
      };
    },
  },
];

export function promptArgKind(prompt: string, arg: string): ArgKind | null {
  return PROMPTS.find((p) => p.name === prompt)?.arguments.find((a) => a.name === arg)?.kind ?? null;
}

export function registerPrompts(server: McpServer, ctx: ToolContext): void {
  server.server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: PROMPTS.map(({ get, ...p }) => ({ ...p, arguments: p.arguments.map(({ kind, ...arg }) => arg) })),
  }));
  server.server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const prompt = PROMPTS.find((p) => p.name === req.params.name);
    if (!prompt) throw invalid(`unknown prompt ${JSON.stringify(req.params.name.slice(0, 100))}; prompts/list names them`);
    if (!ctx.caller.scopes.includes("content:read")) throw invalid("prompts read the project's content: this token lacks the content:read scope");
    const args = req.params.arguments ?? {};
    const missing = prompt.arguments.filter((a) => a.required && !args[a.name]);
    if (missing.length > 0) throw invalid(`missing argument${missing.length > 1 ? "s" : ""}: ${missing.map((a) => a.name).join(", ")}`);
    // NUL or an unpaired surrogate can name nothing stored (and PostgreSQL refuses it in a query).
    if (Object.values(args).some((v) => !isStorableText(v))) throw invalid("arguments must not contain NUL characters or unpaired surrogates");
    return prompt.get(ctx, args).catch((err: unknown) => {
      if (err instanceof AppError && (err.code === "not_found" || err.code === "invalid_locale")) throw invalid(err.message);
      throw hidden(ctx.deps.log, err, "mcp prompt failed", { prompt: prompt.name });
    });
  });
}

async function nodeAt(ctx: ToolContext, path: string): Promise<Node> {
  const clean = path.trim().replace(/^\/+|\/+$/g, "");
  return getNodeByPath(ctx.deps.db, ctx.project.id, clean).catch((err: unknown) => {
    throw err instanceof AppError && err.code === "not_found" ? invalid(`no node at path ${JSON.stringify(clean.slice(0, 200))} in this project`) : err;
  });
}

/** A prompt about one page: the request, then the page itself (with its blocks) as an embedded resource. */
async function page(ctx: ToolContext, node: Node, ask: string, steps: string[]): Promise<GetPromptResult> {
  const full = await getNodeWithBlocks(ctx.deps.db, ctx.project.id, node.id);
  return {
    description: ask,
    messages: [
      { role: "user", content: { type: "text", text: [ask, ...steps.map((s, i) => `${i + 1}. ${s}`)].join("\n") } },
      { role: "user", content: { type: "resource", resource: { uri: nodeUri(ctx.project.slug, node.id), mimeType: "application/json", text: JSON.stringify(full) } } },
    ],
  };
}

const invalid = (message: string): McpError => new McpError(ErrorCode.InvalidParams, message);
