import { integer, jsonb, pgTable, timestamp, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

/**
 * A project's content model: block types and node types, as the admin API wrote it
 * (src/model/model.ts parses it). `version` counts its changes; projects.model_version mirrors it so
 * that a content write's version bump learns, in the same statement, which model it must meet.
 */
export const contentModels = pgTable("content_models", {
  projectId: uuid("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  version: integer("version").notNull(),
  definition: jsonb("definition").$type<Record<string, unknown>>().notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
