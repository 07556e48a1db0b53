// One endpoint's deliveries log, newest first: every attempt with its event type, outcome, HTTP
// status, attempt number, time and error; `Redeliver` sends an attempt's event again (one attempt,
// the same webhook-id). Refreshed every few seconds while shown: attempts are made in the
// background by the dispatcher.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "react-aria-components";
import { enc, messageOf, request } from "../app/api";
import { formatTime } from "../app/time";
import type { Delivery, DeliveryPage, Queued } from "./types";

const PER_PAGE = 20;

const OUTCOME_WORDS: Record<Delivery["outcome"], string> = { succeeded: "Succeeded", retrying: "Retrying", failed: "Failed" };

export const deliveriesKey = (slug: string, id: string) => ["webhook-deliveries", slug, id] as const;

export function DeliveriesLog({ slug, base, endpointId, label, canWrite }: { slug: string; base: string; endpointId: string; label: string; canWrite: boolean }) {
  const qc = useQueryClient();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const url = `${base}/${enc(endpointId)}/deliveries`;
  const log = useQuery({
    queryKey: [...deliveriesKey(slug, endpointId), page],
    queryFn: async () => (await request<DeliveryPage>(`${url}?page=${page}&per_page=${PER_PAGE}`)).body,
    refetchInterval: 2000,
  });
  const redeliver = async (d: Delivery) => {
    setBusy(d.id);
    setFailure(null);
    setStatus(null);
    try {
      const r = await request<{ data: Queued }>(`${url}/${enc(d.id)}/redeliver`, { method: "POST" });
      setStatus(`Redelivery of ${r.body.data.event_type} queued.`);
      void qc.invalidateQueries({ queryKey: deliveriesKey(slug, endpointId) });
    } catch (err) {
      setFailure(messageOf(err));
    } finally {
      setBusy(null);
    }
  };
  const rows = log.data?.data ?? [];
  const pages = log.data ? Math.max(1, Math.ceil(log.data.total / log.data.per_page)) : 1;
  return (
    <div className="wh-log">
      <p role="status" className="wh-status">
        {status ?? ""}
      </p>
      {failure && (
        <p role="alert" className="alert error">
          {failure}
        </p>
      )}
      {log.isPending && <p aria-busy="true">Loading the deliveries…</p>}
      {log.isError && (
        <p role="alert" className="alert error">
          {messageOf(log.error)}
        </p>
      )}
      {log.data && rows.length === 0 && <p className="muted">No delivery yet.</p>}
      {rows.length > 0 && (
        <div className="wh-scroll">
          <table className="table wh-table">
            <caption className="visually-hidden">Deliveries to {label}</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">HTTP</th>
                <th scope="col">Attempt</th>
                <th scope="col">Details</th>
                {canWrite && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} data-testid="delivery-row">
                  <td>{formatTime(d.attempted_at)}</td>
                  <th scope="row">
                    <span className="path">{d.event_type}</span>
                    <div className="muted wh-small path">{d.event_id}</div>
                  </th>
                  <td>
                    <span className={`st-badge wh-outcome-${d.outcome}`}>{OUTCOME_WORDS[d.outcome]}</span>
                  </td>
                  <td>{d.status_code ?? "none"}</td>
                  <td>{d.attempt}</td>
                  <td className="wh-small">
                    {d.duration_ms} ms
                    {d.error && <div className="wh-error">{d.error}</div>}
                    {d.next_attempt_at && <div>Next attempt {formatTime(d.next_attempt_at)}</div>}
                  </td>
                  {canWrite && (
                    <td>
                      <Button className="st-button small" aria-label={`Redeliver ${d.event_type} of ${formatTime(d.attempted_at)}`} isDisabled={busy !== null} onPress={() => void redeliver(d)}>
                        Redeliver
                      </Button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages > 1 && (
        <nav className="wh-pager" aria-label={`Pages of the deliveries to ${label}`}>
          <Button className="st-button small" isDisabled={page <= 1} onPress={() => setPage((p) => p - 1)}>
            Newer
          </Button>
          <span>
            Page {page} of {pages}
          </span>
          <Button className="st-button small" isDisabled={page >= pages} onPress={() => setPage((p) => p + 1)}>
            Older
          </Button>
        </nav>
      )}
    </div>
  );
}
