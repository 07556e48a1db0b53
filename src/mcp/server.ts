import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Icon, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { encodeBase64 } from "@oslojs/encoding";
import { registerCompletions } from "./completions";
import { portableSchema } from "./portable-schema";
import { registerPrompts } from "./prompts";
import { registerNodeResources } from "./resources";
import { jobTaskStore, serveTasks, TASK_TOOLS, TASKS_CAPABILITY } from "./tasks";
import { refuseUndeclaredArguments, registerTool, TOOLS, type ToolContext } from "./tools";

const svg = (body: string): Icon => ({
  src: `data:image/svg+xml;base64,${encodeBase64(new TextEncoder().encode(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#334155" stroke-width="2">${body}</svg>`))}`,
  mimeType: "image/svg+xml",
  sizes: ["any"],
});
const ICONS = {
  server: svg('<rect x="3" y="3" width="18" height="18" rx="3"/><path d="M7 8h10M7 12h10M7 16h6"/>'),
  read: svg('<circle cx="11" cy="11" r="6"/><path d="m20 20-4.5-4.5"/>'),
  write: svg('<path d="M4 20h4L19 9l-4-4L4 16z"/>'),
  ai: svg('<path d="M4 5h8M8 3v2M6 5c0 4 3 7 6 8M10 5c-1 4-4 7-6 8M13 21l4-9 4 9M14.5 18h5"/>'),
};

export const SERVER_INFO = { name: "content-service", title: "Content Service", version: "0.1.0", icons: [ICONS.server] };

// Bounds the work one tools/call can ask for (block arrays, translation maps): about a megabyte of small values.
const MAX_TOOL_INPUT_ELEMENTS = 20_000;

const instructions = ({ project: p, caller }: ToolContext): string =>
  [
    `This server manages the content of one project: "${p.name}" (slug ${p.slug}, id ${p.id}).`,
    `Locales: ${p.locales.join(", ")} (default ${p.defaultLocale}).`,
    `This credential holds the scopes: ${caller.scopes.join(", ") || "none"}.`,
    "Nodes are pages, collections and entries addressed by id or slug path; new nodes are drafts until publish_node.",
    `Nodes are also readable as resources cms://${p.slug}/nodes/{id} and cms://${p.slug}/paths/{path}, with ?locale= for a translation.`,
    `The content model (block and node types every write is checked against) is the resource cms://${p.slug}/model; get_content_model gives it compactly.`,
    "Prompts: translate_page, write_seo, review_before_publish, summarise_recent_changes, model_content.",
  ].join(" ");

/**
 * A fresh server per HTTP request (stateless): everything it serves is bound to the caller's project.
 * `era`: 2025-11-25 after initialize ("legacy"), or 2026-07-28 per request ("modern").
 */
export function buildMcpServer(ctx: ToolContext, era: "legacy" | "modern") {
  const text = instructions(ctx);
  // What the server can do, truthfully: no listChanged (no notification can reach a client of a
  // stateless server) and no subscribe. Logging and tasks exist in 2025-11-25 only (2026-07-28
  // removed logging and moved tasks out of the core protocol, into an extension not served here).
  const legacy = era === "legacy";
  const capabilities: ServerCapabilities = { tools: {}, resources: {}, prompts: {}, completions: {}, ...(legacy ? { logging: {}, tasks: TASKS_CAPABILITY } : {}) };
  // The task store is the job table (src/mcp/tasks.ts): the SDK answers tasks/get, tasks/list and tasks/cancel from it.
  const taskStore = legacy ? jobTaskStore(ctx) : undefined;
  const server = new McpServer(SERVER_INFO, { capabilities, instructions: text, maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS, taskStore });
  for (const tool of TOOLS) registerTool(server, ctx, tool, legacy);
  registerNodeResources(server, ctx);
  registerPrompts(server, ctx);
  registerCompletions(server, ctx);
  // The SDK adds listChanged: true as it registers tools, resources and prompts, and has no way to
  // say otherwise; the advertised set is put back to what this server does. Cast: `_capabilities`
  // is private in the SDK's Server and has no setter.
  (server.server as unknown as { _capabilities: ServerCapabilities })._capabilities = capabilities;
  wrapToolsList(server, legacy);
  // Inside the arguments check (refuseUndeclaredArguments wraps what is there then), so a task's arguments are checked as a call's.
  if (taskStore) serveTasks(server, ctx, taskStore);
  refuseUndeclaredArguments(server, ctx);
  return { server, instructions: text, capabilities };
}

/**
 * tools/list as strict clients read it (portable schemas) with icons, and (`tasks`: 2025-11-25) the
 * tools a client may call as a task marked execution.taskSupport "optional"; the SDK's answer is otherwise kept as is.
 */
function wrapToolsList(server: McpServer, tasks: boolean): void {
  // Cast: the handler map is private in the SDK's Protocol, and setRequestHandler cannot wrap the
  // handler McpServer registered (it replaces it).
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<Record<string, unknown>>> })._requestHandlers;
  const inner = handlers.get("tools/list");
  if (!inner) return;
  handlers.set("tools/list", async (request, extra) => {
    const r = await inner(request, extra);
    const tools = (r.tools as Tool[]).map((t) => ({
      ...t,
      inputSchema: portableSchema(t.inputSchema),
      ...(t.outputSchema ? { outputSchema: portableSchema(t.outputSchema) } : {}),
      icons: [t.annotations?.openWorldHint ? ICONS.ai : t.annotations?.readOnlyHint ? ICONS.read : ICONS.write],
      ...(tasks && TASK_TOOLS.has(t.name) ? { execution: { ...t.execution, taskSupport: "optional" as const } } : {}),
    }));
    return { ...r, tools };
  });
}
