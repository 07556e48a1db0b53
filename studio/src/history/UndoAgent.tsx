// `Undo these changes`: from the activity of one MCP token, every page it changed in the time range
// goes back to its state before its first change there (POST /admin/p/{ref}/agents/undo). The dialog
// first shows what would happen (a dry run), then undoes on request; pages someone else changed
// after the agent are listed and left as they are.
import { useState } from "react";
import { Button, Dialog, Heading, Modal, ModalOverlay } from "react-aria-components";
import type { z } from "zod";
import type { UndoAgentOut } from "../../../src/history/model";
import { messageOf, projectBase, request } from "../app/api";

type Outcome = z.output<typeof UndoAgentOut>;

export function UndoAgent({ slug, tokenId, agentName, since, until, onDone }: { slug: string; tokenId: string; agentName: string; since: string; until: string; onDone: () => void }) {
  const [open, setOpen] = useState(false);
  const [preview, setPreview] = useState<Outcome | null>(null);
  const [done, setDone] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const body = { agent: { kind: "mcp_token", id: tokenId }, since: since || "1970-01-01T00:00:00Z", ...(until ? { until } : {}) };
  const run = async (dryRun: boolean): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const res = await request<{ data: Outcome }>(`${projectBase(slug)}/agents/undo${dryRun ? "?dry_run=true" : ""}`, { method: "POST", body });
      if (dryRun) setPreview(res.body.data);
      else {
        setDone(res.body.data);
        onDone();
      }
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const close = (): void => {
    setOpen(false);
    setPreview(null);
    setDone(null);
    setError(null);
  };
  const shown = done ?? preview;
  return (
    <>
      <Button
        className="st-button"
        onPress={() => {
          setOpen(true);
          void run(true);
        }}
      >
        Undo these changes
      </Button>
      <ModalOverlay isOpen={open} onOpenChange={(o) => !o && close()} isDismissable className="modal-overlay">
        <Modal className="modal">
          <Dialog className="dialog" aria-label={`Undo ${agentName}'s changes`}>
            <Heading slot="title">Undo {agentName}’s changes</Heading>
            <p>
              Every page this agent changed {since ? `since ${new Date(since).toLocaleString()}` : "so far"}
              {until ? ` and before ${new Date(until).toLocaleString()}` : ""} goes back to how it was before its first change. Pages someone else changed afterwards are left as they are.
            </p>
            {busy && <p role="status">Working…</p>}
            {error && (
              <p role="alert" className="alert error">
                {error}
              </p>
            )}
            {shown && <OutcomeLists outcome={shown} done={done !== null} />}
            <div className="dialog-actions">
              {!done && (
                <Button className="st-button primary" onPress={() => void run(false)} isDisabled={busy || !preview || (preview.restored.length === 0 && preview.deleted.length === 0)}>
                  Undo
                </Button>
              )}
              <Button className="st-button" onPress={close}>
                {done ? "Close" : "Cancel"}
              </Button>
            </div>
          </Dialog>
        </Modal>
      </ModalOverlay>
    </>
  );
}

function OutcomeLists({ outcome, done }: { outcome: Outcome; done: boolean }) {
  const title = (t: string | null, id: string) => t ?? id;
  return (
    <div role="status">
      <h3>{done ? "Brought back" : "Would be brought back"}</h3>
      {outcome.restored.length === 0 ? (
        <p className="muted">No page.</p>
      ) : (
        <ul>
          {outcome.restored.map((r) => (
            <li key={r.node_id}>
              {title(r.title, r.node_id)} (to revision {r.to_revision})
            </li>
          ))}
        </ul>
      )}
      {outcome.deleted.length > 0 && (
        <>
          <h3>{done ? "Moved to the trash (created by the agent)" : "Would go to the trash (created by the agent)"}</h3>
          <ul>
            {outcome.deleted.map((d) => (
              <li key={d.node_id}>{d.title}</li>
            ))}
          </ul>
        </>
      )}
      {outcome.left.length > 0 && (
        <>
          <h3>Left as they are (changed by someone else since)</h3>
          <ul>
            {outcome.left.map((l) => (
              <li key={l.node_id}>
                {title(l.title, l.node_id)}: revision {l.revision} by {l.by.user?.email ?? l.by.name ?? l.by.kind}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
