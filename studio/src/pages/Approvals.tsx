// The project's approvals inbox (/studio/p/{slug}/approvals): what agents without content:publish
// asked to publish, unpublish, archive, restore or delete, newest first (pending by default, a
// status filter for the others); a request opened shows its change and, for people who may publish,
// Approve and Reject with a note the agent's retry reads.
import { useInfiniteQuery, useQueryClient } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useEffect, useRef, useState } from "react";
import { Button, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from "react-aria-components";
import { messageOf, projectBase, request } from "../app/api";
import { canPublish, keys, useMe } from "../app/queries";
import { useAnnounce } from "../app/Shell";
import { ApprovalDetail } from "../approvals/ApprovalDetail";
import { ApprovalList, reviewButtonId } from "../approvals/ApprovalList";
import type { Approval, ApprovalPage, ApprovalStatus } from "../approvals/types";
import { STATUS_WORDS, verbOf } from "../approvals/words";
import "../approvals/approvals.css";

const PER_PAGE = 20;
type Filter = ApprovalStatus | "all";
const FILTERS: Array<{ id: Filter; label: string }> = [
  { id: "pending", label: "Pending" },
  { id: "approved", label: "Approved (not yet carried out)" },
  { id: "rejected", label: "Rejected (not yet heard)" },
  { id: "partial", label: "Approved in part (not yet heard)" },
  { id: "used", label: "Used (carried out or heard)" },
  { id: "void", label: "Void (the page changed)" },
  { id: "expired", label: "Expired" },
  { id: "all", label: "All" },
];

const EMPTY_WORDS: Record<Filter, string> = {
  pending: "No request is waiting for a decision. When an agent without the right to publish asks to publish, unpublish, archive, restore or delete a page, it shows here.",
  approved: "No approved request is waiting for the agent’s retry.",
  rejected: "No rejected request is waiting for the agent’s retry.",
  partial: "No request approved in part is waiting for the agent’s retry.",
  used: "No request has been carried out or answered yet.",
  void: "No request was voided by a change to its page.",
  expired: "No request has expired.",
  all: "No agent has asked for approval in this project yet.",
};

const listKey = (slug: string) => ["approvals", slug] as const;

export function ApprovalsPage() {
  const { slug } = useParams({ from: "/p/$slug/approvals" });
  const qc = useQueryClient();
  const announce = useAnnounce();
  const me = useMe(slug);
  const [filter, setFilter] = useState<Filter>("pending");
  const [selected, setSelected] = useState<Approval | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);

  const list = useInfiniteQuery({
    queryKey: [...listKey(slug), filter],
    queryFn: ({ pageParam }) => {
      const q = new URLSearchParams({ page: String(pageParam), per_page: String(PER_PAGE) });
      if (filter !== "all") q.set("status", filter);
      return request<ApprovalPage>(`${projectBase(slug)}/approvals?${q}`).then((r) => r.body);
    },
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page * last.per_page < last.total ? last.page + 1 : undefined),
    staleTime: 0,
    // New requests arrive while the inbox is open.
    refetchInterval: 15_000,
  });
  const approvals = list.data?.pages.flatMap((p) => p.data) ?? [];
  const total = list.data?.pages[0]?.total ?? 0;

  // After a decision the outcome takes the focus, so the keyboard does not fall back to the page's top.
  useEffect(() => {
    if (outcome) outcomeRef.current?.focus();
  }, [outcome]);

  const refresh = () => void qc.invalidateQueries({ queryKey: listKey(slug) });

  const close = () => {
    const id = selected?.id;
    setSelected(null);
    if (id) window.setTimeout(() => document.getElementById(reviewButtonId(id))?.focus(), 0);
  };

  const decided = (a: Approval, title: string) => {
    const what = `${verbOf(a.operation)} “${title}”`;
    const text =
      a.status === "approved"
        ? `Approved: ${what}. The agent’s retry of the same call carries it out, once.`
        : a.status === "partial"
          ? `Approved in part: ${what}. Published ${a.parts?.accepted.length ?? 0} parts now and left out ${a.parts?.left_out.length ?? 0}, set back to the published version; the agent’s retry hears which${a.note ? ", with your note" : ""}.`
          : `Rejected: ${what}. The agent’s retry hears so${a.note ? ", with your note" : ""}.`;
    setSelected(null);
    setOutcome(text);
    announce(text);
    refresh();
    void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
  };

  return (
    <main className="editor-pane approvals-page" id="main">
      <h1>Approvals</h1>
      <p className="lede muted">Agents that may draft but not publish ask here. Each request holds for the page as it was when asked: a change to the page voids it.</p>
      <div className="approvals-filters">
        <Select
          className="st-field"
          selectedKey={filter}
          onSelectionChange={(k) => {
            if (k === null) return;
            setFilter(String(k) as Filter);
            setSelected(null);
            setOutcome(null);
          }}
        >
          <Label>Status</Label>
          <Button className="st-select-button">
            <SelectValue />
            <span aria-hidden="true">▾</span>
          </Button>
          <Popover className="st-popover">
            <ListBox className="st-listbox" items={FILTERS}>
              {(f) => (
                <ListBoxItem id={f.id} className="st-listbox-item" textValue={f.label}>
                  {f.label}
                </ListBoxItem>
              )}
            </ListBox>
          </Popover>
        </Select>
      </div>

      {outcome && (
        <p ref={outcomeRef} tabIndex={-1} className="notice approval-outcome">
          {outcome}
        </p>
      )}
      {list.isError && (
        <p role="alert" className="alert error">
          {messageOf(list.error)}
        </p>
      )}
      {list.isPending && <p aria-busy="true">Loading the requests…</p>}

      <div className={`approvals-layout${selected ? " has-detail" : ""}`}>
        <section className="approvals-inbox" aria-labelledby="approvals-list-heading">
          <h2 id="approvals-list-heading">
            {filter === "all" ? "All requests" : `${STATUS_WORDS[filter]} requests`}
            {list.data && <span className="muted"> ({total})</span>}
          </h2>
          {list.data && approvals.length === 0 && <p className="muted">{EMPTY_WORDS[filter]}</p>}
          {approvals.length > 0 && <ApprovalList slug={slug} approvals={approvals} selectedId={selected?.id ?? null} onReview={(a) => setSelected(a)} />}
          {list.hasNextPage && (
            <Button className="st-button" onPress={() => void list.fetchNextPage()} isDisabled={list.isFetchingNextPage}>
              {list.isFetchingNextPage ? "Loading…" : "Load more"}
            </Button>
          )}
        </section>
        {selected && <ApprovalDetail slug={slug} approval={selected} canDecide={canPublish(me.data)} onDecided={decided} onVoid={refresh} onClose={close} />}
      </div>
    </main>
  );
}
