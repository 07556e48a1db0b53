import { z } from "zod";
import { ActorOut } from "../activity/model";
import { Id, Timestamp } from "../lib/schemas";

export const PreviewTokenIn = z.object({
  ttl_seconds: z.number().int().min(60).optional().describe("lifetime in seconds: default 3600 (one hour), at most 604800 (7 days) unless the operator set a shorter PREVIEW_TOKEN_MAX_TTL"),
  name: z.string().min(1).max(200).optional().describe("what the token is for (e.g. the frontend's name), shown in the list"),
});

export const PreviewTokenOut = z.object({
  id: Id,
  name: z.string().nullable(),
  token_hint: z.string(),
  created_by: ActorOut.pick({ kind: true, id: true, name: true }),
  created_at: Timestamp,
  expires_at: Timestamp,
  expired: z.boolean(),
});
