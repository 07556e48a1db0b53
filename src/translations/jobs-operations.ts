// Translation jobs' operations: start (or estimate), read, cancel, list; the first three are MCP
// tools too (declared once).
import { z } from "zod";
import { ActorOut } from "../activity/model";
import { ProviderId } from "../ai/model";
import { projectOperation, READ_ONLY } from "../core/operation";
import { Id, Page, PerPage } from "../lib/schemas";
import { cancelJob, getJob, jobToWire, listJobs, startJob } from "./jobs";

const Tokens = { input_tokens: z.number().int(), output_tokens: z.number().int(), calls: z.number().int() };
const JobOut = z.object({
  id: Id,
  status: z.enum(["queued", "running", "done", "cancelled", "failed"]),
  root_node_id: Id.nullable(),
  locales: z.array(z.string()),
  force: z.boolean(),
  estimate: z.object({ ...Tokens, cost: z.number().nullable().describe("in the provider's currency, when it declares input/output_price_per_mtok") }),
  progress: z.object({ done: z.number().int(), total: z.number().int() }),
  usage: z.object(Tokens).describe("what the vendor reported so far"),
  error: z.string().nullable(),
  created_by: ActorOut,
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
});
const route = (method: "GET" | "POST", tail: string) => ({ method, path: `/admin/p/:ref/translation-jobs${tail}`, tag: "translations" }) as const;

const startJobOp = projectOperation({
  name: "start_translation_job",
  title: "Translate a subtree or the whole project",
  description:
    "Machine-translate a subtree (root_node_id) or the whole project into one or more locales as a job: its fields still to translate (missing, stale, needing review, or machine text made from another source; " +
    "never a person's without force) go through the translation pipeline, each node's translation written as a draft. Answers at once with the job's id and an estimate of the tokens (and cost); " +
    "dry_run answers the estimate and starts nothing. Follow it with get_translation_job; stop it with cancel_translation_job.",
  scopes: ["content:write", "ai:read"],
  input: z.object({
    root_node_id: Id.optional().describe("a node: it and everything below it; omitted: the whole project"),
    locales: z.array(z.string().min(2).max(35)).min(1).max(100),
    dry_run: z.boolean().optional().describe("answer the estimate only"),
    force: z.boolean().optional().describe("also re-translate fields a person wrote, approved or published"),
    provider_id: ProviderId,
  }),
  output: z.object({
    id: Id.nullable().describe("null for a dry run"),
    status: z.enum(["dry_run", "queued", "running", "done", "cancelled", "failed"]),
    estimate: z.object({ ...Tokens, cost: z.number().nullable() }),
    progress: z.object({ done: z.number().int(), total: z.number().int() }),
    usage: z.object(Tokens).optional().describe("the result of the job run as an MCP task (tasks/result): what the vendor reported for the whole job"),
  }),
  tool: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  http: { ...route("POST", ""), status: 201, summary: "Start a translation job (or estimate one)" },
  run: async ({ deps, project, now, write }, args) => {
    const out = await startJob(deps.db, write, project, args, now);
    return { id: out.id, status: out.status, estimate: out.estimate, progress: out.progress };
  },
});

const getJobOp = projectOperation({
  name: "get_translation_job",
  title: "Read a translation job",
  description: "A translation job's status (queued, running, done, cancelled, failed), progress (units done of total), the tokens the vendor reported so far, and its estimate.",
  scopes: ["content:read"],
  input: z.object({ job_id: Id }),
  output: z.object({ job: JobOut }),
  tool: READ_ONLY,
  http: { ...route("GET", "/:id"), params: { id: "job_id" }, data: "job" },
  run: async ({ deps, project }, args) => ({ job: jobToWire(await getJob(deps.db, project.id, args.job_id)) }),
});

const cancelJobOp = projectOperation({
  name: "cancel_translation_job",
  title: "Cancel a translation job",
  description: "Stop a queued or running translation job: no new vendor call is made (what was translated stays). A finished job is a conflict.",
  scopes: ["content:write"],
  input: z.object({ job_id: Id }),
  output: z.object({ job: JobOut }),
  tool: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  http: { ...route("POST", "/:id/cancel"), params: { id: "job_id" }, data: "job", errors: [409] },
  run: async ({ deps, project, now }, args) => ({ job: jobToWire(await cancelJob(deps.db, project.id, args.job_id, now)) }),
});

const listJobsOp = projectOperation({
  name: "list_translation_jobs",
  title: "List translation jobs",
  description: "The project's translation jobs, newest first.",
  scopes: ["content:read"],
  input: z.object({ page: Page, per_page: PerPage(20) }),
  output: z.object({ jobs: z.array(JobOut), total: z.number().int(), page: z.number().int(), per_page: z.number().int() }),
  http: { ...route("GET", ""), data: "jobs" },
  run: ({ deps, project }, args) => listJobs(deps.db, project.id, args),
});

export const translationJobOperations = [startJobOp, getJobOp, cancelJobOp, listJobsOp];
