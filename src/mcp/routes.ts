import { Elysia } from "elysia";
import type { AppDeps } from "../deps";

// Placeholder: the mcp feature mounts its routes here.
export function mcpRoutes(_deps: AppDeps) {
  return new Elysia();
}
