// The editor's panels and dialogs: a write conflict, the comparison with the published version,
// leaving with unsaved edits, discarding unpublished changes.
import { useQuery } from "@tanstack/react-query";
import { Button, Dialog, Heading, Modal, ModalOverlay } from "react-aria-components";
import { ApiError, data, messageOf, nodeUrl } from "./api";
import { actorName, type ChangeKind, type DiffRow, diffVersions, operationWords, valueText } from "./docs";
import type { EditorDoc } from "./formApi";
import { formatTime } from "./time";
import type { Actor, PublishedVersion } from "./types";

export interface ConflictInfo {
  message: string;
  currentRevision: number;
  changes: Array<{ revision: number; operation: string; actor: Actor | null; created_at: string }>;
  changedFields: string[] | null;
}

export function ConflictPanel({ conflict, onLoadTheirs, onSaveMine, busy }: { conflict: ConflictInfo; onLoadTheirs: () => void; onSaveMine: () => void; busy: boolean }) {
  return (
    <section className="panel conflict" aria-label="Conflict">
      <h2>Edit conflict</h2>
      <p>
        This page was changed by someone else after you opened it (revision {conflict.currentRevision}), so your save was refused to avoid a silent overwrite. Resolve the conflict: load their version
        (your edits are dropped) or save yours over it.
      </p>
      {conflict.changes.length > 0 && (
        <ul className="change-list">
          {conflict.changes.map((c) => (
            <li key={c.revision}>
              Revision {c.revision}: {actorName(c.actor)} {operationWords(c.operation)} <span className="muted">({formatTime(c.created_at)})</span>
            </li>
          ))}
        </ul>
      )}
      {conflict.changedFields && conflict.changedFields.length > 0 && <p>Changed since: {conflict.changedFields.join(", ")}.</p>}
      <div className="panel-actions">
        <Button className="st-button" onPress={onLoadTheirs} isDisabled={busy}>
          Load theirs
        </Button>
        <Button className="st-button danger" onPress={onSaveMine} isDisabled={busy}>
          Save mine over theirs
        </Button>
      </div>
    </section>
  );
}

/** The published version (what delivery serves), or null when the page has none (404). */
async function readPublished(ref: string, nodeId: string): Promise<PublishedVersion | null> {
  try {
    return await data<PublishedVersion>(`${nodeUrl(ref, nodeId)}/published`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

const CHANGE_WORDS: Record<ChangeKind, string> = { changed: "Changed", added: "Added", removed: "Removed", moved: "Moved" };

/** A diff of two versions by JSON Pointer, as text only (values from the database are never HTML here). */
export function VersionDiffTable(props: { rows: DiffRow[]; caption: string; before: string; after: string; words?: Partial<Record<ChangeKind, string>>; className?: string }) {
  const words = { ...CHANGE_WORDS, ...props.words };
  return (
    <div className="diff-scroll">
      <table className={`table diff${props.className ? ` ${props.className}` : ""}`}>
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Change</th>
            <th scope="col">{props.before}</th>
            <th scope="col">{props.after}</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={`${r.change}:${r.path}`} className={`diff-${r.change}`}>
              <th scope="row">
                <code>{r.path}</code>
              </th>
              <td>{words[r.change]}</td>
              <td>
                <pre className="diff-before">{valueText(r.before)}</pre>
              </td>
              <td>
                <pre className="diff-after">{valueText(r.after)}</pre>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The working copy as the form holds it when the dialog opens (unsaved edits included), against
 * the published version, field by field. Everything is shown as text.
 */
export function CompareDialog({ slug, nodeId, working, onClose }: { slug: string; nodeId: string; working: EditorDoc; onClose: () => void }) {
  const published = useQuery({ queryKey: ["published", slug, nodeId], queryFn: () => readPublished(slug, nodeId), staleTime: 0 });
  const rows: DiffRow[] = published.data ? diffVersions(published.data, working) : [];
  return (
    <ModalOverlay className="modal-overlay" isDismissable isOpen onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal wide">
        <Dialog className="dialog">
          <Heading slot="title">Compare with published</Heading>
          {published.isPending && <p aria-busy="true">Loading the published version…</p>}
          {published.isError && (
            <p role="alert" className="alert error">
              {messageOf(published.error)}
            </p>
          )}
          {published.data === null && <p className="notice">Not published yet: this page has no published version to compare with.</p>}
          {published.data && (
            <>
              <p className="muted">
                {published.data.published_at ? `Published ${formatTime(published.data.published_at)}` : "The published version"}, compared with this editor’s current content (unsaved changes
                included).
              </p>
              {rows.length === 0 ? (
                <p>No differences: the working copy is the published version.</p>
              ) : (
                <VersionDiffTable rows={rows} caption="Differences from the published version" before="Published" after="Working copy" />
              )}
            </>
          )}
          <div className="dialog-actions">
            <Button className="st-button" slot="close">
              Close
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

export function LeaveDialog({ isOpen, onLeave, onStay }: { isOpen: boolean; onLeave: () => void; onStay: () => void }) {
  return (
    <ModalOverlay className="modal-overlay" isOpen={isOpen} onOpenChange={(open) => !open && onStay()} isDismissable>
      <Modal className="modal">
        <Dialog className="dialog" role="alertdialog">
          <Heading slot="title">Leave without saving?</Heading>
          <p>This page has unsaved changes. They stay in this browser and are offered again when you reopen the page, but nobody else sees them until you save.</p>
          <div className="dialog-actions">
            <Button className="st-button primary" onPress={onStay} autoFocus>
              Stay
            </Button>
            <Button className="st-button danger" onPress={onLeave}>
              Leave without saving
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

export function ConfirmDialog({
  isOpen,
  title,
  body,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  isOpen: boolean;
  title: string;
  body: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <ModalOverlay className="modal-overlay" isOpen={isOpen} onOpenChange={(open) => !open && onCancel()} isDismissable>
      <Modal className="modal">
        <Dialog className="dialog" role="alertdialog">
          <Heading slot="title">{title}</Heading>
          <p>{body}</p>
          <div className="dialog-actions">
            <Button className="st-button" onPress={onCancel} autoFocus>
              Cancel
            </Button>
            <Button className="st-button danger" onPress={onConfirm}>
              {confirmLabel}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
