// The project's media as a virtualised grid (React Aria's GridList in a Virtualizer with a
// GridLayout: only the tiles in view are in the DOM, so 10,000 items cost what 30 do). The grid has
// a row for every item the search matches from the first answer on (its scrollbar is the whole
// library's), and reads the pages of the rows in view (slots.ts); search by name (q), a type
// filter, Upload (several files) and several files dropped on the grid at once. Used by the media
// screen and by the Choose media dialog (`onAction` opens or picks an item).
import { useEffect, useId, useState } from "react";
import { Collection, DropZone, GridLayout, GridList, GridListItem, Input, Label, SearchField, Size, Text, Virtualizer } from "react-aria-components";
import { messageOf } from "../app/api";
import { SelectField } from "../app/SelectField";
import { altIn, fileUrl, formatBytes, isRaster, type MediaItem } from "./api";
import { type Slot, useMediaSlots } from "./slots";
import { UploadList, useUploads } from "./uploads";

/** Typing waits this long after the last keystroke, so a word makes one request. */
const SEARCH_DELAY_MS = 250;
/** The tile's thumbnail width: one of the service's MEDIA_WIDTHS. */
const THUMB_WIDTH = 320;

const TYPES = [
  ["", "All types"],
  ["image", "Images"],
  ["image/svg+xml", "SVG"],
  ["application/pdf", "PDF"],
] as const;

const layoutOptions = { minItemSize: new Size(150, 196), maxItemSize: new Size(220, 196), minSpace: new Size(12, 12), preserveAspectRatio: false, loaderHeight: 48 };

export interface MediaLibraryProps {
  slug: string;
  /** The grid's accessible name. */
  label: string;
  canUpload: boolean;
  /** Enter or a click on a tile. */
  onAction: (item: MediaItem) => void;
  locale?: string;
  defaultLocale?: string;
  /** A smaller grid (inside a dialog). */
  compact?: boolean;
}

export function MediaLibrary({ slug, label, canUpload, onAction, locale, defaultLocale, compact }: MediaLibraryProps) {
  const [typed, setTyped] = useState("");
  const [q, setQ] = useState("");
  const [type, setType] = useState("");
  const { uploads, add, clearFinished } = useUploads(slug);
  const inputId = useId();
  const countId = useId();

  useEffect(() => {
    const timer = setTimeout(() => setQ(typed.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [typed]);

  const list = useMediaSlots(slug, q, type);
  const { slots, total } = list;

  return (
    <div className={compact ? "media-library compact" : "media-library"}>
      <div className="media-toolbar">
        <SearchField className="st-field media-search" value={typed} onChange={setTyped} aria-describedby={countId}>
          <Label>Search media</Label>
          <Input placeholder="File name, title or alt text" />
        </SearchField>
        <SelectField label="Type" className="st-field select media-type" options={TYPES} value={type} onChange={setType} />
        {canUpload ? (
          <div className="media-upload-trigger">
            <input
              id={inputId}
              className="media-file-input"
              type="file"
              multiple
              onChange={(e) => {
                const files = [...(e.currentTarget.files ?? [])];
                e.currentTarget.value = "";
                if (files.length > 0) add(files);
              }}
            />
            <label className="st-button primary media-upload-label" htmlFor={inputId}>
              Upload
            </label>
          </div>
        ) : null}
      </div>
      <p className="media-count muted" id={countId} role="status">
        {list.isPending ? "Loading media…" : `${total.toLocaleString("en")} ${total === 1 ? "file" : "files"}${q ? ` matching “${q}”` : ""}`}
      </p>
      {list.error ? (
        <p role="alert" className="alert error">
          {messageOf(list.error)}
        </p>
      ) : null}
      <UploadList uploads={uploads} onClear={clearFinished} />
      <DropZone
        className="media-dropzone"
        aria-label="Drop zone"
        isDisabled={!canUpload}
        getDropOperation={() => (canUpload ? "copy" : "cancel")}
        onDrop={async (e) => {
          const files = await Promise.all(e.items.filter((i) => i.kind === "file").map((i) => i.getFile()));
          if (files.length > 0) add(files);
        }}
      >
        <Text slot="label" className="visually-hidden">
          Drop files here to add them to the library
        </Text>
        <Virtualizer layout={GridLayout} layoutOptions={layoutOptions}>
          <GridList
            className="media-grid"
            layout="grid"
            aria-label={label}
            aria-describedby={countId}
            onAction={(key) => {
              const item = slots[Number(key)]?.item;
              if (item) onAction(item);
            }}
            renderEmptyState={() => (
              <p className="media-empty muted">{list.isPending ? "Loading…" : q || type ? "No media matches." : canUpload ? "No media yet: upload files or drop them here." : "No media yet."}</p>
            )}
          >
            {/* The rows are cached per slot object: what else a tile shows is named here. */}
            <Collection items={slots} dependencies={[total, locale, defaultLocale, list.need]}>
              {(slot) => (slot.item ? <MediaTile slot={slot} item={slot.item} alt={altIn(slot.item, locale, defaultLocale)} /> : <PendingTile slot={slot} total={total} need={list.need} />)}
            </Collection>
          </GridList>
        </Virtualizer>
      </DropZone>
    </div>
  );
}

function MediaTile({ slot, item, alt }: { slot: Slot; item: MediaItem; alt: string }) {
  const dims = item.width && item.height ? `${item.width} × ${item.height}` : null;
  return (
    <GridListItem id={slot.id} textValue={item.filename} className="media-tile">
      <div className="media-thumb">
        {item.type.startsWith("image/") ? (
          <img src={fileUrl(item, THUMB_WIDTH)} alt="" loading="lazy" decoding="async" draggable={false} />
        ) : (
          <span className="media-thumb-kind" aria-hidden="true">
            {item.type === "application/pdf" ? "PDF" : item.type}
          </span>
        )}
      </div>
      <span className="media-tile-name">{item.filename}</span>
      <span className="media-tile-meta">
        {isRaster(item.type) || item.type === "image/svg+xml" ? item.type.replace("image/", "").toUpperCase() : item.type === "application/pdf" ? "PDF" : item.type} · {formatBytes(item.size)}
        {dims ? ` · ${dims}` : ""}
      </span>
      {alt ? <span className="media-tile-alt">Alt: {alt}</span> : <span className="media-tile-alt missing">No alt text</span>}
    </GridListItem>
  );
}

/** A tile whose page is not read yet: drawn only in view, it asks for its page. */
function PendingTile({ slot, total, need }: { slot: Slot; total: number; need: (index: number) => void }) {
  const text = `Loading file ${(slot.id + 1).toLocaleString("en")} of ${total.toLocaleString("en")}…`;
  return (
    <GridListItem id={slot.id} textValue={text} className="media-tile pending">
      <AskForPage index={slot.id} need={need} />
      <div className="media-thumb" aria-hidden="true" />
      <span className="media-tile-name muted">{text}</span>
    </GridListItem>
  );
}

/** Mounted only when its tile is drawn (the collection builds rows without rendering their content). */
function AskForPage({ index, need }: { index: number; need: (index: number) => void }) {
  useEffect(() => need(index), [index, need]);
  return null;
}
