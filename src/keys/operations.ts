import { z } from "zod";
import { adminOperation } from "../core/operation";
import { Empty } from "../lib/schemas";
import { ADMIN_SCOPES } from "../lib/scopes";
import { KeyOut } from "./model";
import { createAdminKey, keyToWire, listAdminKeys, revokeAdminKey } from "./service";

const listKeysOp = adminOperation({
  name: "list_admin_keys",
  title: "List admin keys",
  description: "List admin keys (hints only).",
  scopes: ["keys:write"],
  input: z.object({}),
  output: z.object({ keys: z.array(KeyOut) }),
  http: { method: "GET", path: "/admin/keys", data: "keys", tag: "keys", summary: "List admin keys (hints only)" },
  run: async ({ deps, caller }) => ({ keys: (await listAdminKeys(deps.db, caller)).map(keyToWire) }),
});

const createKeyOp = adminOperation({
  name: "create_admin_key",
  title: "Create an admin key",
  description: "Create an admin key; the plaintext key is in this response only.",
  scopes: ["keys:write"],
  input: z.object({
    name: z.string().min(1).max(200),
    scopes: z.array(z.enum(ADMIN_SCOPES)).max(20).optional().describe("defaults to every scope the caller holds"),
    project_ids: z.array(z.uuid()).max(1000).nullable().optional(),
  }),
  output: z.object({ key: KeyOut.extend({ key: z.string().describe("shown once") }) }),
  http: { method: "POST", path: "/admin/keys", status: 201, data: "key", noStore: true, tag: "keys", summary: "Create an admin key; the plaintext key is in this response only" },
  run: ({ deps, caller, now }, args) => createAdminKey(deps.db, args, caller, now).then(({ key, plaintext }) => ({ key: { ...keyToWire(key), key: plaintext } })),
});

const revokeKeyOp = adminOperation({
  name: "revoke_admin_key",
  title: "Revoke an admin key",
  description: "Revoke an admin key.",
  scopes: ["keys:write"],
  input: z.object({ id: z.uuid() }),
  output: Empty,
  http: { method: "DELETE", path: "/admin/keys/:id", status: 204, tag: "keys", summary: "Revoke an admin key" },
  run: ({ deps, caller, now }, args) => revokeAdminKey(deps.db, args.id, caller, now).then(() => ({})),
});

export const keyOperations = [listKeysOp, createKeyOp, revokeKeyOp];
