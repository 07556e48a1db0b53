// A node's editor: Title, Slug and the form layer's NodeForm over one FormStore, saved with the
// revision it was loaded at (If-Match), kept in localStorage until saved, refreshed live while
// nobody is typing, and in another locale, the node's translation.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useBlocker, useNavigate, useParams, useSearch } from "@tanstack/react-router";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Button, FieldError, Input, Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Text, TextField, Toolbar } from "react-aria-components";
import { AgentChanges, agentName, useAgentChanges } from "../editorial/AgentChanges";
import { AgentBadge, AgentMarksContext, useAgentMark } from "../editorial/agent-marks";
import { type FieldState, FieldStateBadge, FieldStatusContext, formPointers, useFieldState } from "../editorial/field-status";
import { openSitePreview, PreviewDialog } from "../editorial/Preview";
import { ScheduleDialog, ScheduleLine } from "../editorial/ScheduleDialog";
import { HistoryDialog } from "../history/HistoryDialog";
import { ApiError, data, enc, messageOf, nodeUrl, projectBase, request, revisionOf } from "./api";
import { actorName, clearDraft, docOfNode, docOfTranslation, draftKey, type LocalDraft, nodeBody, readDraft, translationBody, translationViolations, writeDraft } from "./docs";
import { CompareDialog, ConfirmDialog, type ConflictInfo, ConflictPanel, LeaveDialog } from "./EditorParts";
import { createFormStore, type EditorDoc, escapeSegment, type FormStore, NodeForm, type NodeOption, useDirty, useField, type Violation } from "./formApi";
import { searchNodeOptions } from "./node-search";
import { BADGE_LABEL, type BadgeState, badgeOf, canPublish, canTranslateWithAi, canWrite, keys, nodeQuery, nodeTypeOf, useMe, useModel, useProject } from "./queries";
import { useAnnounce } from "./Shell";
import { formatTime } from "./time";
import type { ContentModel, Me, NodeWithBlocks, Project, Revision, Translation } from "./types";

const translationKey = (ref: string, id: string, locale: string) => ["translation", ref, id, locale] as const;

async function readTranslation(ref: string, id: string, locale: string): Promise<Translation | null> {
  try {
    return await data<Translation>(`${nodeUrl(ref, id)}/translations/${enc(locale)}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export function NodeEditorPage() {
  const { slug, id } = useParams({ from: "/p/$slug/nodes/$id" });
  const search = useSearch({ from: "/p/$slug/nodes/$id" });
  const project = useProject(slug);
  const model = useModel(slug);
  const me = useMe(slug);
  // Live: the node is read every second while the tab is visible.
  const node = useQuery({ ...nodeQuery(slug, id), refetchInterval: 1000, refetchIntervalInBackground: false, staleTime: 0 });
  const locale = project.data && search.locale && search.locale !== project.data.default_locale ? search.locale : null;
  const translation = useQuery({ queryKey: translationKey(slug, id, locale ?? ""), queryFn: () => readTranslation(slug, id, locale ?? ""), enabled: !!locale, staleTime: Number.POSITIVE_INFINITY });

  const error = node.error ?? project.error ?? model.error ?? me.error ?? (locale ? translation.error : null);
  if (error && !node.data)
    return (
      <main className="editor-pane" id="main">
        <h1>{error instanceof ApiError && error.status === 404 ? "Page not found" : "Cannot open this page"}</h1>
        <p role="alert" className="alert error">
          {error instanceof ApiError && error.status === 404 ? "This page does not exist (it may have been deleted)." : messageOf(error)}
        </p>
      </main>
    );
  if (!node.data || !project.data || !model.data || !me.data || (locale && translation.data === undefined))
    return (
      <main className="editor-pane" id="main" aria-busy="true">
        <p className="muted">Loading…</p>
      </main>
    );
  if (search.locale && !project.data.locales.includes(search.locale))
    return (
      <main className="editor-pane" id="main">
        <h1>{node.data.title}</h1>
        <p role="alert" className="alert error">
          “{search.locale}” is not one of this project’s locales ({project.data.locales.join(", ")}).
        </p>
      </main>
    );
  return (
    <EditorSession
      key={`${id}:${locale ?? "base"}`}
      slug={slug}
      project={project.data}
      model={model.data}
      me={me.data}
      node={node.data}
      translation={locale ? (translation.data ?? null) : null}
      locale={locale}
    />
  );
}

type Notice = { kind: "restored"; savedAt: string; olderRevision: number | null } | null;

interface SessionProps {
  slug: string;
  project: Project;
  model: ContentModel;
  me: Me;
  node: NodeWithBlocks;
  translation: Translation | null;
  locale: string | null;
}

function EditorSession({ slug, project, model, me, node, translation, locale }: SessionProps) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const announce = useAnnounce();
  const nodeId = node.id;
  const storageKey = draftKey(project.slug, nodeId, locale);
  const writable = canWrite(me);
  const publishable = canPublish(me);

  // What the form was loaded from: the node (and translation), and the revision saves are based on.
  const [loaded, setLoaded] = useState({ node, translation });
  const serverDoc = useCallback((n: NodeWithBlocks, tr: Translation | null) => (locale ? docOfTranslation(n, tr) : docOfNode(n)), [locale]);
  // The unsaved work kept in this browser, read once, when the editor opens.
  const [restored] = useState(() => {
    const d = readDraft(storageKey);
    return d && JSON.stringify(d.doc) !== JSON.stringify(serverDoc(node, translation)) ? d : null;
  });
  const [store] = useState<FormStore>(() => {
    const s = createFormStore(serverDoc(node, translation));
    if (restored) applyDoc(s, restored.doc);
    return s;
  });
  const baseRevision = useRef<number>(restored ? restored.revision : node.revision);
  const [notice, setNotice] = useState<Notice>(restored ? { kind: "restored", savedAt: restored.saved_at, olderRevision: restored.revision !== node.revision ? restored.revision : null } : null);
  const dirty = useDirty(store);
  const [saving, setSaving] = useState(false);
  const savingRef = useRef(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [alert, setAlert] = useState<string | null>(null);
  const [conflict, setConflict] = useState<ConflictInfo | null>(null);
  const [remoteChange, setRemoteChange] = useState<number | null>(null);
  const [focusViolations, setFocusViolations] = useState(0);
  /** The form's content when "Compare with published" was pressed; null while the comparison is closed. */
  const [compareDoc, setCompareDoc] = useState<EditorDoc | null>(null);
  const [confirmDiscard, setConfirmDiscard] = useState(false);
  const [historyOpen, setHistoryOpen] = useState(false);
  const [scheduleOpen, setScheduleOpen] = useState(false);
  const [previewOpen, setPreviewOpen] = useState(false);
  // Who wrote this: the agents' changes to the node itself (a translation's form shows none).
  const agentChanges = useAgentChanges(slug, nodeId, node.revision);
  // The translation view: each field's state (machine, needs review, stale) from the translation's field_status.
  const fieldStates = useMemo(
    () =>
      locale
        ? formPointers(
            loaded.translation?.field_status,
            loaded.node.blocks.map((b) => b.id),
          )
        : new Map<string, FieldState>(),
    [locale, loaded.translation, loaded.node.blocks],
  );
  const agentMarks = useMemo(() => new Map(locale ? [] : agentChanges.map((c) => [c.pointer, agentName(c.actor)] as const)), [agentChanges, locale]);

  // Every change is kept in localStorage (debounced), with the revision it is based on.
  useEffect(() => {
    let timer: number | undefined;
    const unsubscribe = store.subscribeAll(() => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => {
        if (store.isDirty()) writeDraft(storageKey, { revision: baseRevision.current, saved_at: new Date().toISOString(), doc: store.getDoc() } satisfies LocalDraft);
        else clearDraft(storageKey);
      }, 300);
    });
    return () => {
      window.clearTimeout(timer);
      unsubscribe();
    };
  }, [store, storageKey]);

  /** A new baseline from the server: not dirty, violations and local draft cleared. */
  const reload = useCallback(
    (n: NodeWithBlocks, tr: Translation | null) => {
      baseRevision.current = n.revision;
      setLoaded({ node: n, translation: tr });
      store.reset(serverDoc(n, tr));
      clearDraft(storageKey);
      setRemoteChange(null);
      setConflict(null);
      setNotice(null);
    },
    [store, serverDoc, storageKey],
  );

  const fetchFresh = useCallback(async () => {
    const n = await qc.fetchQuery({ ...nodeQuery(slug, nodeId), staleTime: 0 });
    const tr = locale ? await qc.fetchQuery({ queryKey: translationKey(slug, nodeId, locale), queryFn: () => readTranslation(slug, nodeId, locale), staleTime: 0 }) : null;
    return { n, tr };
  }, [qc, slug, nodeId, locale]);

  // Live: a newer revision reloads the form when nothing is unsaved, else a banner offers it.
  useEffect(() => {
    if (node.revision <= baseRevision.current || savingRef.current || busy) return;
    if (store.isDirty()) {
      setRemoteChange(node.revision);
      return;
    }
    let cancelled = false;
    void (async () => {
      try {
        const tr = locale ? await qc.fetchQuery({ queryKey: translationKey(slug, nodeId, locale), queryFn: () => readTranslation(slug, nodeId, locale), staleTime: 0 }) : null;
        if (cancelled || store.isDirty() || node.revision <= baseRevision.current) return;
        reload(node, tr);
        void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
        const last = await data<Revision[]>(`${nodeUrl(slug, nodeId)}/revisions?per_page=1`).catch(() => [] as Revision[]);
        announce(`Updated by ${actorName(last[0]?.actor)}`);
      } catch {
        // The next poll tries again.
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [node, store, locale, qc, slug, nodeId, reload, announce, busy]);

  // ---- Saving.

  const handleWriteError = useCallback(
    (err: unknown) => {
      if (err instanceof ApiError && err.code === "conflict" && typeof err.details?.current_revision === "number") {
        const d = err.details as { current_revision: number; changes_since?: ConflictInfo["changes"]; changed_fields?: string[] | null };
        setConflict({ message: err.message, currentRevision: d.current_revision, changes: d.changes_since ?? [], changedFields: d.changed_fields ?? null });
        setRemoteChange(null);
        return;
      }
      // invalid_content names model violations; invalid_request the request's own limits (an empty title, a bad slug).
      const requestErrors =
        err instanceof ApiError && err.code === "invalid_request" && Array.isArray(err.details?.errors) ? (err.details.errors as Array<{ in?: string; field?: string; message: string }>) : null;
      if ((err instanceof ApiError && err.code === "invalid_content" && Array.isArray(err.details?.violations)) || requestErrors?.every((e) => e.in === "body" && e.field)) {
        const raw = requestErrors
          ? requestErrors.map((e) => ({
              pointer: `/${String(e.field).split(".").map(escapeSegment).join("/")}`,
              message: e.message,
            }))
          : ((err as ApiError).details?.violations as Violation[]);
        const violations = locale ? translationViolations(raw, store.getDoc()) : raw;
        store.setViolations(violations);
        // Title and slug sit above the form and come first: focus theirs, else the form's first violation.
        const head = violations.find((v) => v.pointer === "/title" || v.pointer === "/slug");
        if (head) requestAnimationFrame(() => document.querySelector<HTMLInputElement>(`input[data-pointer="${head.pointer}"]`)?.focus());
        else setFocusViolations((n) => n + 1);
        const n = violations.length;
        setAlert(`${n} ${n === 1 ? "problem" : "problems"} to fix before this page can be saved: ${violations.map((v) => `${v.pointer || "/"} ${v.message}`).join("; ")}`);
        return;
      }
      setAlert(messageOf(err));
    },
    [locale, store],
  );

  const save = useCallback(
    async (overRevision?: number) => {
      if (!writable || savingRef.current) return;
      savingRef.current = true;
      setSaving(true);
      setAlert(null);
      const doc = store.getDoc();
      try {
        if (locale) {
          const res = await request<{ data: Translation }>(`${nodeUrl(slug, nodeId)}/translations/${enc(locale)}`, {
            method: "PUT",
            body: translationBody(doc, loaded.translation),
            ifMatch: overRevision ?? baseRevision.current,
          });
          const tr = res.body.data;
          qc.setQueryData(translationKey(slug, nodeId, locale), tr);
          const n = await qc.fetchQuery({ ...nodeQuery(slug, nodeId), staleTime: 0 });
          const rev = revisionOf(res.etag) ?? n.revision;
          reload({ ...n, revision: Math.max(rev, n.revision) }, tr);
        } else {
          const res = await request<{ data: NodeWithBlocks }>(nodeUrl(slug, nodeId), { method: "PATCH", body: nodeBody(doc), ifMatch: overRevision ?? baseRevision.current });
          const n = res.body.data;
          qc.setQueryData(keys.node(slug, nodeId), n);
          reload(n, null);
          void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
        }
        announce("Saved");
      } catch (err) {
        handleWriteError(err);
      } finally {
        savingRef.current = false;
        setSaving(false);
      }
    },
    [writable, store, locale, slug, nodeId, loaded.translation, qc, reload, announce, handleWriteError],
  );

  // Ctrl/Cmd+S saves.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        if (writable) void save();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [save, writable]);

  // ---- Publishing and the other transitions.

  const act = async (label: string, path: string, body: unknown, confirmReload = true) => {
    setBusy(label);
    setAlert(null);
    try {
      await request(`${nodeUrl(slug, nodeId)}/${path}`, { method: "POST", body, ifMatch: baseRevision.current });
      void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
      void qc.invalidateQueries({ queryKey: ["published", slug, nodeId] });
      if (confirmReload) {
        const { n, tr } = await fetchFresh();
        reload(n, tr);
      }
      announce(`${label}: done`);
    } catch (err) {
      handleWriteError(err);
    } finally {
      setBusy(null);
    }
  };

  const translate = async () => {
    if (!locale) return;
    setBusy("Translate with AI");
    setAlert(null);
    try {
      await request(`${nodeUrl(slug, nodeId)}/translations/${enc(locale)}/translate`, { method: "POST", body: {}, ifMatch: baseRevision.current });
      const { n, tr } = await fetchFresh();
      reload(n, tr);
      announce("Machine translation loaded as a draft");
    } catch (err) {
      handleWriteError(err);
    } finally {
      setBusy(null);
    }
  };

  const loadTheirs = async () => {
    setBusy("Load theirs");
    try {
      const { n, tr } = await fetchFresh();
      reload(n, tr);
      announce("Loaded the latest version");
    } catch (err) {
      setAlert(messageOf(err));
    } finally {
      setBusy(null);
    }
  };

  const preview = async () => {
    if (!project.preview_url) {
      setPreviewOpen(true);
      return;
    }
    setBusy("Preview");
    setAlert(null);
    try {
      const path = locale ? [parentPathOf(loaded.node.path), translationSlug(loaded.translation) ?? loaded.node.slug].filter(Boolean).join("/") : loaded.node.path;
      await openSitePreview(slug, project.preview_url, path, locale ?? project.default_locale);
      announce("Preview opened in a new tab");
    } catch (err) {
      setAlert(messageOf(err));
    } finally {
      setBusy(null);
    }
  };

  const scheduled = async (message: string) => {
    setScheduleOpen(false);
    void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
    try {
      const { n, tr } = await fetchFresh();
      reload(n, tr);
    } catch (err) {
      setAlert(messageOf(err));
    }
    announce(message);
  };

  // ---- Leaving with unsaved edits asks first.
  const blocker = useBlocker({ shouldBlockFn: () => store.isDirty(), enableBeforeUnload: () => store.isDirty(), withResolver: true });

  // ---- What the page shows.
  const current = loaded.node;
  const nodeType = nodeTypeOf(model, current.type);
  const fieldsSchema = nodeType ? ((nodeType.fields as Record<string, unknown> | undefined) ?? null) : null;
  const blockTypes = useMemo(() => model.block_types.map((b) => ({ name: b.name, description: b.description, schema: b.schema as Record<string, unknown> })), [model]);
  const allowedBlocks = nodeType ? nodeType.blocks : null;
  const translationMode = useMemo(() => (locale ? { base: docOfNode(loaded.node), locale } : null), [locale, loaded.node]);
  const searchNodes = useCallback((q: string): Promise<NodeOption[]> => searchNodeOptions(slug, q), [slug]);

  const lookupNode = useCallback(
    async (id: string): Promise<NodeOption | null> => {
      try {
        const res = await request<{ data: { id: string; title: string; path: string } }>(`${projectBase(slug)}/nodes/${encodeURIComponent(id)}`);
        return { id: res.body.data.id, title: res.body.data.title, path: res.body.data.path };
      } catch {
        return null; // not a node of this project (or gone): the field shows the id
      }
    },
    [slug],
  );

  const tr = loaded.translation;
  const badge: BadgeState = locale ? translationBadge(tr) : badgeOf(current);
  const isPublishedNow = locale ? tr?.status === "published" : current.status === "published";
  const hasChanges = locale ? tr?.state === "changed" : current.state === "changed";
  const archived = current.status === "archived";
  const saveState = saving ? "Saving…" : dirty ? "Unsaved changes" : "Saved";

  return (
    <main className="editor-pane" id="main" aria-labelledby="editor-heading">
      <div className="editor-head">
        <div className="editor-title-row">
          <h1 id="editor-heading">{current.title || "Untitled"}</h1>
          <span className={`st-badge badge-${badge}`} title={locale ? `Translation (${locale}) state` : "State"}>
            {BADGE_LABEL[badge]}
          </span>
          {locale && !tr && <span className="st-badge badge-draft">not translated yet</span>}
        </div>
        <ScheduleLine schedule={locale ? { publish_at: tr?.publish_at ?? null, unpublish_at: tr?.unpublish_at ?? null } : current} locale={locale} />
        <Toolbar className="st-toolbar" aria-label="Page actions">
          <LocaleSelect project={project} locale={locale} onChange={(l) => void navigate({ to: ".", search: l === project.default_locale ? {} : { locale: l } })} />
          <span className="toolbar-sep" />
          {writable && (
            <Button className="st-button primary" onPress={() => void save()} isDisabled={saving || !!busy} aria-keyshortcuts="Control+S Meta+S">
              Save
            </Button>
          )}
          {publishable && !archived && (
            <Button
              className="st-button"
              onPress={() => void act("Publish", "publish", locale ? { locale } : {})}
              isDisabled={dirty || saving || !!busy || (isPublishedNow && !hasChanges) || (!!locale && !tr)}
              aria-describedby={dirty ? "publish-hint" : undefined}
            >
              Publish
            </Button>
          )}
          {writable && hasChanges && (
            <Button className="st-button" onPress={() => setConfirmDiscard(true)} isDisabled={saving || !!busy}>
              Discard changes
            </Button>
          )}
          {publishable && isPublishedNow && (
            <Button className="st-button" onPress={() => void act("Unpublish", "unpublish", locale ? { locale } : {})} isDisabled={saving || !!busy}>
              Unpublish
            </Button>
          )}
          {publishable && !locale && !archived && (
            <Button className="st-button" onPress={() => void act("Archive", "archive", {})} isDisabled={saving || !!busy || dirty}>
              Archive
            </Button>
          )}
          {publishable && !locale && archived && (
            <Button className="st-button" onPress={() => void act("Restore", "restore", {})} isDisabled={saving || !!busy}>
              Restore
            </Button>
          )}
          {publishable && !archived && (!locale || !!tr) && (
            <Button className="st-button" onPress={() => setScheduleOpen(true)} isDisabled={dirty || saving || !!busy} aria-describedby={dirty ? "publish-hint" : undefined}>
              Schedule
            </Button>
          )}
          <Button className="st-button quiet" onPress={() => void preview()} isDisabled={saving || !!busy}>
            Preview
          </Button>
          {!locale && (
            <Button className="st-button quiet" onPress={() => setCompareDoc(store.getDoc())}>
              Compare with published
            </Button>
          )}
          {!locale && (
            <Button className="st-button quiet" onPress={() => setHistoryOpen(true)}>
              History
            </Button>
          )}
          {locale && writable && canTranslateWithAi(me) && (
            <Button className="st-button" onPress={() => void translate()} isDisabled={dirty || saving || !!busy}>
              Translate with AI
            </Button>
          )}
          <span role="status" className={`save-state${dirty ? " is-dirty" : ""}`}>
            {busy ? `${busy}…` : saveState}
          </span>
        </Toolbar>
        {dirty && publishable && (
          <p id="publish-hint" className="hint">
            Save first to publish, schedule or preview your edits.
          </p>
        )}
      </div>

      {alert && (
        <div role="alert" className="alert error">
          {alert}
        </div>
      )}
      {notice?.kind === "restored" && (
        <section className="banner" aria-label="Restored changes">
          <p>
            Unsaved changes from {formatTime(notice.savedAt)} were restored.
            {notice.olderRevision !== null && ` They were made on an older version (revision ${notice.olderRevision}); saving will show what changed since.`}
          </p>
          <Button
            className="st-button"
            onPress={() => {
              store.reset(serverDoc(loaded.node, loaded.translation));
              baseRevision.current = loaded.node.revision;
              clearDraft(storageKey);
              setNotice(null);
            }}
          >
            Discard restored changes
          </Button>
          <Button className="st-button quiet" onPress={() => setNotice(null)} aria-label="Dismiss notice">
            Dismiss
          </Button>
        </section>
      )}
      {remoteChange !== null && !conflict && (
        <section className="banner warn" aria-label="Page changed">
          <p>This page changed since you opened it (now revision {remoteChange}). Your unsaved edits are kept; load theirs to drop them, or save to see the conflict.</p>
          <Button className="st-button" onPress={() => void loadTheirs()} isDisabled={!!busy}>
            Load theirs
          </Button>
        </section>
      )}
      {conflict && <ConflictPanel conflict={conflict} busy={saving || !!busy} onLoadTheirs={() => void loadTheirs()} onSaveMine={() => void save(conflict.currentRevision)} />}

      {!locale && (
        <AgentChanges list={agentChanges} fieldsSchema={fieldsSchema} blockTypes={blockTypes} blockTypeAt={(i) => loaded.node.blocks[i]?.type} onReviewed={writable ? () => void save() : undefined} />
      )}
      <AgentMarksContext.Provider value={agentMarks}>
        <FieldStatusContext.Provider value={fieldStates}>
          <div className="editor-form">
            <TitleSlug store={store} readOnly={!writable} parentPath={parentPathOf(current.path)} base={locale ? loaded.node : null} />
            <NodeForm
              store={store}
              fieldsSchema={fieldsSchema}
              blockTypes={blockTypes}
              allowedBlocks={allowedBlocks}
              readOnly={!writable}
              translation={translationMode}
              searchNodes={searchNodes}
              lookupNode={lookupNode}
              focusViolations={focusViolations}
            />
          </div>
        </FieldStatusContext.Provider>
      </AgentMarksContext.Provider>

      {historyOpen && (
        <HistoryDialog
          slug={slug}
          nodeId={nodeId}
          title={current.title}
          currentRevision={current.revision}
          canRestore={publishable}
          dirty={dirty}
          onRestored={() => void loadTheirs()}
          onClose={() => setHistoryOpen(false)}
        />
      )}
      {scheduleOpen && (
        <ScheduleDialog
          slug={slug}
          nodeId={nodeId}
          locale={locale}
          schedule={locale ? { publish_at: tr?.publish_at ?? null, unpublish_at: tr?.unpublish_at ?? null } : current}
          revision={baseRevision.current}
          onDone={(m) => void scheduled(m)}
          onClose={() => setScheduleOpen(false)}
        />
      )}
      {previewOpen && <PreviewDialog slug={slug} nodeId={nodeId} locale={locale} onClose={() => setPreviewOpen(false)} />}
      {compareDoc && <CompareDialog slug={slug} nodeId={nodeId} working={compareDoc} onClose={() => setCompareDoc(null)} />}
      <ConfirmDialog
        isOpen={confirmDiscard}
        title="Discard unpublished changes?"
        body={`The working copy${locale ? ` of the ${locale} translation` : ""} goes back to the published version. Unpublished changes are lost (they remain in the page's revisions).`}
        confirmLabel="Discard changes"
        onCancel={() => setConfirmDiscard(false)}
        onConfirm={() => {
          setConfirmDiscard(false);
          void act("Discard changes", "discard", locale ? { locale } : {});
        }}
      />
      <LeaveDialog isOpen={blocker.status === "blocked"} onStay={() => blocker.reset?.()} onLeave={() => blocker.proceed?.()} />
    </main>
  );
}

function translationBadge(tr: Translation | null): BadgeState {
  if (!tr) return "draft";
  if (tr.publish_at && tr.status !== "published" && Date.parse(tr.publish_at) > Date.now()) return "scheduled";
  if (tr.state === "changed") return "changed";
  return tr.status === "published" ? "published" : "draft";
}

const parentPathOf = (path: string) => path.split("/").slice(0, -1).join("/");

/** A translation's own slug (its meta.slug), when it has one. */
function translationSlug(tr: Translation | null): string | null {
  const meta = tr?.meta as { slug?: unknown } | null | undefined;
  return typeof meta?.slug === "string" && meta.slug !== "" ? meta.slug : null;
}

/** Puts a doc into the store through set(), so the store's baseline stays the server's (dirty). */
function applyDoc(store: FormStore, doc: EditorDoc) {
  store.set("/title", doc.title);
  store.set("/slug", doc.slug);
  store.set("/fields", doc.fields);
  store.set("/blocks", doc.blocks);
}

function TitleSlug({ store, readOnly, parentPath, base }: { store: FormStore; readOnly: boolean; parentPath: string; base: NodeWithBlocks | null }) {
  const [title, setTitle] = useField<string>(store, "/title");
  const [slug, setSlug] = useField<string>(store, "/slug");
  const titleError = useViolation(store, "/title");
  const slugError = useViolation(store, "/slug");
  const titleAgent = useAgentMark("/title");
  const titleState = useFieldState("/title");
  const slugAgent = useAgentMark("/slug");
  const shownSlug = slug || base?.slug || "";
  const path = `/${parentPath ? `${parentPath}/` : ""}${shownSlug}`;
  return (
    <div className="title-slug">
      <TextField className="st-field" value={title ?? ""} onChange={setTitle} isReadOnly={readOnly} isInvalid={!!titleError} validationBehavior="aria" isRequired={!base}>
        <Label>Title</Label>
        <Input
          placeholder={base?.title}
          data-pointer="/title"
          aria-describedby={
            [titleAgent ? "title-agent" : "", titleState === "machine" || titleState === "needs_review" || titleState === "stale" ? "title-state" : ""].filter(Boolean).join(" ") || undefined
          }
        />
        <AgentBadge agent={titleAgent} id="title-agent" />
        <FieldStateBadge state={titleState} id="title-state" />
        {base && (
          <Text slot="description" className="help">
            Original: {base.title}
          </Text>
        )}
        <FieldError className="st-field-error">{titleError}</FieldError>
      </TextField>
      <TextField className="st-field" value={slug ?? ""} onChange={setSlug} isReadOnly={readOnly} isInvalid={!!slugError} validationBehavior="aria" isRequired={!base}>
        <Label>Slug</Label>
        <Input placeholder={base?.slug} data-pointer="/slug" aria-describedby={slugAgent ? "slug-agent" : undefined} />
        <AgentBadge agent={slugAgent} id="slug-agent" />
        <Text slot="description" className="help">
          Path: <span className="path">{path}</span>
          {base && " (the original’s path, with this locale’s slug)"}
        </Text>
        <FieldError className="st-field-error">{slugError}</FieldError>
      </TextField>
    </div>
  );
}

function useViolation(store: FormStore, pointer: string): string | null {
  const [v, setV] = useState(() => store.violationAt(pointer));
  useEffect(() => {
    setV(store.violationAt(pointer));
    return store.subscribeViolations(() => setV(store.violationAt(pointer)));
  }, [store, pointer]);
  return v;
}

function LocaleSelect({ project, locale, onChange }: { project: Project; locale: string | null; onChange: (l: string) => void }) {
  if (project.locales.length < 2) return null;
  return (
    <Select className="locale-select" selectedKey={locale ?? project.default_locale} onSelectionChange={(k) => k !== null && onChange(String(k))}>
      <Label className="inline-label">Locale</Label>
      <Button className="st-select-button">
        <SelectValue />
        <span aria-hidden="true">▾</span>
      </Button>
      <Popover className="st-popover">
        <ListBox className="st-listbox">
          {project.locales.map((l) => (
            <ListBoxItem key={l} id={l} className="st-listbox-item" textValue={l}>
              {l === project.default_locale ? `${l} (default)` : l}
            </ListBoxItem>
          ))}
        </ListBox>
      </Popover>
    </Select>
  );
}
