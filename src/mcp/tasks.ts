// MCP tasks (2025-11-25, basic/utilities/tasks) for the tools that start long work: a client that
// sends `task` in a tools/call of start_translation_job gets a CreateTaskResult at once, and the job
// runs in the translation worker. The task store is the job table, not memory: every request builds
// its own server (the endpoint is stateless), so any instance answers tasks/get, tasks/result,
// tasks/list and tasks/cancel for any task, from the row. A task is the job (its id is the job's id),
// bound to the project and the credential that made it: another's is not found.
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type CallToolResult, type CreateTaskResult, ErrorCode, GetTaskPayloadRequestSchema, McpError, RELATED_TASK_META_KEY, type Result, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { TranslationJob } from "../../db/schema";
import { type ProjectOperation, runOperation } from "../core/operation";
import { AppError } from "../errors";
import { isUuid } from "../lib/ids";
import { assertStorableStrings } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import { unmetScopes } from "../lib/scopes";
import { cancelJob, findTaskJob, listTaskJobs, markTaskJob } from "../translations/jobs";
import { actorOf } from "../write/context";
import { errorResult, missingScopeError } from "./errors";
import { TOOLS, type ToolContext } from "./tools";

/** The tools a client may call as a task (execution.taskSupport "optional"); every other tool is "forbidden". */
export const TASK_TOOLS: ReadonlySet<string> = new Set(["start_translation_job"]);
/** What the server declares (capabilities.tasks): task-augmented tools/call, tasks/list and tasks/cancel. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** A task's lifetime from its creation, whatever the client asks (the spec lets the receiver override it): a week. The job itself stays readable with get_translation_job. */
const TASK_TTL_MS = 7 * 24 * 3_600_000;
/** The polling interval suggested to clients; the worker moves a job's progress after each node. */
const TASK_POLL_MS = 2_000;
/** How often a blocked tasks/result looks at the job again. */
const WAIT_MS = 1_000;
const LIST_PAGE = 50;
const IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";

const tool = (name: string): ProjectOperation => {
  const found = TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};
const START = tool("start_translation_job");
const CANCEL = tool("cancel_translation_job");

const terminal = (status: Task["status"]): boolean => status === "completed" || status === "failed" || status === "cancelled";

/** A job as its task: queued and running are working (input_required is never used), done completed. */
function taskOf(job: TranslationJob): Task {
  const { done, total } = job;
  const [status, statusMessage]: [Task["status"], string] =
    job.status === "done"
      ? ["completed", `translated ${done} of ${total} units`]
      : job.status === "failed"
        ? ["failed", job.error ?? "failed"]
        : job.status === "cancelled"
          ? ["cancelled", `cancelled after ${done} of ${total} units; what was translated stays`]
          : ["working", `${job.status}: ${done} of ${total} units translated`];
  return { taskId: job.id, status, statusMessage, createdAt: job.createdAt.toISOString(), lastUpdatedAt: job.updatedAt.toISOString(), ttl: TASK_TTL_MS, pollInterval: TASK_POLL_MS };
}

/** What start_translation_job answers once its job has ended (what tasks/result gives): the job's summary, or an error result. */
function resultOf(job: TranslationJob): CallToolResult {
  if (job.status === "failed") return { isError: true, content: [{ type: "text", text: `translation job ${job.id} failed: ${job.error ?? "unknown error"}` }] };
  if (job.status === "cancelled") {
    return {
      isError: true,
      content: [{ type: "text", text: `translation job ${job.id} was cancelled after ${job.done} of ${job.total} units; what was translated stays (get_translation_job reads it)` }],
    };
  }
  const out = { id: job.id, status: job.status, estimate: job.estimate, progress: { done: job.done, total: job.total }, usage: job.usage };
  return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }] };
}

/** The tool's arguments, parsed by its input schema; a failure is invalid_input naming the fields. */
function parseArguments(op: ProjectOperation, args: unknown): Record<string, unknown> {
  const parsed = op.input.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join(".") || "(arguments)"}: ${i.message}`);
    throw new AppError("invalid_input", `invalid arguments for ${op.name}: ${issues.join("; ")}`, { issues });
  }
  return parsed.data as Record<string, unknown>;
}

/**
 * The task store of one request's server, bound to its project and credential. Tasks are made by
 * createTask (start_translation_job's job, marked as a task) and end as the worker ends the job:
 * storeTaskResult has nothing to do (the row is the result), and the only status a caller sets is
 * cancelled (cancel_translation_job's effect: no new vendor call after it).
 */
export function jobTaskStore(ctx: ToolContext): TaskStore {
  const { deps, project, caller } = ctx;
  const actor = actorOf(caller);
  const since = () => new Date(deps.now().getTime() - TASK_TTL_MS);
  const find = (taskId: string) => findTaskJob(deps.db, project.id, taskId, actor, since());
  return {
    async createTask(_params, _requestId, request) {
      const params = isPlainObject(request.params) ? request.params : {};
      const args = parseArguments(START, params.arguments);
      if (args.dry_run === true) throw new AppError("invalid_input", "a dry run answers at once: call start_translation_job without task for the estimate", { fields: ["dry_run"] });
      assertStorableStrings(args);
      const out = (await runOperation(START, ctx, args)) as { id: string };
      await markTaskJob(deps.db, project.id, out.id);
      const job = await find(out.id);
      if (!job) throw new Error("the job just made is not found");
      return taskOf(job);
    },
    async getTask(taskId) {
      const job = await find(taskId);
      return job ? taskOf(job) : null;
    },
    async getTaskResult(taskId) {
      const job = await find(taskId);
      if (!job) throw new McpError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
      if (!terminal(taskOf(job).status)) throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} has not ended`);
      return resultOf(job);
    },
    async storeTaskResult() {
      // The worker writes the job's outcome to its row; nothing else stores one.
    },
    async updateTaskStatus(taskId, status) {
      if (status !== "cancelled") throw new McpError(ErrorCode.InvalidParams, `a task's status is the job's: only cancelled can be set, not ${status}`);
      const missing = unmetScopes(CANCEL.scopes, caller.scopes);
      if (missing.length > 0) throw new McpError(ErrorCode.InvalidRequest, `insufficient_scope: tasks/cancel needs the ${missing.join(" and ")} scope (as ${CANCEL.name})`);
      const job = await find(taskId);
      if (!job) throw new McpError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
      await cancelJob(deps.db, project.id, job.id, deps.now()).catch((err: unknown) => {
        // Ended between the look and the cancel.
        if (err instanceof AppError && err.code === "conflict") throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${taskOf(job).status}'`);
        throw err;
      });
    },
    async listTasks(cursor) {
      if (cursor !== undefined && !isUuid(cursor)) throw new Error("invalid cursor");
      const jobs = await listTaskJobs(deps.db, project.id, actor, since(), cursor?.toLowerCase() ?? null, LIST_PAGE + 1);
      const page = jobs.slice(0, LIST_PAGE);
      const last = page.at(-1);
      return { tasks: page.map(taskOf), ...(jobs.length > LIST_PAGE && last ? { nextCursor: last.id } : {}) };
    },
  };
}

/**
 * Serves the task-capable tools as tasks: a tools/call with `task` for one of them makes the task
 * (its scopes checked as the tool's, its arguments by the tool's schema); `task` for any other tool
 * is -32601, as the spec asks. Without `task` every tool answers as before. tasks/result blocks until
 * the task ends, sending notifications/tasks/status as its status or progress changes (they reach a
 * client whose request takes a stream; the endpoint streams tasks/result to one that accepts it).
 */
export function serveTasks(server: McpServer, ctx: ToolContext, store: TaskStore): void {
  // Cast: the handler map is private in the SDK's Protocol (as in tools.ts's wrapper); setRequestHandler
  // would put tools/call behind the SDK's own task handling, which for an "optional" tool called
  // without `task` waits for the task to end instead of answering the plain tool's result.
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<unknown>> })._requestHandlers;
  const inner = handlers.get("tools/call");
  if (!inner) return;
  handlers.set("tools/call", async (request, extra) => {
    const message = isPlainObject(request) ? request : {};
    const params = isPlainObject(message.params) ? message.params : {};
    if (!isPlainObject(params.task)) return inner(request, extra);
    const name = String(params.name);
    if (!TASK_TOOLS.has(name)) throw new McpError(ErrorCode.MethodNotFound, `${name.slice(0, 100)} does not run as a task (its execution.taskSupport is forbidden): call it without task`);
    const missing = unmetScopes(START.scopes, ctx.caller.scopes);
    if (missing.length > 0) return missingScopeError(START.name, missing, ctx.caller.scopes);
    try {
      const task = await store.createTask(params.task, message.id as string | number, { method: "tools/call", params });
      const text = `Started translation job ${task.taskId} (${task.statusMessage}). It runs in the background: follow it with tasks/get or get_translation_job.`;
      return { task, _meta: { [IMMEDIATE_RESPONSE]: text } } satisfies CreateTaskResult;
    } catch (err) {
      return errorResult(err, START.name, ctx.deps.log);
    }
  });

  server.server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    let told = "";
    for (;;) {
      const task = await store.getTask(taskId);
      if (!task) throw new McpError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
      const now = `${task.status} ${task.statusMessage ?? ""}`;
      if (now !== told) {
        told = now;
        await extra.sendNotification({ method: "notifications/tasks/status", params: task });
      }
      if (terminal(task.status)) {
        const result: Result = await store.getTaskResult(taskId);
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } } as CallToolResult;
      }
      await pause(WAIT_MS, extra.signal);
    }
  });
}

/** Waits, or rejects once the request is given up (the client cancelled it, or went away). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () => new McpError(ErrorCode.InvalidRequest, "Request cancelled");
    if (signal.aborted) return reject(cancelled());
    const abort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    }, ms);
    signal.addEventListener("abort", abort, { once: true });
  });
}
