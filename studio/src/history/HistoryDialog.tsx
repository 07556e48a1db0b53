// A node's history: its revisions (number, when, operation, who: people and agents told apart),
// the field diff of a chosen revision against the one before (word by word, as text), and
// restoring it with the node's current revision (If-Match), a conflict shown as the editor does.
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Dialog, Heading, Modal, ModalOverlay } from "react-aria-components";
import type { z } from "zod";
import type { RevisionDetailOut } from "../../../src/history/model";
import { ApiError, data, messageOf, nodeUrl, request } from "../app/api";
import { operationWords } from "../app/docs";
import { type ConflictInfo, ConflictPanel } from "../app/EditorParts";
import { useAnnounce } from "../app/Shell";
import type { Revision } from "../app/types";
import { WhenText, WhoText } from "./actor";
import { DiffTable } from "./DiffTable";
import "./history.css";

type RevisionDetail = z.output<typeof RevisionDetailOut>;

interface RevisionPage {
  data: Revision[];
  total: number;
  page: number;
  per_page: number;
}

const PER_PAGE = 20;
const revisionsKey = (ref: string, id: string) => ["revisions", ref, id] as const;

export interface HistoryDialogProps {
  slug: string;
  nodeId: string;
  title: string;
  /** The node's revision as the editor holds it: restores are made against it (If-Match). */
  currentRevision: number;
  canRestore: boolean;
  /** Unsaved edits in the editor: a restore would drop them, so it waits. */
  dirty: boolean;
  /** Called after a restore: the editor reloads the node. */
  onRestored: () => void;
  onClose: () => void;
}

export function HistoryDialog({ slug, nodeId, title, currentRevision, canRestore, dirty, onRestored, onClose }: HistoryDialogProps) {
  const qc = useQueryClient();
  const announce = useAnnounce();
  const [chosen, setChosen] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [alert, setAlert] = useState<string | null>(null);
  const [conflict, setConflict] = useState<ConflictInfo | null>(null);

  const list = useInfiniteQuery({
    queryKey: revisionsKey(slug, nodeId),
    queryFn: ({ pageParam }) => request<RevisionPage>(`${nodeUrl(slug, nodeId)}/revisions?page=${pageParam}&per_page=${PER_PAGE}`).then((r) => r.body),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page * last.per_page < last.total ? last.page + 1 : undefined),
    staleTime: 0,
  });
  const revisions = list.data?.pages.flatMap((p) => p.data) ?? [];
  const total = list.data?.pages[0]?.total ?? 0;
  const newest = revisions[0]?.number ?? null;

  const detail = useQuery({
    queryKey: ["revision", slug, nodeId, chosen],
    queryFn: () => data<RevisionDetail>(`${nodeUrl(slug, nodeId)}/revisions/${chosen}`),
    enabled: chosen !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });

  const restore = async (rev: number, over: number) => {
    setBusy(true);
    setAlert(null);
    try {
      const res = await request<{ data: { revision: number } }>(`${nodeUrl(slug, nodeId)}/revisions/${rev}/restore`, { method: "POST", body: {}, ifMatch: over });
      setConflict(null);
      void qc.invalidateQueries({ queryKey: revisionsKey(slug, nodeId) });
      void qc.invalidateQueries({ queryKey: ["nodes", slug] });
      announce(`Revision ${rev} restored as revision ${res.body.data.revision}`);
      onRestored();
      onClose();
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict" && typeof err.details?.current_revision === "number") {
        const d = err.details as { current_revision: number; changes_since?: ConflictInfo["changes"]; changed_fields?: string[] | null };
        setConflict({ message: err.message, currentRevision: d.current_revision, changes: d.changes_since ?? [], changedFields: d.changed_fields ?? null });
      } else setAlert(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const shown = detail.data && detail.data.number === chosen ? detail.data : null;

  return (
    <ModalOverlay className="modal-overlay" isDismissable isOpen onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal wide">
        <Dialog className="dialog st-history">
          <Heading slot="title">History of “{title || "Untitled"}”</Heading>
          {list.isPending && <p aria-busy="true">Loading the revisions…</p>}
          {list.isError && (
            <p role="alert" className="alert error">
              {messageOf(list.error)}
            </p>
          )}
          {revisions.length > 0 && (
            <div className="st-history-list">
              <table className="table">
                <caption className="visually-hidden">Revisions, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Revision</th>
                    <th scope="col">When</th>
                    <th scope="col">Operation</th>
                    <th scope="col">Who</th>
                  </tr>
                </thead>
                <tbody>
                  {revisions.map((r) => (
                    <tr key={r.number} className={r.number === chosen ? "is-chosen" : undefined} aria-current={r.number === chosen ? "true" : undefined}>
                      <th scope="row">
                        <Button className="st-button small quiet st-link-button" onPress={() => setChosen(r.number)}>
                          Revision {r.number}
                        </Button>
                        {r.number === newest && <span className="st-badge badge-current">current</span>}
                      </th>
                      <td>
                        <WhenText iso={r.created_at} />
                      </td>
                      <td>
                        {operationWords(r.operation)} <code className="st-op">{r.operation}</code>
                        {r.deleted && <span className="st-badge badge-archived">deleted</span>}
                      </td>
                      <td>
                        <WhoText actor={r.actor} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p className="muted st-history-count">
                {revisions.length} of {total} revisions shown.
                {list.hasNextPage && (
                  <Button className="st-button small" onPress={() => void list.fetchNextPage()} isDisabled={list.isFetchingNextPage}>
                    {list.isFetchingNextPage ? "Loading…" : "Load older revisions"}
                  </Button>
                )}
              </p>
            </div>
          )}
          {chosen === null && revisions.length > 0 && <p className="muted">Choose a revision to see what it changed.</p>}
          {chosen !== null && (
            <section className="st-history-detail" id="st-history-detail" aria-labelledby="st-history-detail-heading">
              <h3 id="st-history-detail-heading">
                Revision {chosen}
                {shown && (shown.diff.against === null ? ": compared with nothing (the first revision kept)" : `: changes against revision ${shown.diff.against}`)}
              </h3>
              {detail.isPending && <p aria-busy="true">Loading the revision…</p>}
              {detail.isError && (
                <p role="alert" className="alert error">
                  {messageOf(detail.error)}
                </p>
              )}
              {shown && (
                <>
                  <p>
                    {operationWords(shown.operation)} by <WhoText actor={shown.actor} />, <WhenText iso={shown.created_at} />.
                  </p>
                  <DiffTable changes={shown.diff.changes} caption={`What revision ${chosen} changed`} />
                  {canRestore && (
                    <div className="st-history-restore">
                      <Button className="st-button primary" onPress={() => void restore(chosen, currentRevision)} isDisabled={busy || dirty || chosen === newest} aria-describedby="st-restore-hint">
                        {busy ? "Restoring…" : "Restore this revision"}
                      </Button>
                      <span id="st-restore-hint" className="help">
                        {chosen === newest
                          ? "This is the current revision."
                          : dirty
                            ? "Save or discard your unsaved edits first: restoring replaces the editor’s content."
                            : `Makes revision ${chosen} the page’s content again, as a new revision (nothing is lost).`}
                      </span>
                    </div>
                  )}
                </>
              )}
              {alert && (
                <p role="alert" className="alert error">
                  {alert}
                </p>
              )}
              {conflict && (
                <ConflictPanel
                  conflict={conflict}
                  busy={busy}
                  onLoadTheirs={() => {
                    setConflict(null);
                    onRestored();
                    void qc.invalidateQueries({ queryKey: revisionsKey(slug, nodeId) });
                  }}
                  onSaveMine={() => void restore(chosen, conflict.currentRevision)}
                />
              )}
            </section>
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
