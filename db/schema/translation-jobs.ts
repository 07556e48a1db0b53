import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import type { Actor } from "./history";
import { projects } from "./projects";
import type { UnitOrigin } from "./translation-units";

export type JobStatus = "queued" | "running" | "done" | "cancelled" | "failed";

export interface JobTokens {
  input_tokens: number;
  output_tokens: number;
  calls: number;
}

/**
 * A bulk translation (docs/translation.md, "Bulk jobs"): a subtree or a whole project into one or
 * more locales, its units listed when it is made, carried out by a worker holding a lease (any
 * instance; a lost worker's lease runs out and another resumes it).
 */
export const translationJobs = pgTable(
  "translation_jobs",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    rootNodeId: uuid("root_node_id"),
    locales: jsonb("locales").$type<string[]>().notNull(),
    providerId: uuid("provider_id"),
    force: boolean("force").notNull().default(false),
    /** subtree: the root and everything below it (or the whole project); node: the root alone (auto-translate on publish). */
    scope: text("scope").$type<"subtree" | "node">().notNull().default("subtree"),
    /** False for a job made by the write path (auto-translate): the worker lists its units when it takes it. */
    planned: boolean("planned").notNull().default(true),
    status: text("status").$type<JobStatus>().notNull(),
    estimate: jsonb("estimate").$type<JobTokens & { cost: number | null }>().notNull(),
    total: integer("total").notNull(),
    done: integer("done").notNull().default(0),
    usage: jsonb("usage").$type<JobTokens>().notNull(),
    error: text("error"),
    createdBy: jsonb("created_by").$type<Actor>().notNull(),
    /** The MCP task this job answers for (2025-11-25 tasks), when one made it. */
    taskId: text("task_id"),
    leaseOwner: text("lease_owner"),
    leaseUntil: timestamp("lease_until", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("translation_jobs_project_idx").on(t.projectId, t.createdAt),
    index("translation_jobs_open_idx").on(t.status).where(sql`${t.status} in ('queued', 'running')`),
    check("translation_jobs_status_check", sql`${t.status} in ('queued', 'running', 'done', 'cancelled', 'failed')`),
  ],
);

/**
 * One unit of a job: a field of a node in a locale, from the source text whose hash it names (the
 * job's idempotency key: unit, source hash, locale). Its answer is stored as soon as it comes, so a
 * job resumed after a kill applies it without asking the vendor again.
 */
export const translationJobUnits = pgTable(
  "translation_job_units",
  {
    jobId: uuid("job_id").notNull(),
    nodeId: uuid("node_id").notNull(),
    locale: text("locale").notNull(),
    pointer: text("pointer").notNull(),
    sourceHash: text("source_hash").notNull(),
    /** pending (to ask), answered (answer stored, not yet written), done (written), skipped (its source changed, or the field was taken by a person meanwhile). */
    state: text("state").notNull().default("pending"),
    answer: text("answer"),
    answerStatus: text("answer_status"),
    answerOrigin: jsonb("answer_origin").$type<UnitOrigin>(),
    failures: jsonb("failures").$type<string[]>(),
  },
  (t) => [
    primaryKey({ columns: [t.jobId, t.nodeId, t.locale, t.pointer] }),
    foreignKey({ columns: [t.jobId], foreignColumns: [translationJobs.id], name: "translation_job_units_job_fk" }).onDelete("cascade"),
    index("translation_job_units_state_idx").on(t.jobId, t.state),
  ],
);

export type TranslationJob = typeof translationJobs.$inferSelect;
