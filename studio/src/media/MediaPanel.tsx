// One media item in a dialog: its preview and facts, alt text per project locale, the focal point
// (a click on the preview, or the two sliders by keyboard) with crops that follow it live, an AI
// alt draft to review, the nodes that use it, and Delete (which names those nodes and asks for
// Delete anyway while any remain).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type MouseEvent, useEffect, useRef, useState } from "react";
import { Button, Dialog, Form, Heading, Input, Label, Modal, ModalOverlay, Slider, SliderOutput, SliderThumb, SliderTrack, TextField } from "react-aria-components";
import { ApiError, messageOf } from "../app/api";
import { formatTime } from "../app/time";
import { deleteMedia, describeMedia, fileUrl, formatBytes, isRaster, type MediaItem, type MediaReference, mediaKeys, mediaReferences, readMedia, updateMedia } from "./api";

/** A focal point change is saved once the slider or the pointer has been still this long. */
const FOCAL_SAVE_DELAY_MS = 400;
const PREVIEW_WIDTH = 800;
const CROP_WIDTH = 320;

export interface MediaPanelProps {
  slug: string;
  item: MediaItem;
  locales: string[];
  defaultLocale: string;
  canWrite: boolean;
  onClose: () => void;
}

export function MediaPanel(props: MediaPanelProps) {
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable onOpenChange={(open) => !open && props.onClose()}>
      <Modal className="modal wide media-modal">
        <Dialog className="dialog media-panel">
          <PanelBody {...props} />
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

function PanelBody({ slug, item: initial, locales, defaultLocale, canWrite, onClose }: MediaPanelProps) {
  const qc = useQueryClient();
  const query = useQuery({ queryKey: mediaKeys.item(slug, initial.id), queryFn: () => readMedia(slug, initial.id), initialData: initial, staleTime: 5_000 });
  const item = query.data;
  const stored = (next: MediaItem) => {
    qc.setQueryData(mediaKeys.item(slug, next.id), next);
    void qc.invalidateQueries({ queryKey: [...mediaKeys.all(slug), "list"] });
  };
  const raster = isRaster(item.type);
  return (
    <>
      <Heading slot="title" className="media-panel-title">
        {item.filename}
      </Heading>
      <div className="media-panel-grid">
        <div className="media-panel-visual">{raster ? <FocalEditor slug={slug} item={item} canWrite={canWrite} onStored={stored} /> : <PlainPreview item={item} />}</div>
        <div className="media-panel-side">
          <Facts item={item} />
          <AltEditor slug={slug} item={item} locales={locales} defaultLocale={defaultLocale} canWrite={canWrite} onStored={stored} />
          {raster && canWrite ? <AltDraft slug={slug} item={item} locales={locales} defaultLocale={defaultLocale} onStored={stored} /> : null}
          <References slug={slug} id={item.id} />
          {canWrite ? <DeleteSection slug={slug} item={item} onDeleted={onClose} /> : null}
        </div>
      </div>
      <div className="dialog-actions">
        <Button className="st-button" slot="close">
          Close
        </Button>
      </div>
    </>
  );
}

function PlainPreview({ item }: { item: MediaItem }) {
  return item.type === "image/svg+xml" ? (
    <img className="media-preview-img" src={fileUrl(item)} alt="" />
  ) : (
    <p className="notice">
      {item.type === "application/pdf" ? "A PDF document. " : ""}
      <a href={fileUrl(item)} target="_blank" rel="noreferrer">
        Open the file
      </a>
    </p>
  );
}

function Facts({ item }: { item: MediaItem }) {
  return (
    <dl className="media-facts">
      <dt>Type</dt>
      <dd>{item.type}</dd>
      <dt>Size</dt>
      <dd>{formatBytes(item.size)}</dd>
      <dt>Dimensions</dt>
      <dd>{item.width && item.height ? `${item.width} × ${item.height} pixels` : "—"}</dd>
      <dt>Uploaded</dt>
      <dd>{formatTime(item.created_at)}</dd>
    </dl>
  );
}

const round2 = (n: number) => Math.round(Math.min(1, Math.max(0, n)) * 100) / 100;

function FocalEditor({ slug, item, canWrite, onStored }: { slug: string; item: MediaItem; canWrite: boolean; onStored: (m: MediaItem) => void }) {
  const [point, setPoint] = useState(() => item.focal_point ?? { x: 0.5, y: 0.5 });
  const [status, setStatus] = useState<{ kind: "saved" | "saving" | "error"; text: string } | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const latest = useRef(point);
  latest.current = point;
  const save = useMutation({
    mutationFn: (p: { x: number; y: number }) => updateMedia(slug, item.id, { focal_point: p }),
    onSuccess: (m) => {
      onStored(m);
      setStatus({ kind: "saved", text: "Focal point saved" });
    },
    onError: (err) => setStatus({ kind: "error", text: `Focal point not saved: ${messageOf(err)}` }),
  });
  const schedule = () => {
    if (!canWrite) return;
    if (timer.current) clearTimeout(timer.current);
    setStatus({ kind: "saving", text: "Saving focal point…" });
    timer.current = setTimeout(() => save.mutate(latest.current), FOCAL_SAVE_DELAY_MS);
  };
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const pick = (e: MouseEvent<HTMLImageElement>) => {
    if (!canWrite) return;
    const box = e.currentTarget.getBoundingClientRect();
    const next = { x: round2((e.clientX - box.left) / box.width), y: round2((e.clientY - box.top) / box.height) };
    latest.current = next;
    setPoint(next);
    schedule();
  };
  const position = { objectPosition: `${point.x * 100}% ${point.y * 100}%` };
  return (
    <>
      <div className="media-preview">
        {/* biome-ignore lint/a11y/noStaticElementInteractions: a pointer shortcut; the Focal point sliders below are the keyboard's way to the same value */}
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: as above, the sliders carry the keyboard */}
        <img className={canWrite ? "media-preview-img pickable" : "media-preview-img"} src={fileUrl(item, PREVIEW_WIDTH)} alt="" onClick={pick} draggable={false} />
        <span className="media-focal-marker" aria-hidden="true" style={{ left: `${point.x * 100}%`, top: `${point.y * 100}%` }} />
      </div>
      {canWrite ? <p className="help">Click the image, or use the sliders, to set the point crops keep in view.</p> : null}
      <div className="media-focal-sliders">
        {(["x", "y"] as const).map((axis) => (
          <Slider
            key={axis}
            className="media-slider"
            minValue={0}
            maxValue={1}
            step={0.01}
            value={point[axis]}
            isDisabled={!canWrite}
            formatOptions={{ style: "decimal", minimumFractionDigits: 2, maximumFractionDigits: 2 }}
            onChange={(v) => setPoint((p) => ({ ...p, [axis]: round2(v as number) }))}
            onChangeEnd={() => schedule()}
          >
            <div className="media-slider-head">
              <Label>{axis === "x" ? "Focal point X" : "Focal point Y"}</Label>
              <SliderOutput className="media-slider-output" />
            </div>
            <SliderTrack className="media-slider-track">
              <SliderThumb className="media-slider-thumb" />
            </SliderTrack>
          </Slider>
        ))}
      </div>
      {status ? (
        <p className={status.kind === "error" ? "st-field-error" : "help"} role="status">
          {status.text}
        </p>
      ) : null}
      <div className="media-crops">
        <figure className="media-crop">
          <img className="media-crop-img square" src={fileUrl(item, CROP_WIDTH)} alt="" style={position} />
          <figcaption>Square crop</figcaption>
        </figure>
        <figure className="media-crop">
          <img className="media-crop-img wide" src={fileUrl(item, CROP_WIDTH)} alt="" style={position} />
          <figcaption>16:9 crop</figcaption>
        </figure>
      </div>
    </>
  );
}

function AltEditor({
  slug,
  item,
  locales,
  defaultLocale,
  canWrite,
  onStored,
}: {
  slug: string;
  item: MediaItem;
  locales: string[];
  defaultLocale: string;
  canWrite: boolean;
  onStored: (m: MediaItem) => void;
}) {
  const [alt, setAlt] = useState<Record<string, string>>(() => ({ ...item.alt }));
  const [saved, setSaved] = useState<string | null>(null);
  // An alt text written elsewhere in this panel (an accepted AI draft) shows in its box.
  const seen = useRef(item.alt);
  useEffect(() => {
    const before = seen.current;
    seen.current = item.alt;
    setAlt((typed) => {
      const next = { ...typed };
      for (const [loc, text] of Object.entries(item.alt)) if (before[loc] !== text) next[loc] = text;
      return next;
    });
  }, [item.alt]);
  const save = useMutation({
    mutationFn: () => {
      const patch: Record<string, string | null> = {};
      for (const loc of locales) {
        const text = (alt[loc] ?? "").trim();
        if (text !== (item.alt[loc] ?? "")) patch[loc] = text === "" ? null : text;
      }
      return Object.keys(patch).length > 0 ? updateMedia(slug, item.id, { alt: patch }) : Promise.resolve(item);
    },
    onSuccess: (m) => {
      onStored(m);
      setSaved("Alt text saved");
    },
  });
  const ordered = [defaultLocale, ...locales.filter((l) => l !== defaultLocale)];
  return (
    <Form
      className="media-alt"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(null);
        save.mutate();
      }}
    >
      <h3>Alt text</h3>
      <p className="help">Describes the image for people who cannot see it; one per language.</p>
      {ordered.map((loc) => (
        <TextField
          key={loc}
          className="st-field"
          value={alt[loc] ?? ""}
          onChange={(v) => {
            setSaved(null);
            setAlt((a) => ({ ...a, [loc]: v }));
          }}
          maxLength={2000}
          isReadOnly={!canWrite}
        >
          <Label>
            Alt text ({loc}){loc === defaultLocale ? ", default" : ""}
          </Label>
          <Input />
        </TextField>
      ))}
      {save.isError ? (
        <p role="alert" className="alert error">
          {messageOf(save.error)}
        </p>
      ) : null}
      {canWrite ? (
        <div className="media-row">
          <Button type="submit" className="st-button primary small" isDisabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save alt text"}
          </Button>
          <span role="status" className="help">
            {saved}
          </span>
        </div>
      ) : null}
    </Form>
  );
}

function AltDraft({ slug, item, locales, defaultLocale, onStored }: { slug: string; item: MediaItem; locales: string[]; defaultLocale: string; onStored: (m: MediaItem) => void }) {
  const describe = useMutation({
    mutationFn: () =>
      describeMedia(
        slug,
        item.id,
        locales.filter((l) => l !== defaultLocale),
      ),
    onSuccess: onStored,
  });
  const accept = useMutation({ mutationFn: (loc: string) => updateMedia(slug, item.id, { alt: { [loc]: item.alt_draft[loc] ?? null } }), onSuccess: onStored });
  const drafts = Object.entries(item.alt_draft).filter(([, text]) => text !== "");
  return (
    <section className="media-section" aria-labelledby="media-ai-heading">
      <h3 id="media-ai-heading">AI alt text</h3>
      <Button className="st-button small" onPress={() => describe.mutate()} isDisabled={describe.isPending}>
        {describe.isPending ? "Describing…" : "Describe with AI"}
      </Button>
      {describe.isError ? (
        <p role="alert" className="alert error">
          {messageOf(describe.error)}
        </p>
      ) : null}
      {accept.isError ? (
        <p role="alert" className="alert error">
          {messageOf(accept.error)}
        </p>
      ) : null}
      {drafts.length > 0 ? (
        <ul className="media-drafts">
          {drafts.map(([loc, text]) => (
            <li key={loc}>
              <fieldset className="media-draft">
                <legend className="visually-hidden">AI draft ({loc})</legend>
                <p>
                  <span className="muted">Draft ({loc}), to review: </span>
                  {text}
                </p>
                <Button className="st-button small" onPress={() => accept.mutate(loc)} isDisabled={accept.isPending}>
                  Accept
                </Button>
              </fieldset>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function References({ slug, id }: { slug: string; id: string }) {
  const refs = useQuery({ queryKey: mediaKeys.references(slug, id), queryFn: () => mediaReferences(slug, id), staleTime: 5_000 });
  return (
    <section className="media-section" aria-labelledby="media-refs-heading">
      <h3 id="media-refs-heading">Used by</h3>
      {refs.isPending ? <p className="muted">Loading…</p> : null}
      {refs.isError ? (
        <p role="alert" className="alert error">
          {messageOf(refs.error)}
        </p>
      ) : null}
      {refs.data && refs.data.length === 0 ? <p className="muted">No content uses this file.</p> : null}
      {refs.data && refs.data.length > 0 ? <NodeLinks slug={slug} nodes={refs.data} /> : null}
    </section>
  );
}

function NodeLinks({ slug, nodes }: { slug: string; nodes: MediaReference[] }) {
  return (
    <ul className="media-refs">
      {nodes.map((n) => (
        <li key={n.id}>
          <Link to="/p/$slug/nodes/$id" params={{ slug, id: n.id }}>
            {n.title}
          </Link>{" "}
          <span className="path muted">{n.path}</span>
        </li>
      ))}
    </ul>
  );
}

function DeleteSection({ slug, item, onDeleted }: { slug: string; item: MediaItem; onDeleted: () => void }) {
  const qc = useQueryClient();
  const refs = useQuery({ queryKey: mediaKeys.references(slug, item.id), queryFn: () => mediaReferences(slug, item.id), staleTime: 5_000 });
  const [asking, setAsking] = useState(false);
  const [refused, setRefused] = useState<MediaReference[] | null>(null);
  const remove = useMutation({
    mutationFn: (force: boolean) => deleteMedia(slug, item.id, force),
    onSuccess: () => {
      qc.removeQueries({ queryKey: mediaKeys.item(slug, item.id) });
      void qc.invalidateQueries({ queryKey: [...mediaKeys.all(slug), "list"] });
      onDeleted();
    },
    onError: (err) => {
      // Refused because content uses it (perhaps since the panel opened): the server names the nodes.
      if (err instanceof ApiError && err.status === 409 && Array.isArray(err.details?.nodes)) setRefused(err.details.nodes as MediaReference[]);
    },
  });
  const users = refused ?? refs.data ?? [];
  return (
    <section className="media-section media-delete" aria-labelledby="media-delete-heading">
      <h3 id="media-delete-heading" className="visually-hidden">
        Delete
      </h3>
      {!asking && !refused ? (
        <Button className="st-button danger small" onPress={() => setAsking(true)}>
          Delete
        </Button>
      ) : (
        <div className="media-confirm" role="alert">
          {users.length > 0 ? (
            <>
              <p>
                <strong>
                  {refused ? "Not deleted: " : ""}
                  {users.length === 1 ? "1 page uses" : `${users.length} pages use`} this file.
                </strong>{" "}
                Deleting it anyway leaves {users.length === 1 ? "that reference" : "those references"} pointing at nothing (delivery answers it as empty).
              </p>
              <NodeLinks slug={slug} nodes={users} />
            </>
          ) : (
            <p>Delete “{item.filename}” for good? This cannot be undone.</p>
          )}
          {remove.isError && !refused ? <p className="st-field-error">{messageOf(remove.error)}</p> : null}
          <div className="media-row">
            <Button
              className="st-button small"
              autoFocus
              onPress={() => {
                setAsking(false);
                setRefused(null);
                remove.reset();
              }}
            >
              Cancel
            </Button>
            {users.length > 0 ? (
              <Button className="st-button danger small" onPress={() => remove.mutate(true)} isDisabled={remove.isPending}>
                Delete anyway
              </Button>
            ) : (
              <Button className="st-button danger small" onPress={() => remove.mutate(false)} isDisabled={remove.isPending}>
                Delete file
              </Button>
            )}
          </div>
        </div>
      )}
    </section>
  );
}
