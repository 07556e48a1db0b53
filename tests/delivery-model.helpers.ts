// Delivery tests set a project's content model and node fields directly (the model API and the
// admin API for fields live in other branches), through the one write path so that delivery's
// cache sees the write as any other.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { contentModels, nodes, projects, translations } from "../db/schema";
import { systemWrite } from "../src/write/context";
import { contentWrite } from "../src/write/unit";

type ModelInput = { strict?: boolean; block_types?: unknown[]; node_types?: unknown[] };

/** Writes the project's model as the model API does: version + 1, projects.model_version the same. Answers the version. */
export function setModel(db: Db, projectId: string, model: ModelInput): Promise<number> {
  const definition = { strict: false, block_types: [], node_types: [], ...model };
  return contentWrite(db, systemWrite(), projectId, async (tx) => {
    const [row] = await tx
      .insert(contentModels)
      .values({ projectId, version: 1, definition })
      .onConflictDoUpdate({ target: contentModels.projectId, set: { version: sql`${contentModels.version} + 1`, definition, updatedAt: sql`now()` } })
      .returning({ version: contentModels.version });
    if (!row) throw new Error("setModel: no row");
    await tx.update(projects).set({ modelVersion: row.version }).where(eq(projects.id, projectId));
    return row.version;
  });
}

/** Sets a node's fields (not checked against the model: a test may want content the model refuses). */
export function setFields(db: Db, projectId: string, nodeId: string, fields: Record<string, unknown>): Promise<void> {
  return contentWrite(db, systemWrite(), projectId, async (tx) => {
    await tx.update(nodes).set({ fields }).where(eq(nodes.id, nodeId));
  });
}

/** Sets the fields overrides of a node's translation in `locale` (the translation must exist). */
export function setTranslationFields(db: Db, projectId: string, nodeId: string, locale: string, fields: Record<string, unknown>): Promise<void> {
  return contentWrite(db, systemWrite(), projectId, async (tx) => {
    const done = await tx
      .update(translations)
      .set({ fields })
      .where(and(eq(translations.nodeId, nodeId), eq(translations.locale, locale)))
      .returning({ id: translations.id });
    if (done.length !== 1) throw new Error("setTranslationFields: no such translation");
  });
}
