// One webhook endpoint: its URL, events, status and pending count; for webhooks:write `Pause` /
// `Resume`, `Send test event`, `Rotate secret` (the new secret shown once) and `Delete` (after a
// confirmation); for every reader its deliveries log, shown on demand.
import { useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Button, Dialog, Modal, ModalOverlay } from "react-aria-components";
import { data, enc, messageOf, request } from "../app/api";
import { ConfirmDialog } from "../app/EditorParts";
import { formatTime } from "../app/time";
import { DeliveriesLog, deliveriesKey } from "./DeliveriesLog";
import { SecretOnce } from "./SecretOnce";
import type { Endpoint, EndpointCreated, Queued } from "./types";

const STATUS_WORDS: Record<Endpoint["status"], string> = { active: "Active", paused: "Paused", disabled: "Disabled" };

export function EndpointCard({ slug, base, endpoint, canWrite, listKey }: { slug: string; base: string; endpoint: Endpoint; canWrite: boolean; listKey: readonly unknown[] }) {
  const qc = useQueryClient();
  const headingId = useId();
  const logId = useId();
  const [showLog, setShowLog] = useState(false);
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<"delete" | "rotate" | null>(null);
  // A rotated secret: this component's state only, dropped when its dialog closes.
  const [rotated, setRotated] = useState<string | null>(null);
  const url = `${base}/${enc(endpoint.id)}`;

  const act = async (what: () => Promise<string | null>) => {
    setBusy(true);
    setFailure(null);
    setStatus(null);
    try {
      setStatus(await what());
    } catch (err) {
      setFailure(messageOf(err));
    } finally {
      setBusy(false);
      void qc.invalidateQueries({ queryKey: listKey });
    }
  };
  const setEndpointStatus = (next: "active" | "paused") =>
    act(async () => {
      await data<Endpoint>(url, { method: "PATCH", body: { status: next } });
      return next === "paused" ? "Paused: events are kept and sent on resume." : "Resumed: events are sent again.";
    });
  const sendTest = () =>
    act(async () => {
      const q = (await request<{ data: Queued }>(`${url}/test`, { method: "POST" })).body.data;
      setShowLog(true);
      void qc.invalidateQueries({ queryKey: deliveriesKey(slug, endpoint.id) });
      return `Test event queued (${q.event_id}); its outcome appears in the deliveries log.`;
    });
  const rotate = () =>
    act(async () => {
      // A plain call: the answer holds the new secret, which must not stay in a cache.
      const r = await data<EndpointCreated>(url, { method: "PATCH", body: { rotate_secret: true } });
      setRotated(r.secret);
      return "Secret rotated.";
    });
  const remove = () =>
    act(async () => {
      await request(url, { method: "DELETE" });
      return null;
    });

  const label = endpoint.url;
  return (
    <section className="wh-endpoint" aria-labelledby={headingId}>
      <div className="wh-endpoint-head">
        <h2 id={headingId} className="wh-url">
          {endpoint.url}
        </h2>
        <span className={`st-badge wh-status-${endpoint.status}`}>{STATUS_WORDS[endpoint.status]}</span>
      </div>
      {endpoint.description && <p className="wh-description">{endpoint.description}</p>}
      <dl className="wh-facts">
        <dt>Events</dt>
        <dd>
          <ul className="wh-event-list">
            {endpoint.events.map((e) => (
              <li key={e} className="path">
                {e === "*" ? "every event (*)" : e}
              </li>
            ))}
          </ul>
        </dd>
        <dt>Pending</dt>
        <dd>
          {endpoint.pending} {endpoint.pending === 1 ? "event" : "events"} waiting
        </dd>
        {endpoint.failing_since && (
          <>
            <dt>Failing since</dt>
            <dd>{formatTime(endpoint.failing_since)}</dd>
          </>
        )}
        {endpoint.status === "disabled" && (
          <>
            <dt>Disabled</dt>
            <dd>
              {endpoint.disabled_at ? `${formatTime(endpoint.disabled_at)}: ` : ""}
              {endpoint.disabled_reason ?? "every attempt failed"}. Resume it to send its events again.
            </dd>
          </>
        )}
        {endpoint.previous_secret_expires_at && (
          <>
            <dt>Previous secret</dt>
            <dd>also signs until {formatTime(endpoint.previous_secret_expires_at)}</dd>
          </>
        )}
      </dl>
      {endpoint.url_masked && <p className="muted wh-small">Only the URL's origin is shown: its path may carry the receiver's credential.</p>}
      <div className="wh-actions">
        <Button className="st-button small" aria-expanded={showLog} aria-controls={showLog ? logId : undefined} onPress={() => setShowLog((v) => !v)}>
          {showLog ? "Hide deliveries" : "Show deliveries"}
        </Button>
        {canWrite && (
          <>
            {endpoint.status === "active" ? (
              <Button className="st-button small" isDisabled={busy} onPress={() => void setEndpointStatus("paused")}>
                Pause
              </Button>
            ) : (
              <Button className="st-button small" isDisabled={busy} onPress={() => void setEndpointStatus("active")}>
                Resume
              </Button>
            )}
            <Button className="st-button small" isDisabled={busy || endpoint.status === "disabled"} onPress={() => void sendTest()}>
              Send test event
            </Button>
            <Button className="st-button small" isDisabled={busy} onPress={() => setConfirm("rotate")}>
              Rotate secret
            </Button>
            <Button className="st-button small danger" isDisabled={busy} onPress={() => setConfirm("delete")}>
              Delete
            </Button>
          </>
        )}
      </div>
      <p role="status" className="wh-status">
        {status ?? ""}
      </p>
      {failure && (
        <p role="alert" className="alert error">
          {failure}
        </p>
      )}
      {showLog && (
        <div id={logId}>
          <h3 className="wh-log-heading">Deliveries</h3>
          <DeliveriesLog slug={slug} base={base} endpointId={endpoint.id} label={label} canWrite={canWrite} />
        </div>
      )}
      <ConfirmDialog
        isOpen={confirm === "delete"}
        title="Delete the endpoint?"
        body={`${endpoint.url} stops receiving events at once; its pending events and its deliveries log are deleted with it.`}
        confirmLabel="Delete endpoint"
        onConfirm={() => {
          setConfirm(null);
          void remove();
        }}
        onCancel={() => setConfirm(null)}
      />
      <ConfirmDialog
        isOpen={confirm === "rotate"}
        title="Rotate the signing secret?"
        body="A new secret is made and shown once. The current one keeps signing beside it for a grace period (a day by default), so the receiver can switch without losing events."
        confirmLabel="Rotate secret"
        onConfirm={() => {
          setConfirm(null);
          void rotate();
        }}
        onCancel={() => setConfirm(null)}
      />
      {rotated !== null && (
        <ModalOverlay className="modal-overlay" isOpen isKeyboardDismissDisabled>
          <Modal className="modal wh-modal">
            <Dialog className="dialog">
              <SecretOnce
                title="New signing secret"
                secret={rotated}
                note="The previous secret also signs until its grace period ends; then only this one does."
                onDone={() => {
                  setRotated(null);
                  setStatus("Secret rotated.");
                }}
              />
            </Dialog>
          </Modal>
        </ModalOverlay>
      )}
    </section>
  );
}
