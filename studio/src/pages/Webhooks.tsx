// The project's webhooks screen (/studio/p/{slug}/webhooks): its endpoints with their status and
// events waiting, each with its deliveries log; `Add endpoint` and the changes of an endpoint for
// people holding webhooks:write (GET /studio/api/p/{ref}/me). The server refuses the rest anyway.
import { useQuery } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Button } from "react-aria-components";
import { data, messageOf, projectBase } from "../app/api";
import { useMe } from "../app/queries";
import { AddEndpointDialog } from "../webhooks/AddEndpointDialog";
import { EndpointCard } from "../webhooks/EndpointCard";
import type { Endpoint } from "../webhooks/types";
import "../webhooks/webhooks.css";

export function WebhooksPage() {
  const { slug } = useParams({ from: "/p/$slug" });
  const me = useMe(slug);
  const base = `${projectBase(slug)}/webhooks`;
  const listKey = ["webhooks", slug] as const;
  // Refreshed every few seconds: the pending counts and statuses move as the dispatcher sends.
  const endpoints = useQuery({ queryKey: listKey, queryFn: () => data<Endpoint[]>(base), refetchInterval: 5000 });
  const [adding, setAdding] = useState(false);
  const canWrite = !!me.data?.scopes.includes("webhooks:write");
  const failed = me.error ?? endpoints.error;
  return (
    <main className="editor-pane wh-page" id="main">
      <div className="wh-head">
        <h1>Webhooks</h1>
        {canWrite && (
          <Button className="st-button primary" onPress={() => setAdding(true)}>
            Add endpoint
          </Button>
        )}
      </div>
      <p className="muted">Endpoints receive the project's events (a publish, a deletion…) as signed HTTP POST requests: to rebuild a static site, purge a CDN, notify a search index.</p>
      {failed && (
        <p role="alert" className="alert error">
          {messageOf(failed)}
        </p>
      )}
      {endpoints.isPending && !failed && <p aria-busy="true">Loading the endpoints…</p>}
      {endpoints.data && endpoints.data.length === 0 && <p className="notice">No endpoint yet.</p>}
      {endpoints.data?.map((e) => (
        <EndpointCard key={e.id} slug={slug} base={base} endpoint={e} canWrite={canWrite} listKey={listKey} />
      ))}
      {adding && <AddEndpointDialog base={base} onCreated={() => void endpoints.refetch()} onClose={() => setAdding(false)} />}
    </main>
  );
}
