// MCP's deliberate exception to the one error mapping: failures inside a tool become tool results
// with isError (the agent reads and corrects them), never JSON-RPC errors or HTTP statuses.
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AppError, describeError, vanishedRow } from "../errors";
import type { Logger } from "../lib/log";
import { isPlainObject } from "../lib/merge";

function toolError(code: string, message: string, details?: unknown): CallToolResult {
  const text = details === undefined ? `${code}: ${message}` : `${code}: ${message} (details: ${JSON.stringify(details)})`;
  return { isError: true, content: [{ type: "text", text: text + violationLines(details) }] };
}

/** invalid_content: one line per violation (pointer, rule, message) after the details, so an agent reads what to fix where. */
function violationLines(details: unknown): string {
  const list = isPlainObject(details) && Array.isArray(details.violations) ? details.violations.filter(isPlainObject) : [];
  return list.map((v) => `\n- ${String(v.pointer)} (${String(v.rule)}): ${String(v.message)}`).join("");
}

/** `anyOf`: the missing scopes are alternatives, any one of which would do. */
export function missingScopeError(tool: string, missing: readonly string[], held: readonly string[], anyOf = false): CallToolResult {
  const needs = anyOf && missing.length > 1 ? `one of the ${missing.join(" or ")} scopes` : `the ${missing.join(" and ")} scope${missing.length > 1 ? "s" : ""}`;
  const message = `${tool} needs ${needs}; this token has ${held.length > 0 ? held.join(", ") : "no scopes"}`;
  return toolError("insufficient_scope", message, { required: missing });
}

/** An AppError keeps its code and message (they are written for callers); anything else is logged and hidden. */
export function errorResult(err: unknown, tool: string, log: Logger): CallToolResult {
  const known = err instanceof AppError ? err : vanishedRow(err);
  if (known) return toolError(known.code, known.message, known.details);
  log.error("mcp tool failed", { tool, ...describeError(err) });
  return toolError("internal", "the tool failed unexpectedly; try again later");
}

/** Outside tools (resources, prompts, completions) the SDK would put an exception's message in the JSON-RPC error: log it and answer a generic one. */
export function hidden(log: Logger, err: unknown, line: string, fields: Record<string, unknown> = describeError(err)): McpError {
  if (err instanceof McpError) return err;
  log.error(line, fields);
  return new McpError(ErrorCode.InternalError, "internal error");
}
