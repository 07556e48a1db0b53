import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

/** A project's webhook endpoint: where its events are sent, signed with its secret (sealed, never stored plain). */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    description: text("description"),
    /** Event types subscribed to, or ["*"]. */
    events: jsonb("events").$type<string[]>().notNull(),
    /** active | paused (events kept, sent on resume) | disabled (failing for too long: no new events kept). */
    status: text("status").notNull().default("active"),
    disabledReason: text("disabled_reason"),
    disabledAt: timestamp("disabled_at", { withTimezone: true, mode: "date" }),
    // v1:<key id>:<nonce>:<ciphertext+tag> of `whsec_…`; never the plaintext.
    secretSealed: text("secret_sealed").notNull(),
    /** The secret before the last rotation, still signed with until previous_secret_expires_at. */
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: timestamp("previous_secret_expires_at", { withTimezone: true, mode: "date" }),
    /** Since when every attempt has failed (null after a success). */
    failingSince: timestamp("failing_since", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("webhook_endpoints_project_idx").on(t.projectId)],
);

/** One event, written in the transaction of the change it reports; `payload` is the exact body every attempt sends. */
export const webhookEvents = pgTable(
  "webhook_events",
  {
    /** The webhook-id header: msg_… */
    id: text("id").primaryKey(),
    /** Commit order within a project (a project's writes are serialised): per-endpoint ordering. */
    seq: bigserial("seq", { mode: "number" }).notNull(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    payload: text("payload").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("webhook_events_project_idx").on(t.projectId, t.createdAt)],
);

/** The outbox: one row per event and endpoint, claimed by one dispatcher at a time (lease), retried on the schedule. */
export const webhookOutbox = pgTable(
  "webhook_outbox",
  {
    id: uuid("id").primaryKey(),
    eventId: text("event_id")
      .notNull()
      .references(() => webhookEvents.id, { onDelete: "cascade" }),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    seq: bigint("seq", { mode: "number" }).notNull(),
    /** pending | delivered | failed */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** A redelivery or test event: one attempt, no retries. */
    manual: boolean("manual").notNull().default(false),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    leaseUntil: timestamp("lease_until", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("webhook_outbox_pending_idx").on(t.endpointId, t.seq).where(sql`${t.status} = 'pending'`), index("webhook_outbox_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`)],
);

/** The deliveries log: one row per attempt. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey(),
    outboxId: uuid("outbox_id")
      .notNull()
      .references(() => webhookOutbox.id, { onDelete: "cascade" }),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    attempt: integer("attempt").notNull(),
    attemptedAt: timestamp("attempted_at", { withTimezone: true, mode: "date" }).notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    /** succeeded | retrying | failed */
    outcome: text("outcome").notNull(),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.attemptedAt)],
);
