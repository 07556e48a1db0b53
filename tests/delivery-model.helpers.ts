// Delivery tests set a project's content model through the model API, and node fields directly
// (content the model may refuse, on purpose) through the one write path, so that delivery's cache
// sees the write as any other.
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { nodes, translations } from "../db/schema";
import { systemWrite } from "../src/write/context";
import { contentWrite } from "../src/write/unit";

/**
 * Writes the project's content model through the model API (src/model/service.ts, as PUT
 * /admin/p/{ref}/model?force=true does): the model validated, its version and the project's bumped
 * in one content write, and the field indexes built. Answers the version.
 */
export { setModel } from "./model.helpers";

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
