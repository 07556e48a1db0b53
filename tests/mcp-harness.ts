// A listening server and SDK clients for the MCP tests.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { AppDeps } from "../src/core/deps";
import { harness, readReply, type TestHarness } from "./helpers";

export interface McpHarness {
  h: TestHarness;
  url: string;
  /** Mints an MCP token through the admin API. */
  token(projectRef: string, body?: Record<string, unknown>): Promise<{ id: string; token: string }>;
  connect(token: string | null): Promise<Client>;
  /** A raw POST /mcp with the headers an MCP client sends, overridable. */
  post(body: unknown, opts?: { token?: string | null; headers?: Record<string, string>; raw?: BodyInit }): Promise<RawResponse>;
  stop(): void;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function mcpHarness(env: Record<string, string> = {}, overrides: Partial<AppDeps> = {}): Promise<McpHarness> {
  const h = await harness(env, overrides);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h.app.handle(r) });
  const url = `http://127.0.0.1:${server.port}/mcp`;
  const clients: Client[] = [];
  return {
    h,
    url,
    async token(projectRef, body = { name: "agent" }) {
      const res = await h.request("POST", `/admin/p/${projectRef}/ai/mcp/tokens`, { body });
      if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${res.text}`);
      return { id: res.json.data.id, token: res.json.data.token };
    },
    async connect(token) {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      const client = new Client({ name: "mcp-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      clients.push(client);
      return client;
    },
    async post(body, opts = {}) {
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...opts.headers,
      };
      return readReply(await fetch(url, { method: "POST", headers, body: opts.raw ?? JSON.stringify(body) }));
    },
    stop() {
      for (const c of clients) void c.close().catch(() => {});
      server.stop(true);
    },
  };
}

/** The structured result of a successful tool call, or a thrown error showing the tool's message. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

/** The text of a tool call that must fail (isError), for assertions on the message. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = await client.callTool({ name, arguments: args });
  if (!r.isError) throw new Error(`${name} was expected to fail but returned ${JSON.stringify(r.structuredContent)}`);
  expectNoStructured(r as { structuredContent?: unknown });
  return (r.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");
}

function expectNoStructured(r: { structuredContent?: unknown }): void {
  if (r.structuredContent !== undefined) throw new Error("an error result must not carry structuredContent");
}

export const INIT = (protocolVersion = "2025-06-18", id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** Every tool the MCP endpoint lists (names are part of the interface). */
export const TOOL_NAMES = [
  "list_nodes",
  "get_node",
  "create_node",
  "update_node",
  "reorder_blocks",
  "publish_node",
  "unpublish_node",
  "archive_node",
  "restore_node",
  "discard_changes",
  "delete_node",
  "list_entries",
  "search_content",
  "schedule_node",
  "get_translation",
  "upsert_translation",
  "translate_node",
  "list_stale_translations",
  "get_glossary",
  "start_translation_job",
  "get_translation_job",
  "cancel_translation_job",
  "list_revisions",
  "get_revision",
  "restore_revision",
  "list_trash",
  "undo_agent_changes",
  "upload_media_from_url",
  "list_media",
  "get_media",
  "update_media",
  "describe_media",
  "translate_text",
  "get_content_model",
  "update_content_model",
  "get_theme",
  "update_theme",
  "get_project",
  "list_activity",
  "list_webhooks",
  "list_webhook_deliveries",
];
