import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

// Placeholder: the oauth feature mounts its routes here.
export function oauthRoutes(_deps: AppDeps) {
  return new Elysia();
}
