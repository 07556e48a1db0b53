// Which rows a delivery read sees: the published versions (every reader) or the working copies (a
// preview). The same statements read either (src/content/publish.ts keeps the two apart).
import { type SQL, sql } from "drizzle-orm";
import { nodes, publishedNodes } from "../../db/schema";

export interface Version {
  readonly table: typeof nodes | typeof publishedNodes;
  readonly nodes: SQL;
  readonly blocks: SQL;
  readonly translations: SQL;
}

export const PUBLISHED: Version = { table: publishedNodes, nodes: sql.raw("published_nodes"), blocks: sql.raw("published_blocks"), translations: sql.raw("published_translations") };
export const WORKING: Version = { table: nodes, nodes: sql.raw("nodes"), blocks: sql.raw("blocks"), translations: sql.raw("translations") };
export const versionOf = (preview: boolean): Version => (preview ? WORKING : PUBLISHED);
