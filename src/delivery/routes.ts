import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

// Placeholder: the delivery feature mounts its routes here.
export function deliveryRoutes(_deps: AppDeps) {
  return new Elysia();
}
