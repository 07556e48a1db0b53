// One endpoint's deliveries log, newest first: every attempt with its event type, outcome, HTTP
// status, attempt number, time and error; `Redeliver` sends an attempt's event again (one attempt,
// the same webhook-id). Refreshed every few seconds while shown: attempts are made in the
// background by the dispatcher.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "react-aria-components";
import { enc, messageOf, request } from "../app/api";
import { DataTable } from "../app/DataTable";
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
      <DataTable
        query={{ data: log.data?.data, isPending: log.isPending, error: log.error }}
        rowKey={(d) => d.id}
        caption={`Deliveries to ${label}`}
        className="table wh-table"
        wrapClassName="wh-scroll"
        rowTestId="delivery-row"
        loadingText="Loading the deliveries…"
        empty={<p className="muted">No delivery yet.</p>}
        columns={[
          { header: "When", cell: (d) => formatTime(d.attempted_at) },
          {
            header: "Event",
            rowHeader: true,
            cell: (d) => (
              <>
                <span className="path">{d.event_type}</span>
                <div className="muted wh-small path">{d.event_id}</div>
              </>
            ),
          },
          { header: "Status", cell: (d) => <span className={`st-badge wh-outcome-${d.outcome}`}>{OUTCOME_WORDS[d.outcome]}</span> },
          { header: "HTTP", cell: (d) => d.status_code ?? "none" },
          { header: "Attempt", cell: (d) => d.attempt },
          {
            header: "Details",
            className: "wh-small",
            cell: (d) => (
              <>
                {d.duration_ms} ms
                {d.error && <div className="wh-error">{d.error}</div>}
                {d.next_attempt_at && <div>Next attempt {formatTime(d.next_attempt_at)}</div>}
              </>
            ),
          },
        ]}
        actions={
          canWrite
            ? (d) => (
                <Button className="st-button small" aria-label={`Redeliver ${d.event_type} of ${formatTime(d.attempted_at)}`} isDisabled={busy !== null} onPress={() => void redeliver(d)}>
                  Redeliver
                </Button>
              )
            : undefined
        }
      />
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
