// Administration of OAuth clients and consents (admin keys with keys:write); the OAuth endpoints
// themselves are HTTP of their own (routes.ts), in the RFC wire format.
import { z } from "zod";
import { resolveProject } from "../auth";
import { adminOperation } from "../core/operation";
import { Empty, Id } from "../lib/schemas";
import { ClientOut, GrantOut } from "./model";
import { deleteClient, listClients, listGrants, MAX_CLIENT_ID_LENGTH, revokeGrant } from "./service";

const listClientsOp = adminOperation({
  name: "list_oauth_clients",
  title: "List OAuth clients",
  description: "List registered OAuth clients.",
  scopes: ["keys:write"],
  input: z.object({}),
  output: z.object({ clients: z.array(ClientOut) }),
  http: { method: "GET", path: "/admin/oauth/clients", data: "clients", tag: "oauth", summary: "List registered OAuth clients" },
  run: async ({ deps, caller }) => ({ clients: await listClients(deps.db, caller) }),
});

const deleteClientOp = adminOperation({
  name: "delete_oauth_client",
  title: "Delete an OAuth client",
  description: "Delete an OAuth client; its consents, codes and tokens are deleted with it; its tokens stop working at once.",
  scopes: ["keys:write"],
  input: z.object({ id: Id.min(1).max(MAX_CLIENT_ID_LENGTH) }),
  output: Empty,
  http: { method: "DELETE", path: "/admin/oauth/clients/:id", status: 204, tag: "oauth", description: "Its consents, codes and tokens are deleted with it; its tokens stop working at once." },
  run: ({ deps, caller }, args) => deleteClient(deps.db, args.id, caller).then(() => ({})),
});

const listGrantsOp = adminOperation({
  name: "list_oauth_grants",
  title: "List OAuth consents",
  description: "List OAuth consents (grants), newest first, at most 1000.",
  scopes: ["keys:write"],
  input: z.object({
    project: z.string().max(64).optional().describe("project id or slug"),
    user_id: z.uuid().optional(),
    client_id: z.string().max(2000).optional(),
    active: z.boolean().optional().describe("only consents not revoked"),
  }),
  output: z.object({ grants: z.array(GrantOut) }),
  http: { method: "GET", path: "/admin/oauth/grants", data: "grants", tag: "oauth", summary: "List OAuth consents (grants)", description: "Newest first, at most 1000." },
  async run({ deps, caller }, { project: ref, ...filter }) {
    const project = ref ? await resolveProject(deps.db, ref, caller) : null;
    return { grants: await listGrants(deps.db, { ...filter, project_id: project?.id }, caller) };
  },
});

const revokeGrantOp = adminOperation({
  name: "revoke_oauth_grant",
  title: "Revoke an OAuth consent",
  description: "Revoke an OAuth consent; every access and refresh token of the consent stops working at once.",
  scopes: ["keys:write"],
  input: z.object({ id: z.uuid() }),
  output: Empty,
  http: { method: "DELETE", path: "/admin/oauth/grants/:id", status: 204, tag: "oauth", description: "Every access and refresh token of the consent stops working at once." },
  run: ({ deps, caller, now }, args) => revokeGrant(deps.db, args.id, caller, now).then(() => ({})),
});

export const oauthOperations = [listClientsOp, deleteClientOp, listGrantsOp, revokeGrantOp];
