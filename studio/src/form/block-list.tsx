// The Blocks section: one group per block ("hero 1"), its type's schema at /blocks/<i>/data, and
// Move up, Move down, Remove block and Add block. Blocks are keyed by position: each card
// subscribes to its own type only and its fields to their own pointers, so a keystroke re-renders
// one field, and a move re-renders the two cards that swapped. Moving and removing move whole
// block objects, so each keeps its `id` (the server keeps its translations by it).
import { memo, type ReactNode, useCallback, useId, useMemo, useRef } from "react";
import { Button, Menu, MenuItem, MenuTrigger, Popover, Text, useDrag, useDrop } from "react-aria-components";
import { ObjectProperties } from "../fields/object-field";
import { defaultsOf, hasTranslatable, propertiesOf } from "../fields/schema";
import { SchemaField } from "../fields/schema-field";
import { useForm } from "./context";
import { useFieldSelector } from "./store";
import type { EditorBlock, JsonSchema } from "./types";
import { useOwnedViolation } from "./violations";

export interface BlockTypeInfo {
  name: string;
  title: string;
  description: string;
  schema: JsonSchema;
}
interface Actions {
  move(from: number, to: number, action: "up" | "down" | "drag"): void;
  remove(index: number): void;
}

/** The list's shape (count and types): typing inside a block leaves it unchanged. */
const shapeOf = (v: unknown): string => (Array.isArray(v) ? `${v.length}:${v.map((b: EditorBlock) => b?.type ?? "").join("\u0000")}` : "0:");
const typesOfShape = (shape: string): string[] => (shape.startsWith("0:") ? [] : shape.slice(shape.indexOf(":") + 1).split("\u0000"));
const asString = (v: unknown): string => (typeof v === "string" ? v : "");
const DRAG_TYPE = "application/x-studio-block-index";

const focusables = "input:not([type=hidden]), textarea, select, button:not(:disabled), [contenteditable=true], [tabindex]:not([tabindex='-1'])";

export function BlockList({ blockTypes, allowedBlocks }: { blockTypes: BlockTypeInfo[]; allowedBlocks: Array<{ type: string; min?: number; max?: number }> | null }): ReactNode {
  const form = useForm();
  const { store } = form;
  const shape = useFieldSelector(store, "/blocks", shapeOf);
  const types = typesOfShape(shape);
  const list = useRef<HTMLDivElement>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const editable = !form.readOnly && form.translation === null;
  const byName = useMemo(() => new Map(blockTypes.map((t) => [t.name, t])), [blockTypes]);

  const blocks = useCallback((): EditorBlock[] => {
    const v = store.get("/blocks");
    return Array.isArray(v) ? (v as EditorBlock[]) : [];
  }, [store]);
  const card = useCallback((index: number): HTMLElement | null => list.current?.querySelector<HTMLElement>(`:scope > [data-block-index="${index}"]`) ?? null, []);

  const actions = useMemo<Actions>(
    () => ({
      move(from, to, action) {
        const next = blocks().slice();
        const [moved] = next.splice(from, 1);
        if (!moved || to < 0 || to > next.length) return;
        next.splice(to, 0, moved);
        store.set("/blocks", next);
        if (action === "drag") return;
        // The moved block's same button keeps the focus; at the top or bottom, its other move button.
        requestAnimationFrame(() => {
          const header = card(to)?.querySelector(":scope > .block-header");
          const same = header?.querySelector<HTMLButtonElement>(`[data-action="${action}"]:not(:disabled)`);
          (same ?? header?.querySelector<HTMLButtonElement>(`[data-action="${action === "up" ? "down" : "up"}"]`))?.focus();
        });
      },
      remove(index) {
        const next = blocks().filter((_, i) => i !== index);
        store.set("/blocks", next);
        // Focus goes to the block that took its place, else Add block, else the block before.
        requestAnimationFrame(() => (card(index) ?? addButton.current ?? card(index - 1))?.focus());
      },
    }),
    [store, blocks, card],
  );

  const allowed: Array<{ type: string; min?: number; max?: number }> = allowedBlocks ?? blockTypes.map((t) => ({ type: t.name }));
  const count = (type: string): number => types.filter((t) => t === type).length;
  const addable = allowed.filter((a) => a.max === undefined || count(a.type) < a.max);
  const below = allowed.filter((a) => a.min !== undefined && count(a.type) < a.min);

  const add = (type: string): void => {
    const info = byName.get(type);
    const index = blocks().length;
    store.set("/blocks", [...blocks(), { type, data: info ? defaultsOf(info.schema) : {} }]);
    // After the menu has closed and given the focus back to its button, the new block takes it.
    setTimeout(() => {
      const target = card(index);
      (target?.querySelector<HTMLElement>(`:scope > .block-body :is(${focusables})`) ?? target)?.focus();
      target?.scrollIntoView({ block: "nearest" });
    }, 60);
  };

  const violation = useOwnedViolation(form.owners, "/blocks");
  return (
    <section className="form-section blocks" aria-labelledby="blocks-heading" data-pointer="/blocks" tabIndex={violation ? -1 : undefined} aria-describedby={violation ? "blocks-error" : undefined}>
      <h2 className="form-section-title" id="blocks-heading">
        Blocks
      </h2>
      {violation ? (
        <p className="field-error" id="blocks-error">
          Error: {violation}
        </p>
      ) : null}
      {types.length === 0 ? <p className="field-help">No blocks yet.</p> : null}
      <div className="block-list" ref={list}>
        {types.map((type, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: blocks are addressed by position (their JSON Pointer)
          <BlockCard key={i} index={i} isLast={i === types.length - 1} info={byName.get(type) ?? null} editable={editable} actions={actions} />
        ))}
      </div>
      {below.map((a) => (
        <p key={a.type} className="field-help blocks-min">
          {byName.get(a.type)?.title ?? a.type}: at least {a.min} ({count(a.type)} now)
        </p>
      ))}
      {editable ? (
        <MenuTrigger>
          <Button ref={addButton} className="button" isDisabled={addable.length === 0}>
            Add block
          </Button>
          <Popover className="popover">
            <Menu className="menu" onAction={(key) => add(String(key))}>
              {addable.map((a) => (
                <MenuItem key={a.type} id={a.type} className="menu-item" textValue={byName.get(a.type)?.title ?? a.type}>
                  <Text slot="label">{byName.get(a.type)?.title ?? a.type}</Text>
                  {byName.get(a.type)?.description ? (
                    <Text slot="description" className="menu-item-description">
                      {byName.get(a.type)?.description}
                    </Text>
                  ) : null}
                </MenuItem>
              ))}
            </Menu>
          </Popover>
        </MenuTrigger>
      ) : null}
      {editable && addable.length === 0 && allowed.length > 0 ? <p className="field-help">Every allowed block type has reached its maximum.</p> : null}
    </section>
  );
}

interface CardProps {
  index: number;
  isLast: boolean;
  info: BlockTypeInfo | null;
  editable: boolean;
  actions: Actions;
}

const BlockCard = memo(function BlockCard({ index, isLast, info, editable, actions }: CardProps): ReactNode {
  const form = useForm();
  const pointer = `/blocks/${index}`;
  const type = useFieldSelector(form.store, `${pointer}/type`, asString);
  const title = info?.title ?? type;
  const name = `${title} ${index + 1}`;
  const own = useOwnedViolation(form.owners, pointer);
  // With a schema the card shows what no field inside owns; without one the JSON editor owns /data.
  const data = useOwnedViolation(form.owners, info ? `${pointer}/data` : null);
  const violation = [own, data].filter((x) => x !== null).join("; ") || null;
  const ref = useRef<HTMLDivElement>(null);
  const { dropProps, isDropTarget } = useDrop({
    ref,
    isDisabled: !editable,
    getDropOperation: (types) => (types.has(DRAG_TYPE) ? "move" : "cancel"),
    async onDrop(e) {
      for (const item of e.items) {
        if (item.kind !== "text" || !item.types.has(DRAG_TYPE)) continue;
        const from = Number(await item.getText(DRAG_TYPE));
        if (Number.isInteger(from) && from !== index) actions.move(from, index, "drag");
      }
    },
  });
  const id = useId();
  const headingId = `${id}-heading`;
  const errorId = `${id}-error`;
  return (
    // biome-ignore lint/a11y/useSemanticElements: the card's name is its header (with buttons), which a fieldset's legend should not hold
    <div
      ref={ref}
      {...dropProps}
      role="group"
      aria-labelledby={headingId}
      aria-describedby={violation ? errorId : undefined}
      tabIndex={-1}
      className={`block${isDropTarget ? " block-drop-target" : ""}${violation ? " field-invalid" : ""}`}
      data-block-index={index}
      data-pointer={pointer}
    >
      <div className="block-header">
        {editable ? <DragHandle index={index} name={name} /> : null}
        <h3 className="block-title" id={headingId}>
          {name}
        </h3>
        {editable ? (
          <div className="block-actions">
            <button type="button" className="button button-small" data-action="up" disabled={index === 0} onClick={() => actions.move(index, index - 1, "up")}>
              Move up
            </button>
            <button type="button" className="button button-small" data-action="down" disabled={isLast} onClick={() => actions.move(index, index + 1, "down")}>
              Move down
            </button>
            <button type="button" className="button button-small button-danger" data-action="remove" onClick={() => actions.remove(index)}>
              Remove block
            </button>
          </div>
        ) : null}
      </div>
      {info?.description ? <p className="field-help block-description">{info.description}</p> : null}
      {violation ? (
        <p className="field-error" id={errorId}>
          Error: {violation}
        </p>
      ) : null}
      <div className="block-body">
        <BlockBody pointer={pointer} info={info} />
      </div>
    </div>
  );
});

function BlockBody({ pointer, info }: { pointer: string; info: BlockTypeInfo | null }): ReactNode {
  const form = useForm();
  if (form.translation !== null && !(info && hasTranslatable(info.schema))) return <p className="field-help">Nothing in this block is translatable.</p>;
  if (!info) return <SchemaField schema={{}} pointer={`${pointer}/data`} name="Data" required={false} inTranslatable={false} />;
  if (propertiesOf(info.schema).length === 0) return <p className="field-help">This block type has no fields.</p>;
  return <ObjectProperties schema={info.schema} pointer={`${pointer}/data`} inTranslatable={false} Field={SchemaField} />;
}

/** Drag with a pointer, or press Enter on it and pick a block to drop on (React Aria's keyboard drag). */
function DragHandle({ index, name }: { index: number; name: string }): ReactNode {
  const { dragProps, isDragging } = useDrag({
    getItems: () => [{ [DRAG_TYPE]: String(index), "text/plain": name }],
    getAllowedDropOperations: () => ["move"],
  });
  return (
    <button type="button" {...dragProps} aria-label="Drag to reorder" className={isDragging ? "drag-handle dragging" : "drag-handle"}>
      <span aria-hidden="true">⠿</span>
    </button>
  );
}
