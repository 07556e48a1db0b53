import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Db } from "../../../db/client";
import type { McpCaller } from "../../auth";
import type { AppDeps } from "../../deps";
import type { McpScope } from "../../lib/scopes";
import type { Project } from "../../projects/service";

/** What every tool call runs with: resolved from the bearer on each request. */
export interface ToolContext {
  readonly deps: AppDeps;
  readonly db: Db;
  readonly project: Project;
  readonly caller: McpCaller;
  readonly now: Date;
  /** Reports progress of a long call (done of total, a line for the user), when the client asked for it. */
  readonly progress?: (done: number, total: number, message: string) => Promise<void>;
}

export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** Every scope listed must be held by the token; a missing one is reported by name. */
  readonly scopes: readonly McpScope[];
  readonly input: I;
  readonly output: O;
  readonly annotations: ToolAnnotations;
  run(ctx: ToolContext, args: z.output<I>): Promise<z.input<O>>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
export const IDEMPOTENT_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
