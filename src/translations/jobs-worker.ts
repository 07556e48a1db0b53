// The worker that carries out translation jobs (./jobs.ts), on every instance: it takes one job at a
// time under a lease (renewed as it goes; a killed worker's lease runs out and any instance resumes
// the job), asks the pipeline for each pending unit, stores each answer at once (a resumed job
// applies it without asking again: the unit, its source hash and locale are the idempotency key),
// then writes each node's translation as one content write. It looks at the job's status before
// every vendor call: a cancelled job makes no new call.
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Project, projects, type TranslationJob, translationJobs, translationJobUnits, translationUnits } from "../../db/schema";
import { type HouseRules, houseRules, machineTranslate } from "../ai/pipeline";
import { findTranslation, getBlocks, getNode } from "../content/service";
import type { AppDeps } from "../core/deps";
import { AppError, describeError } from "../errors";
import { type Periodic, periodic } from "../lib/periodic";
import { setTranslatedText, sourceUnits, type TranslationValues } from "../model/units";
import { serviceWrite } from "../write/context";
import { planQueuedJob } from "./jobs";
import { fieldName } from "./machine";
import { upsertTranslation } from "./service";
import { modelOf, type UnitState } from "./status";

export interface TranslationWorker {
  /** One look: takes a job if one is free and works on it until it is done, cancelled or lost. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

const GROUP = 200;

export function startTranslationWorker(deps: AppDeps, opts: { intervalMs?: number; leaseMs?: number; owner?: string } = {}): TranslationWorker {
  const leaseMs = opts.leaseMs ?? 30_000;
  const owner = opts.owner ?? `worker-${crypto.randomUUID()}`;
  const loop: Periodic<void> = periodic(opts.intervalMs ?? 1000, async () => {
    try {
      for (let job = await claim(deps, owner, leaseMs); job && !loop.stopped(); job = await claim(deps, owner, leaseMs)) await work(deps, job, owner, leaseMs, loop.stopped);
    } catch (err) {
      deps.log.warn("translation jobs: a look failed; trying again", describeError(err));
    }
  });
  return loop;
}

const leaseEnd = (deps: AppDeps, leaseMs: number): Date => new Date(deps.now().getTime() + leaseMs);

/** The oldest open job whose lease is free (or run out), taken under this worker's lease. */
async function claim(deps: AppDeps, owner: string, leaseMs: number): Promise<TranslationJob | null> {
  const free = sql`(select id from translation_jobs where status in ('queued', 'running') and (lease_until is null or lease_until < now()) order by created_at limit 1 for update skip locked)`;
  const [job] = await deps.db
    .update(translationJobs)
    .set({ status: "running", leaseOwner: owner, leaseUntil: leaseEnd(deps, leaseMs), updatedAt: deps.now() })
    .where(eq(translationJobs.id, free))
    .returning();
  return job ?? null;
}

/** Renews the lease while the job is still this worker's and running; false when it is not (cancelled, or taken over). */
async function stillMine(deps: AppDeps, job: TranslationJob, owner: string, leaseMs: number): Promise<boolean> {
  const [row] = await deps.db
    .update(translationJobs)
    .set({ leaseUntil: leaseEnd(deps, leaseMs), updatedAt: deps.now() })
    .where(and(eq(translationJobs.id, job.id), eq(translationJobs.leaseOwner, owner), eq(translationJobs.status, "running")))
    .returning({ id: translationJobs.id });
  return row !== undefined;
}

async function work(deps: AppDeps, claimed: TranslationJob, owner: string, leaseMs: number, stopped: () => boolean): Promise<void> {
  const [project] = await deps.db.select().from(projects).where(eq(projects.id, claimed.projectId));
  if (!project) return;
  const job = claimed.planned ? claimed : await planQueuedJob(deps.db, project, claimed);
  const rules = new Map<string, HouseRules>();
  const write = serviceWrite("translation_job", job.createdBy);
  while (!stopped()) {
    if (!(await stillMine(deps, job, owner, leaseMs))) return;
    const next = await deps.db
      .select()
      .from(translationJobUnits)
      .where(and(eq(translationJobUnits.jobId, job.id), inArray(translationJobUnits.state, ["pending", "answered"])))
      .orderBy(asc(translationJobUnits.nodeId), asc(translationJobUnits.locale), asc(translationJobUnits.pointer))
      .limit(GROUP);
    const first = next[0];
    if (!first) {
      await deps.db
        .update(translationJobs)
        .set({ status: "done", finishedAt: deps.now(), updatedAt: deps.now(), leaseOwner: null, leaseUntil: null })
        .where(and(eq(translationJobs.id, job.id), eq(translationJobs.status, "running")));
      return;
    }
    const group = next.filter((u) => u.nodeId === first.nodeId && u.locale === first.locale);
    try {
      if (!(await answer(deps, job, project, group, rules, owner, leaseMs))) return;
      await apply(deps, job, project, first.nodeId, first.locale, write);
    } catch (err) {
      if (err instanceof AppError && err.code === "rate_limited") continue;
      const message = err instanceof AppError ? `${err.code}: ${err.message}` : "internal error";
      deps.log.warn("translation jobs: a job failed", { job_id: job.id, ...describeError(err) });
      await deps.db
        .update(translationJobs)
        .set({ status: "failed", error: message, finishedAt: deps.now(), updatedAt: deps.now(), leaseOwner: null, leaseUntil: null })
        .where(and(eq(translationJobs.id, job.id), eq(translationJobs.status, "running")));
      return;
    }
  }
}

/** Asks for every pending unit of a node and locale, storing each answer as it comes; false when the job stopped being this worker's. */
async function answer(
  deps: AppDeps,
  job: TranslationJob,
  project: Project,
  group: ReadonlyArray<typeof translationJobUnits.$inferSelect>,
  rules: Map<string, HouseRules>,
  owner: string,
  leaseMs: number,
): Promise<boolean> {
  const pending = group.filter((u) => u.state === "pending");
  if (pending.length === 0) return true;
  const first = pending[0];
  if (!first) return true;
  const [node, blocks] = await Promise.all([getNode(deps.db, project.id, first.nodeId).catch(() => null), getBlocks(deps.db, first.nodeId)]);
  const units = node ? new Map(sourceUnits({ ...node, blocks }, await modelOf(deps.db, project.id)).map((u) => [u.pointer, u])) : new Map();
  let house = rules.get(first.locale);
  if (!house) rules.set(first.locale, (house = await houseRules(deps.db, project.id, first.locale)));
  for (const u of pending) {
    const unit = units.get(u.pointer);
    // Gone, or its source changed since the job was made: nothing to ask (a new job takes the new source).
    if (!unit || unit.hash !== u.sourceHash) {
      await setUnit(deps.db, u, { state: "skipped" });
      continue;
    }
    // Before every call: a cancelled (or taken over) job asks nothing more.
    if (!(await stillMine(deps, job, owner, leaseMs))) return false;
    const a = await machineTranslate(
      deps,
      project,
      { from: project.defaultLocale, to: u.locale, text: unit.text, format: unit.format, field: fieldName(unit.pointer), maxLength: unit.maxLength, provider_id: job.providerId, memory: !job.force },
      house,
    );
    // The answer and what it cost, together: a process killed between the two would keep the answer
    // (never asked again) and lose its calls and tokens from the job's usage.
    await deps.db.transaction(async (tx) => {
      await setUnit(tx, u, { state: "answered", answer: a.text, answerStatus: a.status, answerOrigin: a.origin, failures: [...a.failures] });
      if (a.calls > 0)
        await tx
          .update(translationJobs)
          .set({
            usage: sql`jsonb_build_object('input_tokens', (${translationJobs.usage}->>'input_tokens')::bigint + ${a.usage.input_tokens}, 'output_tokens', (${translationJobs.usage}->>'output_tokens')::bigint + ${a.usage.output_tokens}, 'calls', (${translationJobs.usage}->>'calls')::int + ${a.calls})`,
          })
          .where(eq(translationJobs.id, job.id));
    });
  }
  return true;
}

const setUnit = (db: Db, u: typeof translationJobUnits.$inferSelect, set: Partial<typeof translationJobUnits.$inferInsert>) =>
  db
    .update(translationJobUnits)
    .set(set)
    .where(and(eq(translationJobUnits.jobId, u.jobId), eq(translationJobUnits.nodeId, u.nodeId), eq(translationJobUnits.locale, u.locale), eq(translationJobUnits.pointer, u.pointer)));

/**
 * Writes a node's answered units into its translation (one content write, a draft): each one whose
 * source is still the one it was made from and that no person has taken since (unless the job
 * forces); the others are skipped. The units and the job's progress move after it.
 */
async function apply(deps: AppDeps, job: TranslationJob, project: Project, nodeId: string, locale: string, write: ReturnType<typeof serviceWrite>): Promise<void> {
  const answered = await deps.db
    .select()
    .from(translationJobUnits)
    .where(and(eq(translationJobUnits.jobId, job.id), eq(translationJobUnits.nodeId, nodeId), eq(translationJobUnits.locale, locale), eq(translationJobUnits.state, "answered")));
  const node = await getNode(deps.db, project.id, nodeId).catch(() => null);
  const keep: typeof answered = [];
  if (node && answered.length > 0) {
    const blocks = await getBlocks(deps.db, nodeId);
    const current = new Map(sourceUnits({ ...node, blocks }, await modelOf(deps.db, project.id)).map((u) => [u.pointer, u]));
    const [tr, rows] = await Promise.all([
      findTranslation(deps.db, nodeId, locale),
      deps.db
        .select()
        .from(translationUnits)
        .where(and(eq(translationUnits.nodeId, nodeId), eq(translationUnits.locale, locale))),
    ]);
    const values: TranslationValues = structuredClone({ meta: { ...tr?.meta }, fields: tr?.fields ?? {}, blocks: tr?.blocks ?? {} });
    const states = new Map<string, UnitState>();
    for (const u of answered) {
      const unit = current.get(u.pointer);
      const row = rows.find((r) => r.pointer === u.pointer);
      const taken = !job.force && row !== undefined && (row.humanEdited || row.status === "approved" || row.status === "published");
      const fits = unit !== undefined && (unit.maxLength === null || [...(u.answer ?? "")].length <= unit.maxLength);
      if (!unit || unit.hash !== u.sourceHash || taken || !fits || u.answer === null) continue;
      setTranslatedText(values, { ...node, blocks }, u.pointer, u.answer);
      states.set(u.pointer, { status: (u.answerStatus as UnitState["status"]) ?? "machine", ...(u.answerOrigin ? { origin: u.answerOrigin } : {}) });
      keep.push(u);
    }
    if (keep.length > 0) {
      await upsertTranslation(deps.db, write, project, nodeId, locale, { ...values, status: "draft" }, deps.now(), false, { kind: "machine", provider_kind: null, model: null }, (p) => states.get(p));
    }
  }
  const kept = new Set(keep.map((u) => u.pointer));
  for (const u of answered) await setUnit(deps.db, u, { state: kept.has(u.pointer) ? "done" : "skipped" });
  await deps.db
    .update(translationJobs)
    .set({ done: sql`(select count(*) from translation_job_units where job_id = ${job.id} and state in ('done', 'skipped'))::int`, updatedAt: deps.now() })
    .where(eq(translationJobs.id, job.id));
}
