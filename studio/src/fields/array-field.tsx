// `array`: a group of items, each through the registry, with Add item and per item Remove item,
// Move item up and Move item down. Items are keyed by position: each item's fields subscribe to
// their own pointer, so after a move exactly the two swapped items re-render.
import { memo, type ReactNode, useRef } from "react";
import { useForm } from "../form/context";
import { childPointer } from "../form/pointer";
import { useFieldSelector } from "../form/store";
import { type FieldProps, HelpText, LabelText, UntranslatedBadge, useContainerMeta, ViolationText } from "./field-frame";
import { initialValue, isRecord, numberOf } from "./schema";

const lengthOf = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

export const ArrayField = memo(function ArrayField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const length = useFieldSelector(store, props.pointer, lengthOf);
  const meta = useContainerMeta(props);
  const group = useRef<HTMLDivElement>(null);
  const items = isRecord(props.schema.items) ? props.schema.items : {};
  const max = numberOf(props.schema, "maxItems");
  const editable = !meta.disabled;

  const current = (): unknown[] => {
    const v = store.get(props.pointer);
    return Array.isArray(v) ? v : [];
  };
  /** After the list changes, focus goes to `action` of item `index` (or the other move button, or Add item). */
  const focusAfter = (index: number, action: string): void => {
    requestAnimationFrame(() => {
      const root = group.current;
      const item = root?.querySelector(`:scope > .array-items > [data-index="${index}"]`);
      const target =
        item?.querySelector<HTMLButtonElement>(`:scope > .item-actions > [data-action="${action}"]:not(:disabled)`) ??
        item?.querySelector<HTMLButtonElement>(":scope > .item-actions > button:not(:disabled)");
      (target ?? root?.querySelector<HTMLButtonElement>(":scope > .array-add"))?.focus();
    });
  };
  const move = (from: number, to: number, action: string): void => {
    const list = current().slice();
    const [item] = list.splice(from, 1);
    list.splice(to, 0, item);
    store.set(props.pointer, list);
    focusAfter(to, action);
  };
  const remove = (index: number): void => {
    store.set(
      props.pointer,
      current().filter((_, i) => i !== index),
    );
    focusAfter(Math.min(index, length - 2), "remove");
  };
  const add = (): void => {
    store.set(props.pointer, [...current(), initialValue(items)]);
    requestAnimationFrame(() => {
      const last = group.current?.querySelector(`:scope > .array-items > [data-index="${length}"]`);
      last?.querySelector<HTMLElement>("input, textarea, [contenteditable='true'], button")?.focus();
    });
  };

  return (
    // biome-ignore lint/a11y/useSemanticElements: a group named by a span, like the block cards; a fieldset would nest legends in item fieldsets
    <div
      ref={group}
      role="group"
      className={meta.violation ? "array field-invalid" : "array"}
      data-pointer={props.pointer}
      aria-labelledby={meta.labelId}
      aria-describedby={meta.describedBy}
      tabIndex={meta.violation ? -1 : undefined}
    >
      <span className="fieldset-legend" id={meta.labelId}>
        <LabelText meta={meta} required={props.required} />
      </span>
      <UntranslatedBadge meta={meta} />
      <HelpText meta={meta} />
      <ViolationText meta={meta} />
      <div className="array-items">
        {Array.from({ length }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: items are addressed by position (their JSON Pointer)
          // biome-ignore lint/a11y/useSemanticElements: one item's group, named "<label> <n>", holding its buttons
          <div key={i} className="array-item" role="group" aria-label={`${meta.label} ${i + 1}`} data-index={i}>
            <props.Field schema={items} pointer={childPointer(props.pointer, i)} name={`${meta.label} ${i + 1}`} required={false} inTranslatable={props.inTranslatable} />
            {editable ? (
              <div className="item-actions">
                <button type="button" className="button button-small" data-action="up" disabled={i === 0} onClick={() => move(i, i - 1, "up")}>
                  Move item up
                </button>
                <button type="button" className="button button-small" data-action="down" disabled={i === length - 1} onClick={() => move(i, i + 1, "down")}>
                  Move item down
                </button>
                <button type="button" className="button button-small button-danger" data-action="remove" onClick={() => remove(i)}>
                  Remove item
                </button>
              </div>
            ) : null}
          </div>
        ))}
      </div>
      {editable && (max === undefined || length < max) ? (
        <button type="button" className="button array-add" onClick={add}>
          Add item
        </button>
      ) : null}
    </div>
  );
});
