// One approval request opened: who asked what, the change it would make (for a publication, the
// working copy against the published version, field by field, as text; for a delete, unpublish,
// archive… what happens, in words), and Approve / Reject with a note the agent's retry reads.
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { Button, Label, Text, TextArea, TextField } from "react-aria-components";
import { ApiError, data, messageOf, nodeUrl, projectBase, request } from "../app/api";
import { type DiffRow, diffVersions, docOfNode, type PublishedDoc } from "../app/docs";
import { VersionDiffTable } from "../app/EditorParts";
import { nodeQuery, useProject } from "../app/queries";
import { formatTime } from "../app/time";
import type { NodeWithBlocks, PublishedVersion } from "../app/types";
import { openSitePreview, PreviewDialog } from "../editorial/Preview";
import { PartsChooser } from "./PartsChooser";
import type { Approval, ApprovalPart } from "./types";
import { agentOf, consequenceOf, extraArguments, STATUS_HELP, STATUS_WORDS, verbOf } from "./words";

/** The published version (what delivery serves), or null when the page was never published (404). */
async function readPublished(ref: string, nodeId: string): Promise<PublishedVersion | null> {
  try {
    return await data<PublishedVersion>(`${nodeUrl(ref, nodeId)}/published`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

const NOTHING_PUBLISHED: PublishedDoc = { title: "", slug: "", fields: {}, blocks: [] };

/** The rows a publication changes; never published: every value of the working copy is new. */
function publicationRows(published: PublishedVersion | null, node: NodeWithBlocks): DiffRow[] {
  const working = docOfNode(node);
  if (published) return diffVersions(published, working);
  return diffVersions(NOTHING_PUBLISHED, working).map((r) => ({ ...r, change: "added", before: undefined }));
}

/** Does carrying the request out publish the working copy (so a content diff says what changes)? */
const publishes = (a: Approval): boolean => a.operation === "publish_node" || (a.operation === "schedule_node" && typeof (a.arguments as Record<string, unknown>)?.publish_at === "string");

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="approval-fact">
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function ApprovalDetail({
  slug,
  approval,
  canDecide,
  onDecided,
  onVoid,
  onClose,
}: {
  slug: string;
  approval: Approval;
  canDecide: boolean;
  onDecided: (decided: Approval, title: string) => void;
  onVoid: () => void;
  onClose: () => void;
}) {
  const headingId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);
  const [failure, setFailure] = useState<{ message: string; void: boolean } | null>(null);
  const node = useQuery({ ...nodeQuery(slug, approval.node_id), retry: false, staleTime: 0 });
  const project = useProject(slug);
  const showDiff = publishes(approval);
  // A pending publication of a whole page comes in parts a person may leave out.
  const detail = useQuery({
    queryKey: ["approval", slug, approval.id, approval.status],
    queryFn: () => request<{ data: Approval; parts: ApprovalPart[] | null }>(`${projectBase(slug)}/approvals/${encodeURIComponent(approval.id)}`).then((r) => r.body.parts),
    enabled: approval.status === "pending" && approval.operation === "publish_node",
    staleTime: 0,
  });
  const parts = detail.data && detail.data.length > 1 ? detail.data : null;
  const [accepted, setAccepted] = useState<string[]>([]);
  const [previewOpen, setPreviewOpen] = useState(false);
  const [previewError, setPreviewError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: every part is checked anew when the parts (or the request) change
  useEffect(() => {
    setAccepted(parts ? parts.map((p) => p.pointer) : []);
  }, [detail.data, approval.id]);
  const published = useQuery({
    queryKey: ["published", slug, approval.node_id],
    queryFn: () => readPublished(slug, approval.node_id),
    enabled: showDiff,
    staleTime: 0,
  });

  // A new request opened: its heading takes the focus (a keyboard or screen reader user lands on it).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the focus moves when another request is opened
  useEffect(() => {
    setNote("");
    setFailure(null);
    heading.current?.focus();
  }, [approval.id]);

  const gone = node.error instanceof ApiError && node.error.status === 404;
  const title = node.data?.title ?? (gone ? "a page no longer there" : "…");
  const path = node.data?.path ?? null;
  const agent = agentOf(approval.requested_by);
  const changedSince = node.data && node.data.revision !== approval.revision;
  const consequence = consequenceOf(approval, path);
  const pending = approval.status === "pending";

  const decide = async (decision: "approve" | "reject") => {
    setBusy(decision);
    setFailure(null);
    try {
      const leftOut = decision === "approve" && parts ? parts.filter((p) => !accepted.includes(p.pointer)).map((p) => p.pointer) : [];
      const body = { ...(note.trim() ? { note: note.trim() } : {}), ...(leftOut.length > 0 ? { left_out: leftOut } : {}) };
      const res = await request<{ data: Approval }>(`${projectBase(slug)}/approvals/${encodeURIComponent(approval.id)}/${decision}`, { method: "POST", body });
      onDecided(res.body.data, node.data?.title ?? approval.node_id);
    } catch (err) {
      const conflict = err instanceof ApiError && err.status === 409;
      setFailure({ message: messageOf(err), void: conflict });
      if (conflict) onVoid();
    } finally {
      setBusy(null);
    }
  };

  const rows = showDiff && node.data && published.data !== undefined ? publicationRows(published.data, node.data) : [];
  const inPart = parts !== null && accepted.length < parts.length;

  /** The page as approving would publish it: the site's preview (preview_url) with a fresh token, or the built-in one. */
  const preview = async () => {
    setPreviewError(null);
    const template = project.data?.preview_url;
    if (!template || !node.data) {
      setPreviewOpen(true);
      return;
    }
    try {
      await openSitePreview(slug, template, node.data.path, project.data?.default_locale ?? "");
    } catch (err) {
      setPreviewError(messageOf(err));
    }
  };

  return (
    <section className="approval-detail panel" aria-labelledby={headingId}>
      <div className="approval-detail-head">
        <h2 id={headingId} ref={heading} tabIndex={-1}>
          {verbOf(approval.operation)} “{title}”
        </h2>
        <Button className="st-button quiet small" onPress={onClose}>
          Close
        </Button>
      </div>
      <dl className="approval-facts">
        <Fact term="Asked by">
          {agent.name} <span className="st-badge approval-agent">{agent.kind}</span>
        </Fact>
        <Fact term="Operation">
          <code>{approval.operation}</code>
        </Fact>
        <Fact term="Page">
          {node.data ? (
            <Link to="/p/$slug/nodes/$id" params={{ slug, id: approval.node_id }}>
              {node.data.title}
            </Link>
          ) : (
            <span>{gone ? `No longer there (id ${approval.node_id}): it may be in the trash.` : approval.node_id}</span>
          )}
          {path !== null && <span className="path"> /{path}</span>}
        </Fact>
        <Fact term="Revision">{approval.revision} (the request holds only while the page stays at this revision)</Fact>
        {extraArguments(approval).map(([k, v]) => (
          <Fact key={k} term={k}>
            <code>{v}</code>
          </Fact>
        ))}
        <Fact term="Asked">
          <time dateTime={approval.created_at}>{formatTime(approval.created_at)}</time>
        </Fact>
        <Fact term="Expires">
          <time dateTime={approval.expires_at}>{formatTime(approval.expires_at)}</time>
        </Fact>
        <Fact term="Status">
          {STATUS_WORDS[approval.status]}: {STATUS_HELP[approval.status]}
        </Fact>
        {approval.decided_by && (
          <Fact term="Decided by">
            {agentOf(approval.decided_by).name}
            {approval.decided_at && (
              <>
                {" "}
                on <time dateTime={approval.decided_at}>{formatTime(approval.decided_at)}</time>
              </>
            )}
          </Fact>
        )}
        {approval.note && (
          <Fact term="Note for the agent">
            <span className="approval-note">{approval.note}</span>
          </Fact>
        )}
      </dl>

      {pending && changedSince && (
        <p className="notice approval-stale">
          This page has changed since the agent asked (revision {approval.revision} then, {node.data?.revision} now): approving will fail, the request being void, and the agent must ask again. What is
          shown below is the page now.
        </p>
      )}

      <h3>What approving does</h3>
      {consequence && <p className="approval-consequence">{consequence}</p>}
      {showDiff && (
        <>
          {(node.isPending || published.isPending) && <p aria-busy="true">Loading the change…</p>}
          {(node.isError || published.isError) && !gone && (
            <p role="alert" className="alert error">
              {messageOf(node.error ?? published.error)}
            </p>
          )}
          {published.data === null && <p className="notice">Never published: everything below is new to the site.</p>}
          {published.data?.published_at && <p className="muted">The published version ({formatTime(published.data.published_at)}) against the page’s working copy, which publishing makes live.</p>}
          {node.data && published.data !== undefined && rows.length === 0 && <p>No differences: the working copy is the published version.</p>}
          {rows.length > 0 && (
            <VersionDiffTable rows={rows} caption="What publishing changes, by field" before="Published now" after="After approval" words={{ added: "New" }} className="approval-diff" />
          )}
          {node.data && (
            <div className="panel-actions">
              <Button className="st-button" onPress={() => void preview()}>
                Preview the result
              </Button>
              <span className="muted">{project.data?.preview_url ? "Opens the site’s preview in a new tab" : "What the delivery API would answer"}, with every part the agent wrote.</span>
            </div>
          )}
          {previewError && (
            <p role="alert" className="alert error">
              {previewError}
            </p>
          )}
          {pending && canDecide && parts && !failure?.void && <PartsChooser parts={parts} accepted={accepted} onChange={setAccepted} blockOrder={node.data?.blocks.map((b) => b.id) ?? []} />}
        </>
      )}
      {previewOpen && (
        <PreviewDialog slug={slug} nodeId={approval.node_id} locale={typeof approval.arguments.locale === "string" ? approval.arguments.locale : null} onClose={() => setPreviewOpen(false)} />
      )}

      {failure && (
        <div role="alert" className="alert error approval-failure">
          {failure.void ? (
            <p>
              <strong>This request can no longer be decided.</strong> {failure.message}. Nothing was published; the agent must ask again.
            </p>
          ) : (
            <p>{failure.message}</p>
          )}
        </div>
      )}

      {pending && canDecide && !failure?.void && (
        <div className="approval-decide">
          <TextField className="st-field approval-note-field" value={note} onChange={setNote} maxLength={2000}>
            <Label>Note for the agent</Label>
            <TextArea className="st-textarea" rows={3} />
            <Text slot="description" className="help">
              Optional. The agent reads it when it retries (why it was rejected, what to change).
            </Text>
          </TextField>
          <div className="panel-actions">
            <Button className="st-button primary" onPress={() => void decide("approve")} isDisabled={busy !== null || (parts !== null && accepted.length === 0)}>
              {busy === "approve" ? "Approving…" : inPart ? "Approve the checked parts" : "Approve"}
            </Button>
            <Button className="st-button danger" onPress={() => void decide("reject")} isDisabled={busy !== null}>
              {busy === "reject" ? "Rejecting…" : "Reject"}
            </Button>
          </div>
        </div>
      )}
      {pending && !canDecide && <p className="muted">Deciding needs the right to publish in this project (an editor, admin or owner): you can look, not decide.</p>}
    </section>
  );
}
