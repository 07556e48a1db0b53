// The webhook endpoints' wire shapes, taken from the server's declarations (types only), and the
// event types a person may subscribe an endpoint to.
import type { z } from "zod";
import type { DeliveryOut, EndpointIn, EndpointOut, EndpointWithSecret, QueuedOut } from "../../../src/webhooks/model";

export type Endpoint = z.output<typeof EndpointOut>;
/** The create and rotate answers: the endpoint with its secret, shown once. */
export type EndpointCreated = z.output<typeof EndpointWithSecret>;
export type Delivery = z.output<typeof DeliveryOut>;
export type Queued = z.output<typeof QueuedOut>;
type EventName = z.input<typeof EndpointIn>["events"][number];
type EventType = Exclude<EventName, "*">;

/** A page of the deliveries log (GET …/webhooks/{id}/deliveries). */
export interface DeliveryPage {
  data: Delivery[];
  total: number;
  page: number;
  per_page: number;
}

/**
 * Every event type an endpoint may subscribe to, in the documented order (docs/webhooks.md), with a
 * line saying when it is sent. A Record over the server's type: an event type added there and not
 * here fails the studio's type check.
 */
const EVENT_HELP: Record<EventType, string> = {
  "node.created": "a node is created",
  "node.updated": "a node's working copy is saved",
  "node.published": "a node is published",
  "node.unpublished": "a node is unpublished",
  "node.archived": "a node is archived",
  "node.restored": "a node is restored",
  "node.deleted": "a node is deleted (one per node of a subtree)",
  "translation.updated": "a translation is saved without publishing, or removed",
  "translation.published": "a translation is published",
  "translation.unpublished": "a translation's published version is removed",
  "translation.stale": "translated fields went stale: their source changed",
  "media.created": "a media item is uploaded",
  "media.updated": "a media item is changed",
  "media.deleted": "a media item is deleted",
  "model.updated": "the content model changes",
  "theme.updated": "the theme changes",
  "project.updated": "the project's settings change",
};

export const EVENT_TYPES = Object.keys(EVENT_HELP) as EventType[];
export const eventHelp = (type: string): string => EVENT_HELP[type as EventType] ?? "";
