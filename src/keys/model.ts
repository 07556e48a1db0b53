import { z } from "zod";
import { Id, Timestamp } from "../lib/schemas";

export const KeyOut = z.object({
  id: Id,
  name: z.string(),
  key_hint: z.string(),
  scopes: z.array(z.string()),
  project_ids: z.array(z.string()).nullable(),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
});
