// The agents that reach this project and what they wrote: its MCP tokens (GET /admin/p/{ref}/ai/mcp/
// tokens, ai:read) and its OAuth consents (GET /admin/oauth/grants?project=, keys:write: shown only
// to a person who holds it), each with the number of its entries in the activity log and its last
// write (GET /admin/p/{ref}/activity?actor_kind=…&actor_id=…&per_page=1 → total and the newest).
// `Revoke` after a confirmation: delete_mcp_token (ai:write), revoke_oauth_grant (keys:write).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "react-aria-components";
import { enc, messageOf, projectBase, request } from "../app/api";
import { ConfirmDialog } from "../app/EditorParts";
import { formatTime } from "../app/time";
import "../editorial/editorial.css";
import { ErrorText, StatusText } from "./Alert";
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
  const [revoking, setRevoking] = useState<{ kind: "token"; item: McpToken } | { kind: "grant"; item: Grant } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (r: NonNullable<typeof revoking>) =>
      r.kind === "token" ? request(`${tokensBase}/${enc(r.item.id)}`, { method: "DELETE" }) : request(`/admin/oauth/grants/${enc(r.item.id)}`, { method: "DELETE" }),
    onSuccess: (_, r) => {
      setDone(r.kind === "token" ? `${r.item.name} revoked.` : `The consent of ${grantName(r.item)} revoked.`);
      void qc.invalidateQueries({ queryKey: r.kind === "token" ? tokensKey : grantsKey });
    },
  });

  return (
    <section aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agents</h2>
      <p className="muted">The AI agents that reach this project, and what each wrote: its entries in the project’s activity log and its latest write.</p>
      {revoke.isError && <ErrorText message={messageOf(revoke.error)} />}
      <StatusText message={done} />

      <h3 id="agents-tokens-heading">MCP tokens</h3>
      {tokens.isPending && <p aria-busy="true">Loading the tokens…</p>}
      {tokens.isError && <ErrorText message={messageOf(tokens.error)} />}
      {tokens.data && tokens.data.length === 0 && <p className="notice">No MCP token.</p>}
      {tokens.data && tokens.data.length > 0 && (
        <table className="table" aria-labelledby="agents-tokens-heading">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Last used</th>
              <th scope="col">What it wrote</th>
              {canRevokeTokens && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((t) => (
              <tr key={t.id}>
                <th scope="row">{t.name}</th>
                <td>
                  <ul className="scope-list">
                    {t.scopes.map((s) => (
                      <li key={s}>{s}</li>
                    ))}
                  </ul>
                </td>
                <td>{t.last_used_at ? formatTime(t.last_used_at) : "Never"}</td>
                <td>
                  <WriteCount slug={slug} kind="mcp_token" actorId={t.id} name={t.name} />
                </td>
                {canRevokeTokens && (
                  <td>
                    <Button className="st-button danger small" aria-label={`Revoke ${t.name}`} isDisabled={revoke.isPending} onPress={() => setRevoking({ kind: "token", item: t })}>
                      Revoke
                    </Button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <div className="ed-agents-section">
        <h3 id="agents-grants-heading">OAuth consents</h3>
        {!canSeeGrants && <p className="notice">Seeing and revoking the OAuth consents given to agents for this project needs the keys:write right (a project admin’s).</p>}
        {canSeeGrants && grants.isPending && <p aria-busy="true">Loading the consents…</p>}
        {canSeeGrants && grants.isError && <ErrorText message={messageOf(grants.error)} />}
        {grants.data && grants.data.length === 0 && <p className="notice">No agent holds an OAuth consent for this project.</p>}
        {grants.data && grants.data.length > 0 && (
          <table className="table" aria-labelledby="agents-grants-heading">
            <thead>
              <tr>
                <th scope="col">Client</th>
                <th scope="col">For</th>
                <th scope="col">Scopes</th>
                <th scope="col">Given</th>
                <th scope="col">What the client wrote</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {grants.data.map((g) => (
                <tr key={g.id}>
                  <th scope="row">{g.client_name ?? g.client_id}</th>
                  <td>{g.user_email ?? "someone no longer a member"}</td>
                  <td>
                    <ul className="scope-list">
                      {g.scopes.map((s) => (
                        <li key={s}>{s}</li>
                      ))}
                    </ul>
                  </td>
                  <td>{formatTime(g.created_at)}</td>
                  <td>
                    <WriteCount slug={slug} kind="oauth" actorId={g.client_id} name={g.client_name ?? g.client_id} />
                  </td>
                  <td>
                    <Button className="st-button danger small" aria-label={`Revoke ${grantName(g)}`} isDisabled={revoke.isPending} onPress={() => setRevoking({ kind: "grant", item: g })}>
                      Revoke
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>

      <ConfirmDialog
        isOpen={revoking !== null}
        title={revoking?.kind === "grant" ? "Revoke the consent?" : "Revoke the token?"}
        body={
          revoking?.kind === "grant"
            ? `${grantName(revoking.item)} loses access to this project at once: every access and refresh token of the consent stops working.`
            : revoking
              ? `${revoking.item.name} stops working at once: agents that use it lose access to this project. What it wrote stays.`
              : ""
        }
        confirmLabel="Revoke"
        onConfirm={() => {
          if (revoking) revoke.mutate(revoking);
          setRevoking(null);
        }}
        onCancel={() => setRevoking(null)}
      />
    </section>
  );
}

const grantName = (g: Grant) => `${g.client_name ?? g.client_id}${g.user_email ? ` (for ${g.user_email})` : ""}`;
