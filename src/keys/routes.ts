import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { errorResponses, IdParams, Timestamp, Uuid } from "../lib/model";
import { ADMIN_SCOPES } from "../lib/scopes";
import { createAdminKey, keyToWire, listAdminKeys, revokeAdminKey } from "./service";

const Key = t.Object({
  id: Uuid,
  name: t.String(),
  key_hint: t.String(),
  scopes: t.Array(t.String()),
  project_ids: t.Nullable(t.Array(t.String())),
  created_at: Timestamp,
  last_used_at: t.Nullable(Timestamp),
  revoked_at: t.Nullable(Timestamp),
});

export function keyRoutes(deps: AppDeps) {
  const { db } = deps;
  return new Elysia({ prefix: "/admin/keys" })
    .use(adminAuth(deps))
    .get("", async ({ caller }) => ({ data: (await listAdminKeys(db, caller)).map(keyToWire) }), {
      scope: "keys:write",
      response: { 200: t.Object({ data: t.Array(Key) }), ...errorResponses },
      detail: adminDoc("keys", "List admin keys (hints only)"),
    })
    .post("",
      async ({ body, caller, set }) => {
        const { key, plaintext } = await createAdminKey(db, body, caller, deps.now());
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { data: { ...keyToWire(key), key: plaintext } };
      },
      {
        scope: "keys:write",
        body: t.Object({
          name: t.String({ minLength: 1, maxLength: 200 }),
          scopes: t.Optional(t.Array(t.String({ enum: [...ADMIN_SCOPES] }), { maxItems: 20, description: "defaults to every scope the caller holds" })),
          project_ids: t.Optional(t.Nullable(t.Array(t.String({ format: "uuid" }), { maxItems: 1000 }))),
        }),
        response: { 201: t.Object({ data: t.Composite([Key, t.Object({ key: t.String({ description: "shown once" }) })]) }), ...errorResponses },
        detail: adminDoc("keys", "Create an admin key; the plaintext key is in this response only"),
      },
    )
    .delete(
      "/:id",
      async ({ params, caller, set }) => {
        await revokeAdminKey(db, params.id, caller, deps.now());
        set.status = 204;
        return undefined;
      },
      { scope: "keys:write", params: IdParams, detail: adminDoc("keys", "Revoke an admin key") },
    );
}
