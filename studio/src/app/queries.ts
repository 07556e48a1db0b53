// Reads shared by the tree and the editor, keyed so that both see one cache.
import { useQuery } from "@tanstack/react-query";
import { ApiError, data, enc, projectBase } from "./api";
import type { ContentModel, Me, NodeType, NodeWithBlocks, Project } from "./types";

export const keys = {
  project: (ref: string) => ["project", ref] as const,
  model: (ref: string) => ["model", ref] as const,
  me: (ref: string) => ["me", ref] as const,
  nodes: (ref: string) => ["nodes", ref] as const,
  nodeList: (ref: string, parent: string, q: string, page: number) => ["nodes", ref, "list", parent, q, page] as const,
  node: (ref: string, id: string) => ["node", ref, id] as const,
};

export function useProject(ref: string) {
  return useQuery({ queryKey: keys.project(ref), queryFn: () => data<Project>(`/admin/projects/${enc(ref)}`), staleTime: 60_000 });
}

export function useModel(ref: string) {
  return useQuery({ queryKey: keys.model(ref), queryFn: () => data<ContentModel>(`${projectBase(ref)}/model`), staleTime: 60_000 });
}

/** My role in the project; a server without the endpoint (404) leaves the studio assuming an editor, the server still refusing what I lack. */
export function useMe(ref: string) {
  return useQuery({
    queryKey: keys.me(ref),
    queryFn: async (): Promise<Me> => {
      try {
        return await data<Me>(`/studio/api/p/${enc(ref)}/me`);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404 && err.code !== "project_not_found") return { role: "editor", scopes: [] };
        throw err;
      }
    },
    staleTime: 60_000,
  });
}

export const canWrite = (me: Me | undefined) => !!me && (me.scopes.length > 0 ? me.scopes.includes("content:write") : me.role !== "viewer");
export const canPublish = (me: Me | undefined) => !!me && (me.scopes.length > 0 ? me.scopes.includes("content:publish") : me.role !== "viewer");
export const canTranslateWithAi = (me: Me | undefined) => canWrite(me) && (!me || me.scopes.length === 0 || me.scopes.includes("ai:read"));

export function nodeTypeOf(model: ContentModel | undefined, type: string | undefined): NodeType | undefined {
  return type ? model?.node_types.find((t) => t.name === type) : undefined;
}

/** The node types a child of `parentType` may have (top level: any declared type); "page" when the model declares none. */
export function childTypes(model: ContentModel | undefined, parentType: string | null): string[] {
  const declared = model?.node_types.map((t) => t.name) ?? [];
  if (declared.length === 0) return ["page"];
  if (parentType === null) return declared;
  const parent = nodeTypeOf(model, parentType);
  if (!parent || parent.children === null) return declared;
  return parent.children;
}

export type BadgeState = "draft" | "published" | "changed" | "archived" | "scheduled";

/** The one badge a node shows: archived, scheduled (a future publication while not live), changed, published or draft. */
export function badgeOf(n: { status: string; state: string; publish_at: string | null }): BadgeState {
  if (n.status === "archived") return "archived";
  if (n.publish_at && n.status !== "published" && Date.parse(n.publish_at) > Date.now()) return "scheduled";
  if (n.state === "changed") return "changed";
  if (n.status === "published") return "published";
  return "draft";
}

export const BADGE_LABEL: Record<BadgeState, string> = { draft: "draft", published: "published", changed: "changed", archived: "archived", scheduled: "scheduled" };

export function nodeQuery(ref: string, id: string) {
  return { queryKey: keys.node(ref, id), queryFn: () => data<NodeWithBlocks>(`${projectBase(ref)}/nodes/${enc(id)}`), staleTime: 5_000 };
}
