// Nodes as MCP resources: cms://{project slug}/nodes/{node id}, listed with an opaque cursor.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { getNodeWithBlocks, listNodes } from "../content/service";
import { AppError, describeError } from "../errors";
import { isUuid } from "../lib/ids";
import { MAX_PAGE } from "../lib/paging";
import type { ToolContext } from "./tools/tool";

export const RESOURCE_PAGE_SIZE = 100;
// The MCP spec's code for an unknown resource (not in the SDK's ErrorCode enum).
const RESOURCE_NOT_FOUND = -32002;
const MIME = "application/json";

export const nodeUri = (projectSlug: string, nodeId: string): string => `cms://${projectSlug}/nodes/${nodeId}`;

function encodeCursor(page: number): string {
  return Buffer.from(JSON.stringify({ p: page })).toString("base64url");
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 1;
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { p?: unknown };
    if (typeof v.p === "number" && Number.isInteger(v.p) && v.p >= 1 && v.p <= MAX_PAGE) return v.p;
  } catch {
    // fall through: a cursor this server did not issue
  }
  throw new McpError(ErrorCode.InvalidParams, "invalid cursor: pass back the nextCursor of a previous resources/list answer");
}

function requireRead(ctx: ToolContext): void {
  if (!ctx.caller.scopes.includes("content:read")) {
    throw new McpError(ErrorCode.InvalidRequest, "reading resources needs the content:read scope, which this token lacks");
  }
}

export function registerNodeResources(server: McpServer, ctx: ToolContext): void {
  const low = server.server;
  low.registerCapabilities({ resources: {} });
  const slug = ctx.project.slug;

  low.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    requireRead(ctx);
    const page = decodeCursor(req.params?.cursor);
    const r = await listNodes(ctx.db, ctx.project.id, { page, per_page: RESOURCE_PAGE_SIZE }).catch((err: unknown) => {
      throw hidden(ctx, err);
    });
    return {
      resources: r.data.map((n) => ({
        uri: nodeUri(slug, n.id),
        name: n.path,
        title: n.title,
        description: `${n.type} · ${n.status}`,
        mimeType: MIME,
      })),
      ...(page * RESOURCE_PAGE_SIZE < r.total ? { nextCursor: encodeCursor(page + 1) } : {}),
    };
  });

  low.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: `cms://${slug}/nodes/{id}`,
        name: "node",
        title: "Content node",
        description: "A node of this project with its ordered blocks (JSON), by node id",
        mimeType: MIME,
      },
    ],
  }));

  low.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    requireRead(ctx);
    const uri = req.params.uri;
    const prefix = `cms://${slug}/nodes/`;
    const id = uri.startsWith(prefix) ? uri.slice(prefix.length) : "";
    // Another project's URI reads as unknown, exactly like a missing node.
    if (!isUuid(id)) throw new McpError(RESOURCE_NOT_FOUND, "Resource not found", { uri });
    try {
      const node = await getNodeWithBlocks(ctx.db, ctx.project.id, id);
      return { contents: [{ uri, mimeType: MIME, text: JSON.stringify(node) }] };
    } catch (err) {
      if (err instanceof AppError && err.code === "not_found") throw new McpError(RESOURCE_NOT_FOUND, "Resource not found", { uri });
      throw hidden(ctx, err);
    }
  });
}

/** The SDK would put an exception's message in the JSON-RPC error: log it and answer a generic one. */
function hidden(ctx: ToolContext, err: unknown): McpError {
  if (err instanceof McpError) return err;
  ctx.deps.log.error("mcp resource read failed", describeError(err));
  return new McpError(ErrorCode.InternalError, "internal error");
}
