// Nodes as MCP resources: cms://{project slug}/nodes/{node id}, listed with an opaque cursor, and
// templates reading a node by id or by path, in any of the project's locales; and the project's
// content model, cms://{project slug}/model (first in the list).

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, McpError, ReadResourceRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { decodeBase64urlIgnorePadding, encodeBase64urlNoPadding } from "@oslojs/encoding";
import { getLocalizedNode } from "../content/editor";
import { getNodeByPath, getNodeWithBlocks, listNodes } from "../content/service";
import { AppError } from "../errors";
import { getRevision } from "../history/service";
import { isUuid } from "../lib/ids";
import { isStorableText } from "../lib/json";
import { MAX_PAGE } from "../lib/paging";
import { getModel } from "../model/service";
import { hidden } from "./errors";
import type { ToolContext } from "./tools";

const RESOURCE_PAGE_SIZE = 100;
// The MCP spec's code for an unknown resource (not in the SDK's ErrorCode enum).
const RESOURCE_NOT_FOUND = -32002;
const MIME = "application/json";

export const nodeUri = (projectSlug: string, nodeId: string): string => `cms://${projectSlug}/nodes/${nodeId}`;
export const modelUri = (projectSlug: string): string => `cms://${projectSlug}/model`;
const MODEL_DESCRIPTION =
  "The project's content model (JSON): block types with the JSON Schema of their data, node types with the schema of their fields, the blocks and children they allow, strict, version. Node fields and block data must match it.";

const encodeCursor = (page: number): string => encodeBase64urlNoPadding(new TextEncoder().encode(JSON.stringify({ p: page })));

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 1;
  try {
    const v = JSON.parse(new TextDecoder().decode(decodeBase64urlIgnorePadding(cursor))) as { p?: unknown };
    if (typeof v.p === "number" && Number.isInteger(v.p) && v.p >= 1 && v.p <= MAX_PAGE) return v.p;
  } catch {
    // fall through: a cursor this server did not issue
  }
  throw new McpError(ErrorCode.InvalidParams, "invalid cursor: pass back the nextCursor of a previous resources/list answer");
}

function requireRead(ctx: ToolContext): void {
  if (!ctx.caller.scopes.includes("content:read")) throw new McpError(ErrorCode.InvalidRequest, "reading resources needs the content:read scope, which this token lacks");
}

export function registerNodeResources(server: McpServer, ctx: ToolContext): void {
  const slug = ctx.project.slug;

  server.server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    requireRead(ctx);
    const page = decodeCursor(req.params?.cursor);
    const r = await listNodes(ctx.deps.db, ctx.project.id, { page, per_page: RESOURCE_PAGE_SIZE }).catch((err: unknown) => {
      throw hidden(ctx.deps.log, err, "mcp resource read failed");
    });
    const model = { uri: modelUri(slug), name: "model", title: "Content model", description: MODEL_DESCRIPTION, mimeType: MIME };
    return {
      resources: [
        ...(page === 1 ? [model] : []),
        ...r.data.map((n) => ({
          uri: nodeUri(slug, n.id),
          name: n.path,
          title: n.title,
          description: `${n.type} · ${n.status}`,
          mimeType: MIME,
        })),
      ],
      ...(page * RESOURCE_PAGE_SIZE < r.total ? { nextCursor: encodeCursor(page + 1) } : {}),
    };
  });

  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: byIdTemplate(slug),
        name: "node",
        title: "Content node by id",
        description: `A node of this project with its ordered blocks (JSON), by node id; ?locale= one of ${ctx.project.locales.join(", ")} reads it translated (default ${ctx.project.defaultLocale})`,
      },
      {
        uriTemplate: byPathTemplate(slug),
        name: "node-by-path",
        title: "Content node by path",
        description: "A node of this project with its ordered blocks (JSON), by slug path (e.g. blog/hello); ?locale= reads it translated",
      },
      {
        uriTemplate: revisionTemplate(slug),
        name: "node-revision",
        title: "A revision of a node",
        description: "One revision of a node (JSON): its snapshot and the diff against the previous revision; list them with list_revisions",
      },
    ].map((t) => ({ ...t, mimeType: MIME })),
  }));

  server.server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    requireRead(ctx);
    const uri = req.params.uri;
    try {
      if (uri === modelUri(slug)) {
        const { strict, block_types, node_types, version, updated_at } = await getModel(ctx.deps.db, ctx.project.id);
        return { contents: [{ uri, mimeType: MIME, text: JSON.stringify({ version, updated_at, strict, block_types, node_types }) }] };
      }
      const rev = parseRevisionUri(slug, uri);
      if (rev) return { contents: [{ uri, mimeType: MIME, text: JSON.stringify(await getRevision(ctx.deps.db, ctx.project.id, rev.id, rev.number)) }] };
      const ref = parseNodeUri(slug, uri);
      // Another project's URI reads as unknown, exactly like a missing node.
      // …and so does a path or locale holding text nothing stored can hold (NUL, unpaired surrogates).
      if (!ref || !isStorableText(ref.path ?? "") || !isStorableText(ref.locale ?? "")) throw new McpError(RESOURCE_NOT_FOUND, "Resource not found", { uri });
      const id = ref.id ?? (await getNodeByPath(ctx.deps.db, ctx.project.id, ref.path ?? "")).id;
      const node = ref.locale === undefined ? await getNodeWithBlocks(ctx.deps.db, ctx.project.id, id) : await getLocalizedNode(ctx.deps.db, ctx.project, id, ref.locale);
      return { contents: [{ uri, mimeType: MIME, text: JSON.stringify(node) }] };
    } catch (err) {
      // A malformed %-escape in the URI (URIError from parseNodeUri) names nothing either.
      if (err instanceof URIError || (err instanceof AppError && (err.code === "not_found" || err.code === "invalid_locale"))) throw new McpError(RESOURCE_NOT_FOUND, "Resource not found", { uri });
      throw hidden(ctx.deps.log, err, "mcp resource read failed");
    }
  });
}

export const byIdTemplate = (slug: string): string => `cms://${slug}/nodes/{id}{?locale}`;
const revisionTemplate = (slug: string): string => `cms://${slug}/nodes/{id}/revisions/{rev}`;
export const byPathTemplate = (slug: string): string => `cms://${slug}/paths/{+path}{?locale}`;

/** cms://{slug}/nodes/{id}/revisions/{number} of this project; null for anything else. */
function parseRevisionUri(slug: string, uri: string): { id: string; number: number } | null {
  const url = URL.parse(uri);
  if (url?.protocol !== "cms:" || url.host !== slug || url.hash !== "" || url.search !== "") return null;
  const m = /^\/nodes\/([0-9a-fA-F-]{36})\/revisions\/([1-9]\d{0,8})$/.exec(url.pathname);
  return m?.[1] && m[2] && isUuid(m[1]) ? { id: m[1], number: Number(m[2]) } : null;
}

/** cms://{slug}/nodes/{id}[?locale=..] or cms://{slug}/paths/{path}[?locale=..] of this project; null for anything else (URIError for a malformed %-escape). */
function parseNodeUri(slug: string, uri: string): { id?: string; path?: string; locale?: string } | null {
  const url = URL.parse(uri);
  if (url?.protocol !== "cms:" || url.host !== slug || url.hash !== "") return null;
  const keys = [...url.searchParams.keys()];
  if (keys.some((k) => k !== "locale") || keys.length > 1) return null;
  const locale = url.searchParams.get("locale") ?? undefined;
  const m = /^\/(nodes|paths)\/(.+)$/.exec(url.pathname);
  if (!m) return null;
  const rest = decodeURIComponent(m[2] ?? "");
  if (m[1] === "nodes") return isUuid(rest) ? { id: rest, locale } : null;
  const path = rest.replace(/^\/+|\/+$/g, "");
  return path === "" ? null : { path, locale };
}
