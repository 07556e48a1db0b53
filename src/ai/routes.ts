import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

// Placeholder: the ai feature mounts its routes here.
export function aiRoutes(_deps: AppDeps) {
  return new Elysia();
}
