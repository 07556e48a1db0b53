// The AI providers tab's reads, shared by its two sections: the providers (semantic search names
// one of them) and the semantic search setting (deleting its provider turns it off on the server).
import { type UseQueryResult, useQuery } from "@tanstack/react-query";
import { data, projectBase } from "../app/api";
import type { Project } from "../app/types";
import type { Provider } from "./types";

export const providersKey = (projectId: string) => ["ai-providers", projectId] as const;
export const semanticKey = (projectId: string) => ["search-semantic", projectId] as const;

export function useProviders(project: Project): UseQueryResult<Provider[]> {
  return useQuery({ queryKey: providersKey(project.id), queryFn: () => data<Provider[]>(`${projectBase(project.slug)}/ai/providers`) });
}
