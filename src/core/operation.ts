// One operation, many transports: a declaration holds the name, the input and output schemas
// (zod, the one schema library), the scopes, a description and `run`. The admin REST route
// (src/rest.ts), the MCP tool (src/mcp/tools.ts) and the OpenAPI entry are derived from it, and
// `missingScopes` (src/lib/scopes.ts) is the one authorization check every transport asks.
import type { ResourceLink, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Project } from "../../db/schema/index";
import { AppError } from "../errors";
import type { AdminCaller, McpCaller } from "../lib/caller";
import { isPlainObject } from "../lib/merge";
import type { ScopeRule } from "../lib/scopes";
import type { OperationActivity } from "../write/activity";
import { type NodeChange, operationWrite, type WriteContext } from "../write/context";
import type { AppDeps } from "./deps";

type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** How an operation is served as an admin route. */
export interface HttpBinding {
  readonly method: HttpMethod;
  /** Express-style path; `:ref` names the project. */
  readonly path: string;
  /** Path parameters whose input field has another name, e.g. `{ id: "node_id" }`. */
  readonly params?: Readonly<Record<string, string>>;
  /** The input field the whole JSON body is (a body that is an array, say); otherwise body fields are input fields. */
  readonly body?: string;
  /** Input fields read from the query string on a route with a body (flags such as ?force=true). */
  readonly query?: readonly string[];
  /**
   * GET only: one input field built from query parameters whose names the input cannot list (e.g.
   * `field.<name>[op]=value`): those starting with `prefix` are handed to `read`, and the field itself
   * is not taken from the query.
   */
  readonly queryInput?: { readonly field: string; readonly prefix: string; readonly read: (query: URLSearchParams) => unknown };
  /** POST only: the body is multipart/form-data (a file upload; fields as text, the file as a Blob), bounded by MEDIA_MAX_BYTES plus 1 MiB. */
  readonly multipart?: true;
  /** DELETE only: input fields may come as a JSON body as well as in the query. */
  readonly bodyOrQuery?: boolean;
  readonly status?: 200 | 201 | 204;
  /** The output field answered as `data`; the other fields sit beside it. Without it, the whole output is `data`. */
  readonly data?: string;
  /**
   * The answer is the output field `field` (a string) sent as it is with this content type (CSV, XML), not JSON,
   * or with the type the output's `typeField` names when it has one (an XLIFF or JSON file); a body of another type than JSON is read as text into the `body` field.
   */
  readonly raw?: { readonly field: string; readonly type: string; readonly typeField?: string };
  /** Answers carry a secret shown once: never cached. */
  readonly noStore?: boolean;
  readonly tag: string;
  /** One line for the API explorer; the operation's title when absent. */
  readonly summary?: string;
  readonly description?: string;
  /** Error statuses beyond 400, 401, 403 and 404 this route answers. */
  readonly errors?: readonly number[];
}

/** A resource an operation's answer names: an MCP resource_link without its `type`. */
type OperationLink = Omit<ResourceLink, "type">;

export interface OperationContext<C> {
  readonly deps: AppDeps;
  readonly caller: C;
  readonly project: Project;
  readonly now: Date;
  /** What the write path needs of this call (its name, actor, expected revision, dry run): built by runOperation, passed to every service that writes. */
  readonly write: WriteContext;
  /** Reports progress of a long call (done of total, a line for the user), when the client asked for it. */
  readonly progress?: (done: number, total: number, message: string) => Promise<void>;
}

interface OperationBase<I extends z.ZodObject, O extends z.ZodObject> {
  /** snake_case; the MCP tool's name. */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** Every scope listed must be held (or one of `anyOf`); a missing one is reported by name. */
  readonly scopes: ScopeRule;
  readonly input: I;
  readonly output: O;
  /** Served over /mcp as a tool with these annotations; absent: an admin route only. */
  readonly tool?: ToolAnnotations;
  /**
   * The MCP resources an answer names (a search's hits): the tool's result lists each as a
   * resource_link beside the JSON text, so an agent reads one with resources/read next.
   */
  readonly links?: (out: z.input<O>) => readonly OperationLink[];
  readonly http?: HttpBinding | readonly HttpBinding[];
  /**
   * The operation writes the node its `node_id` input names: it takes `expected_revision` (added to
   * its input by projectOperation, with a sentence telling agents to send it), and the write path
   * refuses the write with 409 conflict when the node has moved past that revision.
   */
  readonly nodeWrite?: true;
  /** What the activity log names as the write's target kind; by default the operation's name without its verb ("create_ai_provider" → "ai_provider"). */
  readonly activity?: { readonly kind: string };
  /** Set by projectOperation and adminOperation on write operations: `dry_run` is carried out by the operation unit (an operation declaring its own dry_run keeps it). */
  readonly unitDryRun?: true;
}

/** Acts on one project: `:ref` of an admin route, the project an MCP credential is bound to. */
export interface ProjectOperation<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> extends OperationBase<I, O> {
  readonly target: "project";
  run(ctx: OperationContext<AdminCaller | McpCaller>, input: z.output<I>): Promise<z.input<O>>;
}

/** Acts across projects (keys, the project list): admin keys only, never a tool. */
export interface AdminOperation<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> extends OperationBase<I, O> {
  readonly target: "admin";
  readonly tool?: undefined;
  run(ctx: Omit<OperationContext<AdminCaller>, "project">, input: z.output<I>): Promise<z.input<O>>;
}

export type Operation = ProjectOperation | AdminOperation;

export function projectOperation<I extends z.ZodObject, O extends z.ZodObject>(def: Omit<ProjectOperation<I, O>, "target">): ProjectOperation {
  const conditional = def.nodeWrite ? { input: def.input.extend({ expected_revision: ExpectedRevision }), description: `${def.description} ${EXPECTED_REVISION_HINT}` } : {};
  return withDryRun({ ...def, ...conditional, target: "project" } as unknown as ProjectOperation); // erases I and O: adapters see every operation alike
}

/** A write operation that changes state: not annotated read-only (tools), not a GET (admin routes). */
const isWriteOperation = (op: Pick<Operation, "tool" | "http">): boolean => (op.tool ? op.tool.readOnlyHint !== true : httpBindings(op as Operation).some((b) => b.method !== "GET"));

const DryRun = z.boolean().optional().describe("true: check everything the call would (scopes, conflicts, paths, locales, the content model, limits), write nothing, and answer what would change");

/** What a dry run adds to the operation's answer (absent from a real call's). */
const DRY_RUN_OUT = {
  dry_run: z.literal(true).optional().describe("present on a dry run's answer: nothing was written"),
  changes: z
    .array(
      z.object({
        node_id: z.string(),
        operation: z.string(),
        revision_before: z.number().int().nullable(),
        revision_after: z.number().int().nullable().describe("null: the node would be deleted"),
        deleted: z.literal(true).optional(),
        published: z.literal(true).optional().describe("the call would publish the node: diff is between its published version (what readers see now) and the version it would publish"),
        diff: z
          .array(z.object({ path: z.string(), before: z.unknown().optional(), after: z.unknown().optional() }))
          .describe("field-level, JSON Pointers into the node's snapshot (as get_revision's diff)"),
      }),
    )
    .optional()
    .describe("a dry run's answer: each node the write would change"),
};

/**
 * Every write operation takes `dry_run` (a tool argument; over REST `?dry_run=true` on
 * every write route). runOperation carries it out for all of them alike.
 */
function withDryRun<T extends Operation>(op: T): T {
  if (!isWriteOperation(op) || Object.hasOwn(op.input.shape, "dry_run")) return op;
  const http = op.http === undefined ? undefined : httpBindings(op).map((b) => ({ ...b, query: [...(b.query ?? []), "dry_run"] }));
  return { ...op, input: op.input.extend({ dry_run: DryRun }), output: op.output.extend(DRY_RUN_OUT), unitDryRun: true, ...(http ? { http } : {}) };
}

/** The node-writing operations' optimistic concurrency check (over REST: If-Match or ?expected_revision=). */
const ExpectedRevision = z
  .number()
  .int()
  .min(0)
  .max(2_147_483_647)
  .optional()
  .describe("the node's revision as last read (its `revision`); the write is refused with conflict, and nothing written, when the node has changed since");
const EXPECTED_REVISION_HINT =
  "Send expected_revision (the node's revision from your last read) so that an edit made since by someone else is never overwritten: a mismatch fails with conflict, naming the current revision and the changes since; read the node again, then retry.";

export function adminOperation<I extends z.ZodObject, O extends z.ZodObject>(def: Omit<AdminOperation<I, O>, "target">): AdminOperation {
  return withDryRun({ ...def, target: "admin" } as unknown as AdminOperation); // erases I and O, as above
}

/** What the activity log needs of an operation. */
export const activityOf = (op: Operation): OperationActivity => ({ name: op.name, write: isWriteOperation(op), kind: op.activity?.kind });

export const httpBindings = (op: Operation): readonly HttpBinding[] => (op.http === undefined ? [] : "method" in op.http ? [op.http as HttpBinding] : (op.http as readonly HttpBinding[]));

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
export const IDEMPOTENT_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * The fields of `sent` that parsing did not keep in `kept`, at any depth ("blocks.0.content"): zod
 * drops undeclared keys without a word, so a caller sending `status` to create_node believed it
 * had published. Loose objects and records keep their keys and are never reported.
 */
export function strippedFields(sent: unknown, kept: unknown, at: readonly string[] = []): string[] {
  if (Array.isArray(sent)) return Array.isArray(kept) ? sent.flatMap((v, i) => strippedFields(v, kept[i], [...at, String(i)])) : [];
  if (!isPlainObject(sent) || !isPlainObject(kept)) return [];
  return Object.keys(sent).flatMap((k) => (Object.hasOwn(kept, k) ? strippedFields(sent[k], kept[k], [...at, k]) : sent[k] === undefined ? [] : [[...at, k].join(".")]));
}

/**
 * The input fields of a tool call (or any whole input) the operation does not declare: the
 * top-level ones by name even when the input is invalid otherwise, the nested ones once it parses.
 */
export function undeclaredFields(op: Operation, sent: unknown): string[] {
  if (!isPlainObject(sent)) return [];
  const parsed = op.input.safeParse(sent);
  if (parsed.success) return strippedFields(sent, parsed.data);
  return Object.keys(sent).filter((k) => !Object.hasOwn(op.input.shape, k) && sent[k] !== undefined);
}

const SET_BY_SERVICE = new Set(["project_id", "created_at", "updated_at", "published_at", "archived_at", "path", "version", "revision", "token_hint", "last_used_at"]);
const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** What the caller probably meant by an undeclared field, when that is clear. */
function hintFor(op: Operation, field: string): string | null {
  const name = field.split(".").at(-1) ?? field;
  const top = !field.includes(".");
  if (top && name === "status" && /_node$/.test(op.name))
    return "a node's status is not an input: publish it with publish_node (POST /admin/p/{ref}/nodes/{id}/publish), or use unpublish_node, archive_node, restore_node";
  if (top && name !== snake(name) && Object.hasOwn(op.input.shape, snake(name))) return `did you mean ${snake(name)}?`;
  if (name === "id" || SET_BY_SERVICE.has(name)) return `${name} is set by the service and is not writable`;
  if (name === "__proto__") return "a __proto__ key is never stored (it could reach an object's prototype); rename it";
  return null;
}

/**
 * 400 invalid_input naming every undeclared field (REST and MCP alike), with a hint where the
 * intent is clear. `hints` adds the transport's own (a field the URL path gives, say).
 */
export function undeclaredFieldsError(op: Operation, fields: readonly string[], hints: Readonly<Record<string, string>> = {}): AppError {
  const found: Record<string, string> = {};
  for (const f of fields) {
    const hint = hints[f] ?? hintFor(op, f);
    if (hint !== null) found[f] = hint;
  }
  const listed = fields.map((f) => (found[f] ? `${f} (${found[f]})` : f)).join(", ");
  const message = `${op.name} does not take ${fields.length > 1 ? "these fields" : "the field"}: ${listed}; nothing was done`;
  return new AppError("invalid_input", message, Object.keys(found).length > 0 ? { fields, hints: found } : { fields });
}

/** Runs `op` for a transport: the one place every operation passes through on its way to `run`. */
export function runOperation(op: Operation, ctx: Omit<OperationContext<AdminCaller | McpCaller>, "project" | "write"> & { project?: Project }, input: unknown): Promise<unknown> {
  const { project } = ctx;
  const [sent, dry] = op.unitDryRun ? takeDryRun(input) : [input, false];
  const [args, expected] = takeExpectedRevision(op, sent);
  const write = operationWrite(op.name, ctx.caller, expected, dry);
  const call = (deps: AppDeps): Promise<unknown> => {
    if (op.target === "admin") return op.run({ ...ctx, deps, write } as Omit<OperationContext<AdminCaller>, "project">, args as never);
    if (!project) throw new Error(`${op.name} acts on a project and was given none`);
    return op.run({ ...ctx, deps, project, write }, args as never);
  };
  return write.dryRun ? dryRun(ctx.deps, call, write.dryRun.changes) : call(ctx.deps);
}

/** Thrown to roll a dry run's transaction back once the operation has run to its end. */
class DryRunRollback extends Error {
  constructor(readonly out: unknown) {
    super("dry run: rolled back");
  }
}

/**
 * A dry run: the whole operation runs in one transaction (the write path's own transaction becomes
 * a savepoint in it; the activity entry, the revision, the outbox and the NOTIFY are written in it
 * too), which is then rolled back. Every check the real call makes has run, nothing is kept. The
 * answer is the operation's own (the resulting node) with `dry_run: true` and the changes the
 * write path reported (a field-level diff per node).
 */
async function dryRun(deps: AppDeps, call: (deps: AppDeps) => Promise<unknown>, changes: NodeChange[]): Promise<unknown> {
  try {
    await deps.db.transaction(async (tx) => {
      throw new DryRunRollback(await call({ ...deps, db: tx }));
    });
  } catch (err) {
    if (!(err instanceof DryRunRollback)) throw err;
    return { ...(isPlainObject(err.out) ? err.out : {}), dry_run: true, changes };
  }
  throw new Error("dry run: the transaction was not rolled back");
}

/** `dry_run` goes to the operation unit, not to the operation's `run`. */
function takeDryRun(input: unknown): [unknown, boolean] {
  if (!isPlainObject(input) || !Object.hasOwn(input, "dry_run")) return [input, false];
  const { dry_run: dry, ...args } = input;
  return [args, dry === true];
}

/** A node write's expected_revision goes to the write path, not to the operation's `run`. */
function takeExpectedRevision(op: Operation, input: unknown): [unknown, WriteContext["expected"]] {
  if (!op.nodeWrite || !isPlainObject(input) || !Object.hasOwn(input, "expected_revision")) return [input, null];
  const { expected_revision: revision, ...args } = input;
  const nodeId = args.node_id;
  return [args, typeof revision === "number" && typeof nodeId === "string" ? { nodeId: nodeId.toLowerCase(), revision } : null];
}
