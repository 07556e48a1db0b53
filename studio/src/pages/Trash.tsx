// The project's trash screen (/studio/p/{slug}/trash): the deleted nodes still restorable, who
// deleted them and when, and Restore (restore_revision on the revision the trash names), which
// brings the node back with its id, blocks, translations and the descendants its deletion took.
import { useInfiniteQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Button } from "react-aria-components";
import type { z } from "zod";
import type { TrashEntryOut } from "../../../src/history/model";
import { messageOf, nodeUrl, projectBase, request } from "../app/api";
import { canPublish, keys, useMe } from "../app/queries";
import { useAnnounce } from "../app/Shell";
import { WhenText, WhoText } from "../history/actor";
import "../history/history.css";

type TrashEntry = z.output<typeof TrashEntryOut>;

interface TrashPage {
  data: TrashEntry[];
  total: number;
  page: number;
  per_page: number;
}

const PER_PAGE = 20;
const trashKey = (ref: string) => ["trash", ref] as const;

export function TrashPage() {
  const { slug } = useParams({ from: "/p/$slug/trash" });
  const qc = useQueryClient();
  const announce = useAnnounce();
  const me = useMe(slug);
  const publishable = canPublish(me.data);
  const [busy, setBusy] = useState<string | null>(null);
  const [alert, setAlert] = useState<string | null>(null);
  const [restored, setRestored] = useState<{ id: string; title: string; count: number } | null>(null);

  const trash = useInfiniteQuery({
    queryKey: trashKey(slug),
    queryFn: ({ pageParam }) => request<TrashPage>(`${projectBase(slug)}/trash?page=${pageParam}&per_page=${PER_PAGE}`).then((r) => r.body),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page * last.per_page < last.total ? last.page + 1 : undefined),
    staleTime: 0,
  });
  const entries = trash.data?.pages.flatMap((p) => p.data) ?? [];
  const total = trash.data?.pages[0]?.total ?? 0;
  const titleOf = (id: string) => entries.find((e) => e.node_id === id)?.title;

  const restore = async (entry: TrashEntry) => {
    setBusy(entry.node_id);
    setAlert(null);
    setRestored(null);
    try {
      const res = await request<{ data: { node_id: string; revision: number; restored: string[] } }>(`${nodeUrl(slug, entry.node_id)}/revisions/${entry.revision}/restore`, {
        method: "POST",
        body: {},
      });
      const count = res.body.data.restored.length;
      setRestored({ id: entry.node_id, title: entry.title, count });
      announce(`Restored “${entry.title}”${count > 1 ? ` and ${count - 1} page${count > 2 ? "s" : ""} below it` : ""}`);
      void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
      await qc.invalidateQueries({ queryKey: trashKey(slug) });
    } catch (err) {
      setAlert(`“${entry.title}” could not be restored: ${messageOf(err)}`);
    } finally {
      setBusy(null);
    }
  };

  return (
    <main className="editor-pane st-history-page" id="main">
      <h1>Trash</h1>
      <p className="muted">Deleted pages stay here for a while and can be restored with their blocks, translations and the pages below them.</p>
      {alert && (
        <p role="alert" className="alert error">
          {alert}
        </p>
      )}
      {restored && (
        <p role="status" className="notice">
          Restored “{restored.title}”{restored.count > 1 ? ` and ${restored.count - 1} page${restored.count > 2 ? "s" : ""} below it` : ""}.{" "}
          <Link to="/p/$slug/nodes/$id" params={{ slug, id: restored.id }}>
            Open “{restored.title}”
          </Link>
        </p>
      )}
      {trash.isPending && <p aria-busy="true">Loading the trash…</p>}
      {trash.isError && (
        <p role="alert" className="alert error">
          {messageOf(trash.error)}
        </p>
      )}
      {trash.data && entries.length === 0 && <p className="notice">The trash is empty.</p>}
      {entries.length > 0 && (
        <>
          <table className="table">
            <caption className="visually-hidden">Deleted pages, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Path</th>
                <th scope="col">Deleted</th>
                <th scope="col">Deleted by</th>
                {publishable && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => {
                const withOther = e.deleted_with !== e.node_id;
                const parentTitle = withOther ? titleOf(e.deleted_with) : undefined;
                return (
                  <tr key={e.node_id}>
                    <th scope="row">
                      {e.title || "Untitled"} <span className="muted">({e.type})</span>
                    </th>
                    <td>
                      <span className="path">/{e.path}</span>
                    </td>
                    <td>
                      <WhenText iso={e.deleted_at} />
                    </td>
                    <td>
                      <WhoText actor={e.actor} />
                    </td>
                    {publishable && (
                      <td>
                        {withOther ? (
                          <span className="help">Deleted with “{parentTitle ?? e.deleted_with}”: restore that page to bring both back.</span>
                        ) : (
                          <Button className="st-button small" onPress={() => void restore(e)} isDisabled={busy !== null} aria-label={`Restore “${e.title || "Untitled"}”`}>
                            {busy === e.node_id ? "Restoring…" : "Restore"}
                          </Button>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p className="muted st-history-count">
            {entries.length} of {total} deleted pages shown.
            {trash.hasNextPage && (
              <Button className="st-button small" onPress={() => void trash.fetchNextPage()} isDisabled={trash.isFetchingNextPage}>
                {trash.isFetchingNextPage ? "Loading…" : "Load more"}
              </Button>
            )}
          </p>
        </>
      )}
    </main>
  );
}
