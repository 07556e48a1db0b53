// Wire shapes of webhook endpoints and their deliveries log, declared once as the operations' schemas.
import { z } from "zod";
import { Id, Page, PerPage, Timestamp } from "../lib/schemas";
import { EVENT_TYPES } from "../write/outbox";

const EventName = z.enum(["*", ...EVENT_TYPES]).describe("an event type (<resource>.<action>) or * for every one");

export const EndpointIn = z.object({
  url: z.string().min(1).max(2048).describe("where events are POSTed: https (http and private addresses only with WEBHOOKS_ALLOW_PRIVATE_URLS=true)"),
  events: z
    .array(EventName)
    .min(1)
    .max(EVENT_TYPES.length + 1)
    .describe('the event types sent to it, or ["*"]'),
  description: z.string().max(500).nullable().optional(),
});

export const EndpointPatch = EndpointIn.partial().extend({
  status: z.enum(["active", "paused"]).optional().describe("paused: events are kept and sent on resume; active resumes (and re-enables a disabled endpoint)"),
  rotate_secret: z.boolean().optional().describe("true: a new secret is made (answered once); the old one keeps signing beside it for WEBHOOKS_SECRET_GRACE seconds"),
});

export const EndpointOut = z.object({
  id: Id,
  project_id: Id,
  url: z.string().describe("where events are POSTed; without webhooks:write only its origin (https://host/…): the path and query often carry the receiver's credential"),
  url_masked: z.boolean().describe("true: url shows the origin only (the caller lacks webhooks:write)"),
  description: z.string().nullable(),
  events: z.array(z.string()),
  status: z.enum(["active", "paused", "disabled"]).describe("disabled: it failed every attempt for WEBHOOKS_DISABLE_AFTER; see disabled_reason"),
  disabled_reason: z.string().nullable(),
  disabled_at: Timestamp.nullable(),
  failing_since: Timestamp.nullable().describe("since when every attempt has failed (null: the last one succeeded)"),
  pending: z.number().int().describe("events waiting to be sent to it"),
  previous_secret_expires_at: Timestamp.nullable().describe("after a rotation: until when the previous secret also signs"),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** The create and rotate answers: the secret, shown once. */
export const EndpointWithSecret = EndpointOut.extend({ secret: z.string().describe("the signing secret (whsec_…): store it now, it is not shown again") });

export const DeliveryOut = z.object({
  id: Id.describe("the attempt's id (redeliver it with POST …/deliveries/{id}/redeliver)"),
  event_id: z.string().describe("the webhook-id header of the event (stable across attempts)"),
  event_type: z.string(),
  attempt: z.number().int().describe("1 for the first attempt of this delivery"),
  attempted_at: Timestamp,
  status_code: z.number().int().nullable().describe("the receiver's HTTP status; null when none came (timeout, network error, refused URL)"),
  duration_ms: z.number().int(),
  error: z.string().nullable(),
  outcome: z.enum(["succeeded", "retrying", "failed"]),
  next_attempt_at: Timestamp.nullable(),
});

export const DeliveriesQuery = z.object({
  event_id: z.string().max(100).optional().describe("only the attempts of this event"),
  page: Page,
  per_page: PerPage(50),
});

export const QueuedOut = z.object({ event_id: z.string(), event_type: z.string() });
