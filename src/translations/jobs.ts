// Bulk translation jobs (docs/translation.md, "Bulk jobs"): a subtree or a whole project into one
// or more locales. Making one lists its units (what translate_node would send: missing, stale,
// needs-review and machine fields made from another source; never a person's without force) with
// an estimate of the tokens; a dry run answers the estimate and makes nothing. A worker with a
// lease (./jobs-worker.ts) carries it out; cancelling stops it before its next vendor call.
import { and, asc, desc, eq, gt, inArray, like, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Actor, aiProviders, type JobTokens, nodes, type Project, type TranslationJob, translationJobs, translationJobUnits, translationMemory } from "../../db/schema";
import { estimateCall, houseRules } from "../ai/pipeline";
import { findTranslation, getBlocks } from "../content/service";
import { AppError, notFound } from "../errors";
import { isUuid, uuidv7 } from "../lib/ids";
import { canonicalLocale } from "../lib/locales";
import { readPaging } from "../lib/paging";
import { escapeLike } from "../lib/sql";
import { sourceUnits, translatedUnits } from "../model/units";
import type { WriteContext } from "../write/context";
import { fieldName, skipReason } from "./machine";
import { modelOf, unitRows } from "./status";

const MAX_JOB_UNITS = 100_000;

export interface JobInput {
  readonly root_node_id?: string | null;
  readonly locales: readonly string[];
  readonly dry_run?: boolean;
  readonly force?: boolean;
  readonly provider_id?: string | null;
}

type PlannedUnit = { nodeId: string; locale: string; pointer: string; sourceHash: string };

/** The project locales asked for (canonical), never the default one. */
function jobLocales(project: Project, asked: readonly string[]): string[] {
  if (asked.length === 0) throw new AppError("invalid_request", "locales: name at least one of the project's locales", { field: "locales" });
  return [
    ...new Set(
      asked.map((tag, i) => {
        const c = canonicalLocale(tag);
        const found = c ? project.locales.find((l) => l.toLowerCase() === c.toLowerCase()) : undefined;
        if (!found) throw new AppError("invalid_locale", `locales.${i}: "${tag}" is not one of the project's locales`, { field: `locales.${i}` });
        if (found === project.defaultLocale) throw new AppError("invalid_locale", `locales.${i}: "${found}" is the default locale, the language the content is written in`, { field: `locales.${i}` });
        return found;
      }),
    ),
  ];
}

/** The job's nodes: the root and everything below it (the root alone for scope node), or the whole project. */
async function jobNodes(db: Db, project: Project, rootId: string | null | undefined, scope: "subtree" | "node" = "subtree") {
  if (rootId === null || rootId === undefined) return db.select().from(nodes).where(eq(nodes.projectId, project.id)).orderBy(asc(nodes.path));
  if (!isUuid(rootId)) throw notFound("node");
  const [root] = await db
    .select()
    .from(nodes)
    .where(and(eq(nodes.projectId, project.id), eq(nodes.id, rootId.toLowerCase())));
  if (!root) throw notFound("node");
  if (scope === "node") return [root];
  return db
    .select()
    .from(nodes)
    .where(and(eq(nodes.projectId, project.id), or(eq(nodes.id, root.id), like(nodes.path, `${escapeLike(root.path)}/%`))))
    .orderBy(asc(nodes.path));
}

/** Plans a job: its units and the estimate (calls the memory will answer cost nothing). */
async function plan(db: Db, project: Project, input: JobInput, scope: "subtree" | "node" = "subtree") {
  const locales = jobLocales(project, input.locales);
  const model = await modelOf(db, project.id);
  const units: Array<PlannedUnit & { estimate: { input_tokens: number; output_tokens: number } }> = [];
  const rules = new Map(await Promise.all(locales.map(async (l) => [l, await houseRules(db, project.id, l)] as const)));
  for (const node of await jobNodes(db, project, input.root_node_id, scope)) {
    const source = sourceUnits({ ...node, blocks: await getBlocks(db, node.id) }, model);
    if (source.length === 0) continue;
    for (const locale of locales) {
      const [tr, rows] = await Promise.all([findTranslation(db, node.id, locale), unitRows(db, node.id, locale)]);
      const carried = tr ? translatedUnits(tr, source) : new Map<string, string>();
      for (const u of source) {
        if (
          skipReason(
            u,
            carried.has(u.pointer),
            rows.find((r) => r.pointer === u.pointer),
            input.force === true,
          ) !== null
        )
          continue;
        const estimate = estimateCall({ from: project.defaultLocale, to: locale, text: u.text, format: u.format, field: fieldName(u.pointer) }, rules.get(locale) ?? { terms: [], style: null });
        units.push({ nodeId: node.id, locale, pointer: u.pointer, sourceHash: u.hash, estimate });
        if (units.length > MAX_JOB_UNITS) throw new AppError("invalid_request", `a job holds at most ${MAX_JOB_UNITS} units: translate a smaller subtree or fewer locales`, { field: "root_node_id" });
      }
    }
  }
  // What the memory holds costs no call.
  const remembered = new Set<string>();
  for (const locale of locales) {
    const hashes = [...new Set(units.filter((u) => u.locale === locale).map((u) => u.sourceHash))];
    for (let i = 0; i < hashes.length; i += 1000) {
      const found = await db
        .select({ hash: translationMemory.sourceHash })
        .from(translationMemory)
        .where(and(eq(translationMemory.projectId, project.id), eq(translationMemory.locale, locale), inArray(translationMemory.sourceHash, hashes.slice(i, i + 1000))));
      for (const f of found) remembered.add(`${locale}/${f.hash}`);
    }
  }
  const paid = units.filter((u) => !remembered.has(`${u.locale}/${u.sourceHash}`));
  const tokens: JobTokens = {
    input_tokens: paid.reduce((n, u) => n + u.estimate.input_tokens, 0),
    output_tokens: paid.reduce((n, u) => n + u.estimate.output_tokens, 0),
    calls: paid.length,
  };
  return { locales, units, estimate: { ...tokens, cost: await costOf(db, project, input.provider_id ?? null, tokens) } };
}

/** The cost in the provider's currency when it declares its prices (capabilities input/output_price_per_mtok), else null. */
async function costOf(db: Db, project: Project, providerId: string | null, t: JobTokens): Promise<number | null> {
  const [p] = await db
    .select({ capabilities: aiProviders.capabilities })
    .from(aiProviders)
    .where(and(eq(aiProviders.projectId, project.id), providerId && isUuid(providerId) ? eq(aiProviders.id, providerId.toLowerCase()) : eq(aiProviders.isDefault, true)));
  const inPrice = Number(p?.capabilities.input_price_per_mtok);
  const outPrice = Number(p?.capabilities.output_price_per_mtok);
  if (!Number.isFinite(inPrice) || !Number.isFinite(outPrice)) return null;
  return Math.round(((t.input_tokens * inPrice + t.output_tokens * outPrice) / 1_000_000) * 10_000) / 10_000;
}

export function jobToWire(j: TranslationJob) {
  return {
    id: j.id,
    status: j.status,
    root_node_id: j.rootNodeId,
    locales: j.locales,
    force: j.force,
    estimate: j.estimate,
    progress: { done: j.done, total: j.total },
    usage: j.usage,
    error: j.error,
    created_by: j.createdBy,
    created_at: j.createdAt.toISOString(),
    updated_at: j.updatedAt.toISOString(),
    finished_at: j.finishedAt?.toISOString() ?? null,
  };
}

/** Makes a job (queued; the worker takes it), or with dry_run only answers what it would be. */
export async function startJob(db: Db, ctx: WriteContext, project: Project, input: JobInput, now: Date, taskId: string | null = null) {
  const planned = await plan(db, project, input);
  if (input.dry_run) return { id: null, status: "dry_run" as const, estimate: planned.estimate, progress: { done: 0, total: planned.units.length } };
  const id = uuidv7(now.getTime());
  await db.transaction(async (tx) => {
    await tx.insert(translationJobs).values({
      id,
      projectId: project.id,
      rootNodeId: input.root_node_id ? input.root_node_id.toLowerCase() : null,
      locales: planned.locales,
      providerId: input.provider_id ? input.provider_id.toLowerCase() : null,
      force: input.force === true,
      status: planned.units.length === 0 ? "done" : "queued",
      estimate: planned.estimate,
      total: planned.units.length,
      usage: { input_tokens: 0, output_tokens: 0, calls: 0 },
      createdBy: ctx.actor,
      taskId,
      createdAt: now,
      updatedAt: now,
      finishedAt: planned.units.length === 0 ? now : null,
    });
    for (let i = 0; i < planned.units.length; i += 1000) {
      await tx.insert(translationJobUnits).values(planned.units.slice(i, i + 1000).map((u) => ({ jobId: id, nodeId: u.nodeId, locale: u.locale, pointer: u.pointer, sourceHash: u.sourceHash })));
    }
  });
  return jobToWire(await getJob(db, project.id, id));
}

/**
 * A job the write path queued (auto-translate on publish) gets its units when the worker takes it:
 * the node's fields still to translate, never a person's. Answers the job as planned.
 */
export async function planQueuedJob(db: Db, project: Project, job: TranslationJob): Promise<TranslationJob> {
  // Locales no longer the project's (a setting changed since) are left out.
  const locales = job.locales.filter((l) => project.locales.includes(l) && l !== project.defaultLocale);
  const planned = locales.length > 0 ? await plan(db, project, { root_node_id: job.rootNodeId, locales }, job.scope).catch(() => null) : null;
  const units = planned?.units ?? [];
  return db.transaction(async (tx) => {
    for (let i = 0; i < units.length; i += 1000) {
      await tx
        .insert(translationJobUnits)
        .values(units.slice(i, i + 1000).map((u) => ({ jobId: job.id, nodeId: u.nodeId, locale: u.locale, pointer: u.pointer, sourceHash: u.sourceHash })))
        .onConflictDoNothing();
    }
    const [row] = await tx
      .update(translationJobs)
      .set({ planned: true, total: units.length, estimate: planned?.estimate ?? job.estimate, locales })
      .where(eq(translationJobs.id, job.id))
      .returning();
    return row ?? job;
  });
}

export async function getJob(db: Db, projectId: string, id: string): Promise<TranslationJob> {
  if (!isUuid(id)) throw notFound("translation job");
  const [job] = await db
    .select()
    .from(translationJobs)
    .where(and(eq(translationJobs.projectId, projectId), eq(translationJobs.id, id.toLowerCase())));
  if (!job) throw notFound("translation job");
  return job;
}

/** Cancels a queued or running job: its worker makes no new vendor call (it looks before each). A finished one is 409. */
export async function cancelJob(db: Db, projectId: string, id: string, now: Date): Promise<TranslationJob> {
  const job = await getJob(db, projectId, id);
  const [cancelled] = await db
    .update(translationJobs)
    .set({ status: "cancelled", finishedAt: now, updatedAt: now })
    .where(and(eq(translationJobs.id, job.id), inArray(translationJobs.status, ["queued", "running"])))
    .returning();
  if (!cancelled) throw new AppError("conflict", `this job is ${job.status}: only a queued or running one can be cancelled`, { status: job.status });
  return cancelled;
}

export async function listJobs(db: Db, projectId: string, q: { page?: number; per_page?: number }) {
  const { page, perPage } = readPaging(q, { defaultPerPage: 20 });
  const where = eq(translationJobs.projectId, projectId);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(translationJobs)
      .where(where)
      .orderBy(desc(translationJobs.createdAt))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ n: sql<number>`count(*)` }).from(translationJobs).where(where),
  ]);
  return { jobs: rows.map(jobToWire), total: Number(total?.n ?? 0), page, per_page: perPage };
}

// Jobs as MCP tasks (src/mcp/tasks.ts): a task-augmented start_translation_job makes a job whose
// task id is its own id (task_id set), bound to the credential that made it.

/** The job's creator is `actor`'s credential: the same kind and id (an OAuth user's: through the same client). */
const madeBy = (actor: Actor): SQL | undefined =>
  and(
    sql`${translationJobs.createdBy}->>'kind' = ${actor.kind}`,
    sql`${translationJobs.createdBy}->>'id' = ${actor.id ?? ""}`,
    sql`coalesce(${translationJobs.createdBy}->'client'->>'id', '') = ${actor.client?.id ?? ""}`,
  );

/** Marks a job as the one an MCP task made (its task id is the job's id). */
export async function markTaskJob(db: Db, projectId: string, id: string): Promise<void> {
  await db
    .update(translationJobs)
    .set({ taskId: id })
    .where(and(eq(translationJobs.projectId, projectId), eq(translationJobs.id, id)));
}

/** The job a task names, when `actor`'s credential made it as a task after `since` (the task's lifetime); else null. */
export async function findTaskJob(db: Db, projectId: string, taskId: string, actor: Actor, since: Date): Promise<TranslationJob | null> {
  if (!isUuid(taskId)) return null;
  const id = taskId.toLowerCase();
  const [job] = await db
    .select()
    .from(translationJobs)
    .where(and(eq(translationJobs.projectId, projectId), eq(translationJobs.id, id), eq(translationJobs.taskId, id), madeBy(actor), gt(translationJobs.createdAt, since)));
  return job ?? null;
}

/** The jobs `actor`'s credential made as tasks after `since`, newest first, those older than the job `before` when given. */
export function listTaskJobs(db: Db, projectId: string, actor: Actor, since: Date, before: string | null, limit: number): Promise<TranslationJob[]> {
  return db
    .select()
    .from(translationJobs)
    .where(
      and(
        eq(translationJobs.projectId, projectId),
        sql`${translationJobs.taskId} = ${translationJobs.id}::text`,
        madeBy(actor),
        gt(translationJobs.createdAt, since),
        before === null ? undefined : lt(translationJobs.id, before),
      ),
    )
    .orderBy(desc(translationJobs.id))
    .limit(limit);
}
