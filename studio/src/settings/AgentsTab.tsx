// The agents that reach this project and what they wrote: its MCP tokens (GET /admin/p/{ref}/ai/mcp/
// tokens, ai:read) and its OAuth consents (GET /admin/oauth/grants?project=, keys:write: shown only
// to a person who holds it), each with the number of its entries in the activity log and its last
// write (GET /admin/p/{ref}/activity?actor_kind=…&actor_id=…&per_page=1 → total and the newest).
// `Revoke` after a confirmation: delete_mcp_token (ai:write), revoke_oauth_grant (keys:write).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "react-aria-components";
import { enc, messageOf, projectBase, request } from "../app/api";
import { DataTable, useConfirm } from "../app/DataTable";
import { formatTime } from "../app/time";
import "../editorial/editorial.css";
import { ErrorText, StatusText } from "./Alert";
import { ScopeList } from "./ScopeList";
import type { McpToken } from "./types";

interface Grant {
  id: string;
  client_id: string;
  client_name: string | null;
  user_id: string;
  user_email: string | null;
  project_id: string;
  scopes: string[];
  created_at: string;
  revoked_at: string | null;
}

type Revoking = { kind: "token"; item: McpToken } | { kind: "grant"; item: Grant };

interface ActivityPage {
  data: Array<{ operation: string; created_at: string }>;
  total: number;
}

/** How many entries the actor has in the project's activity, and its newest. */
function WriteCount({ slug, kind, actorId, name }: { slug: string; kind: "mcp_token" | "oauth"; actorId: string; name: string }) {
  const q = useQuery({
    queryKey: ["agent-writes", slug, kind, actorId],
    queryFn: () => request<ActivityPage>(`${projectBase(slug)}/activity?${new URLSearchParams({ actor_kind: kind, actor_id: actorId, per_page: "1" })}`).then((r) => r.body),
    staleTime: 10_000,
  });
  if (q.isPending) return <span aria-busy="true">Counting…</span>;
  if (q.isError) return <span className="error-text">{messageOf(q.error)}</span>;
  const last = q.data.data[0];
  return (
    <span data-testid={`writes-${name}`}>
      {q.data.total === 1 ? "1 write" : `${q.data.total} writes`}
      {last && (
        <span className="ed-last-write muted">
          {" "}
          (last: {last.operation}, <time dateTime={last.created_at}>{formatTime(last.created_at)}</time>)
        </span>
      )}
    </span>
  );
}

export function AgentsTab({ slug, projectId, canRevokeTokens, canSeeGrants }: { slug: string; projectId: string; canRevokeTokens: boolean; canSeeGrants: boolean }) {
  const qc = useQueryClient();
  const tokensKey = ["mcp-tokens", slug] as const;
  const grantsKey = ["oauth-grants", projectId] as const;
  const tokensBase = `${projectBase(slug)}/ai/mcp/tokens`;
  const tokens = useQuery({ queryKey: tokensKey, queryFn: () => request<{ data: McpToken[] }>(tokensBase).then((r) => r.body.data) });
  const grants = useQuery({
    queryKey: grantsKey,
    queryFn: () => request<{ data: Grant[] }>(`/admin/oauth/grants?${new URLSearchParams({ project: projectId, active: "true" })}`).then((r) => r.body.data),
    enabled: canSeeGrants,
  });
  const [done, setDone] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (r: Revoking) => (r.kind === "token" ? request(`${tokensBase}/${enc(r.item.id)}`, { method: "DELETE" }) : request(`/admin/oauth/grants/${enc(r.item.id)}`, { method: "DELETE" })),
    onSuccess: (_, r) => {
      setDone(r.kind === "token" ? `${r.item.name} revoked.` : `The consent of ${grantName(r.item)} revoked.`);
      void qc.invalidateQueries({ queryKey: r.kind === "token" ? tokensKey : grantsKey });
    },
  });

  const confirmRevoke = useConfirm<Revoking>(
    (r) => revoke.mutate(r),
    (r) =>
      r.kind === "grant"
        ? {
            title: "Revoke the consent?",
            body: `${grantName(r.item)} loses access to this project at once: every access and refresh token of the consent stops working.`,
            confirmLabel: "Revoke",
          }
        : { title: "Revoke the token?", body: `${r.item.name} stops working at once: agents that use it lose access to this project. What it wrote stays.`, confirmLabel: "Revoke" },
  );

  return (
    <section aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agents</h2>
      <p className="muted">The AI agents that reach this project, and what each wrote: its entries in the project’s activity log and its latest write.</p>
      {revoke.isError && <ErrorText message={messageOf(revoke.error)} />}
      <StatusText message={done} />

      <h3 id="agents-tokens-heading">MCP tokens</h3>
      <DataTable
        query={tokens}
        rowKey={(t) => t.id}
        labelledBy="agents-tokens-heading"
        loadingText="Loading the tokens…"
        empty={<p className="notice">No MCP token.</p>}
        columns={[
          { header: "Name", rowHeader: true, cell: (t) => t.name },
          { header: "Scopes", cell: (t) => <ScopeList scopes={t.scopes} /> },
          { header: "Last used", cell: (t) => (t.last_used_at ? formatTime(t.last_used_at) : "Never") },
          { header: "What it wrote", cell: (t) => <WriteCount slug={slug} kind="mcp_token" actorId={t.id} name={t.name} /> },
        ]}
        actions={
          canRevokeTokens
            ? (t) => (
                <Button className="st-button danger small" aria-label={`Revoke ${t.name}`} isDisabled={revoke.isPending} onPress={() => confirmRevoke.ask({ kind: "token", item: t })}>
                  Revoke
                </Button>
              )
            : undefined
        }
      />

      <div className="ed-agents-section">
        <h3 id="agents-grants-heading">OAuth consents</h3>
        {!canSeeGrants && <p className="notice">Seeing and revoking the OAuth consents given to agents for this project needs the keys:write right (a project admin’s).</p>}
        {canSeeGrants && (
          <DataTable
            query={grants}
            rowKey={(g) => g.id}
            labelledBy="agents-grants-heading"
            loadingText="Loading the consents…"
            empty={<p className="notice">No agent holds an OAuth consent for this project.</p>}
            columns={[
              { header: "Client", rowHeader: true, cell: (g) => g.client_name ?? g.client_id },
              { header: "For", cell: (g) => g.user_email ?? "someone no longer a member" },
              { header: "Scopes", cell: (g) => <ScopeList scopes={g.scopes} /> },
              { header: "Given", cell: (g) => formatTime(g.created_at) },
              { header: "What the client wrote", cell: (g) => <WriteCount slug={slug} kind="oauth" actorId={g.client_id} name={g.client_name ?? g.client_id} /> },
            ]}
            actions={(g) => (
              <Button className="st-button danger small" aria-label={`Revoke ${grantName(g)}`} isDisabled={revoke.isPending} onPress={() => confirmRevoke.ask({ kind: "grant", item: g })}>
                Revoke
              </Button>
            )}
          />
        )}
      </div>

      {confirmRevoke.dialog}
    </section>
  );
}

const grantName = (g: Grant) => `${g.client_name ?? g.client_id}${g.user_email ? ` (for ${g.user_email})` : ""}`;
