// The admin API's wire shapes, taken from the server's zod declarations (types only: nothing of
// the server is bundled into the studio).
import type { z } from "zod";
import type { ActorOut } from "../../../src/activity/model";
import type { NodeOut, NodeWithBlocksOut, PublishedVersionOut } from "../../../src/content/model";
import type { RevisionOut } from "../../../src/history/model";
import type { ContentModelOut, NodeTypeOut } from "../../../src/model/model";
import type { ProjectOut } from "../../../src/projects/model";
import type { SearchContentOut } from "../../../src/search/model";
import type { TranslationOut } from "../../../src/translations/model";

export type Node = z.output<typeof NodeOut>;
export type NodeWithBlocks = z.output<typeof NodeWithBlocksOut>;
export type ContentModel = z.output<typeof ContentModelOut>;
export type NodeType = z.output<typeof NodeTypeOut>;
export type Project = z.output<typeof ProjectOut>;
export type Translation = z.output<typeof TranslationOut>;
export type Revision = z.output<typeof RevisionOut>;
/** A node's published version (GET /nodes/{id}/published). */
export type PublishedVersion = z.output<typeof PublishedVersionOut>;
export type Actor = z.output<typeof ActorOut>;
/** A hit of the admin search (GET /search, search_content): titles and text, drafts included. */
export type SearchHit = z.output<typeof SearchContentOut>["hits"][number];

/** The signed-in person and their session (the studio's own session API). */
export interface SessionInfo {
  user: { id: string; email: string; role: string };
  session: { id: string; created_at: string; expires_at: string };
}
export interface SessionRow {
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  user_agent: string | null;
  current: boolean;
}
export interface Me {
  role: "viewer" | "editor" | "admin" | "owner";
  scopes: string[];
}
export interface NodeList {
  data: Node[];
  total: number;
  page: number;
  per_page: number;
}
