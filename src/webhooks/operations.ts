import { z } from "zod";
import { projectOperation, READ_ONLY } from "../core/operation";
import { Empty } from "../lib/schemas";
import { DeliveriesQuery, DeliveryOut, EndpointIn, EndpointOut, EndpointPatch, EndpointWithSecret, QueuedOut } from "./model";
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, readEndpoint, redeliver, sendTestEvent, updateEndpoint } from "./service";

const EndpointRef = { webhook_id: z.uuid().describe("the endpoint's id") };
const byId = (method: "GET" | "PATCH" | "DELETE" | "POST", tail = "") => ({ method, path: `/admin/p/:ref/webhooks/:id${tail}`, params: { id: "webhook_id" }, tag: "webhooks" }) as const;
// Agents read endpoints and the log over MCP with content:read (MCP credentials never hold projects:read); they cannot change them.
const READ = { anyOf: ["content:read", "projects:read"] } as const;
/** Only who may change an endpoint reads its whole URL (often the receiver's credential); other readers get its origin. */
const revealsUrls = (caller: { readonly scopes: readonly string[] }): boolean => caller.scopes.includes("webhooks:write");

const listWebhooksOp = projectOperation({
  name: "list_webhooks",
  title: "List webhook endpoints",
  description:
    "List the project's webhook endpoints: URL (its origin only without webhooks:write), subscribed events, status (active, paused, disabled with its reason), events pending (their signing secrets are never shown).",
  scopes: READ,
  input: z.object({}),
  output: z.object({ webhooks: z.array(EndpointOut) }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/webhooks", data: "webhooks", tag: "webhooks", summary: "List the project's webhook endpoints" },
  run: async ({ deps, project, caller }) => ({ webhooks: await listEndpoints(deps.db, project.id, revealsUrls(caller)) }),
});

const createWebhookOp = projectOperation({
  name: "create_webhook",
  title: "Create a webhook endpoint",
  description: "Create a webhook endpoint; the answer holds its signing secret (whsec_…), shown once and sealed at rest.",
  scopes: ["webhooks:write"],
  input: EndpointIn,
  output: z.object({ webhook: EndpointWithSecret }),
  http: {
    method: "POST",
    path: "/admin/p/:ref/webhooks",
    status: 201,
    data: "webhook",
    noStore: true,
    tag: "webhooks",
    summary: "Create a webhook endpoint (its secret is answered once)",
    description: "Events are POSTed signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature).",
    errors: [409],
  },
  run: async ({ deps, project }, args) => {
    const { endpoint, secret } = await createEndpoint(deps, project, args);
    return { webhook: { ...endpoint, secret } };
  },
});

const getWebhookOp = projectOperation({
  name: "get_webhook",
  title: "Read a webhook endpoint",
  description: "Read one webhook endpoint (never its secret; its URL's origin only without webhooks:write).",
  scopes: READ,
  input: z.object(EndpointRef),
  output: z.object({ webhook: EndpointOut }),
  http: { ...byId("GET"), data: "webhook", summary: "Read a webhook endpoint" },
  run: async ({ deps, project, caller }, args) => ({ webhook: await readEndpoint(deps.db, project.id, args.webhook_id, revealsUrls(caller)) }),
});

const updateWebhookOp = projectOperation({
  name: "update_webhook",
  title: "Update a webhook endpoint",
  description: "Change its URL, events or description; pause or resume it (status); rotate_secret: true answers a new secret once, the old one still signing for WEBHOOKS_SECRET_GRACE seconds.",
  scopes: ["webhooks:write"],
  input: EndpointPatch.extend(EndpointRef),
  output: z.object({ webhook: EndpointOut.extend({ secret: z.string().optional().describe("after rotate_secret only: the new secret, shown once") }) }),
  http: { ...byId("PATCH"), data: "webhook", noStore: true, summary: "Update, pause, resume or rotate the secret of a webhook endpoint" },
  run: async ({ deps, project }, { webhook_id, ...patch }) => {
    const { endpoint, secret } = await updateEndpoint(deps, project, webhook_id, patch);
    return { webhook: secret === undefined ? endpoint : { ...endpoint, secret } };
  },
});

const deleteWebhookOp = projectOperation({
  name: "delete_webhook",
  title: "Delete a webhook endpoint",
  description: "Delete a webhook endpoint with its pending events and deliveries log.",
  scopes: ["webhooks:write"],
  input: z.object(EndpointRef),
  output: Empty,
  http: { ...byId("DELETE"), status: 204 },
  async run({ deps, project }, args) {
    await deleteEndpoint(deps.db, project.id, args.webhook_id);
    return {};
  },
});

const listDeliveriesOp = projectOperation({
  name: "list_webhook_deliveries",
  title: "Read a webhook's deliveries log",
  description: "The attempts made to one endpoint, newest first: event id (the webhook-id header), type, time, HTTP status, duration, error, outcome and the next attempt when retrying.",
  scopes: READ,
  input: DeliveriesQuery.extend(EndpointRef),
  output: z.object({ deliveries: z.array(DeliveryOut), total: z.number().int(), page: z.number().int(), per_page: z.number().int() }),
  tool: READ_ONLY,
  http: { ...byId("GET", "/deliveries"), data: "deliveries", summary: "The endpoint's deliveries log (every attempt)" },
  run: async ({ deps, project }, { webhook_id, ...q }) => listDeliveries(deps.db, project.id, webhook_id, q),
});

const redeliverOp = projectOperation({
  name: "redeliver_webhook",
  title: "Redeliver an event",
  description: "Send the event of a logged attempt again to the endpoint (one attempt, the same webhook-id).",
  scopes: ["webhooks:write"],
  input: z.object({ ...EndpointRef, delivery_id: z.uuid().describe("an attempt's id from the deliveries log") }),
  output: z.object({ queued: QueuedOut }),
  http: {
    method: "POST",
    path: "/admin/p/:ref/webhooks/:id/deliveries/:deliveryId/redeliver",
    params: { id: "webhook_id", deliveryId: "delivery_id" },
    status: 201,
    data: "queued",
    tag: "webhooks",
    summary: "Redeliver the event of a logged attempt",
    errors: [409],
  },
  run: async ({ deps, project }, args) => ({ queued: await redeliver(deps, project.id, args.webhook_id, args.delivery_id) }),
});

const testWebhookOp = projectOperation({
  name: "test_webhook",
  title: "Send a test event",
  description: "Queue a webhook.test event to this endpoint only (one attempt); its outcome appears in the deliveries log.",
  scopes: ["webhooks:write"],
  input: z.object(EndpointRef),
  output: z.object({ queued: QueuedOut }),
  http: { ...byId("POST", "/test"), status: 201, data: "queued", summary: "Send a webhook.test event", errors: [409] },
  run: async ({ deps, project }, args) => ({ queued: await sendTestEvent(deps, project, args.webhook_id) }),
});

export const webhookOperations = [listWebhooksOp, createWebhookOp, getWebhookOp, updateWebhookOp, deleteWebhookOp, listDeliveriesOp, redeliverOp, testWebhookOp];
