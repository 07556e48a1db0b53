// Everything of a node's form except Title and Slug: its fields from the node type's schema (or a
// JSON editor without one) and its blocks. The page holds the store; this component subscribes to
// nothing of the whole document, so a keystroke re-renders one field.
import "./form.css";
import { type JSX, type ReactNode, type RefObject, useEffect, useMemo, useRef, useState } from "react";
import { JsonField } from "../fields/json-field";
import { ObjectProperties } from "../fields/object-field";
import { hasTranslatable, propertiesOf } from "../fields/schema";
import { SchemaField } from "../fields/schema-field";
import { BlockList, type BlockTypeInfo } from "./block-list";
import { FormContext, type FormContextValue, useForm } from "./context";
import type { FormStore } from "./store";
import type { EditorDoc, JsonSchema, NodeOption } from "./types";
import { createViolationOwners, useOwnedViolation } from "./violations";

export interface NodeFormProps {
  store: FormStore;
  fieldsSchema: JsonSchema | null;
  blockTypes: Array<{ name: string; description: string; schema: JsonSchema }>;
  allowedBlocks: Array<{ type: string; min?: number; max?: number }> | null;
  readOnly: boolean;
  translation: { base: EditorDoc; locale: string } | null;
  searchNodes: (q: string) => Promise<NodeOption[]>;
  /** A node by id, for a node field's chosen node shown by title when the form opens; null when it does not exist. */
  lookupNode?: (id: string) => Promise<NodeOption | null>;
  focusViolations: number;
}

export function NodeForm(props: NodeFormProps): JSX.Element {
  const { store, readOnly } = props;
  const [owners] = useState(() => createViolationOwners(store));
  useEffect(() => owners.connect(), [owners]);
  const [nodeTitles] = useState(() => new Map<string, string>());
  // The page may pass a new function or translation object on each render; the form's context
  // changes only when what they mean changes, since every field reads the context.
  const search = useRef(props.searchNodes);
  search.current = props.searchNodes;
  const lookup = useRef(props.lookupNode);
  lookup.current = props.lookupNode;
  const base = props.translation?.base ?? null;
  const locale = props.translation?.locale ?? null;
  const context = useMemo<FormContextValue>(
    () => ({
      store,
      readOnly,
      translation: base && locale !== null ? { base, locale } : null,
      searchNodes: (q) => search.current(q),
      lookupNode: (id) => lookup.current?.(id) ?? Promise.resolve(null),
      owners,
      nodeTitles,
    }),
    [store, readOnly, base, locale, owners, nodeTitles],
  );
  const blockTypes = useMemo<BlockTypeInfo[]>(
    () => props.blockTypes.map((t) => ({ ...t, title: typeof t.schema.title === "string" && t.schema.title !== "" ? t.schema.title : t.name })),
    [props.blockTypes],
  );
  const root = useRef<HTMLDivElement>(null);
  useFocusViolations(root, props.focusViolations);

  return (
    <FormContext.Provider value={context}>
      <div className={readOnly ? "node-form node-form-readonly" : "node-form"} ref={root}>
        {context.translation ? <p className="translation-note">Translating into {context.translation.locale}: only translatable fields are shown, each with its base value.</p> : null}
        <FieldsSection schema={props.fieldsSchema} />
        <BlockList blockTypes={blockTypes} allowedBlocks={props.allowedBlocks} />
      </div>
    </FormContext.Provider>
  );
}

function FieldsSection({ schema }: { schema: JsonSchema | null }): ReactNode {
  const form = useForm();
  const violation = useOwnedViolation(form.owners, schema ? "/fields" : null);
  let body: ReactNode;
  if (form.translation !== null && !(schema && hasTranslatable(schema))) body = <p className="field-help">Nothing in this node type's fields is translatable.</p>;
  else if (!schema) body = <JsonField schema={{}} pointer="/fields" name="Fields" required={false} inTranslatable={false} Field={SchemaField} />;
  else if (propertiesOf(schema).length === 0) body = <p className="field-help">This node type has no fields.</p>;
  else body = <ObjectProperties schema={schema} pointer="/fields" inTranslatable={false} Field={SchemaField} />;
  return (
    <section className="form-section" aria-labelledby="fields-heading" data-pointer="/fields" tabIndex={violation ? -1 : undefined} aria-describedby={violation ? "fields-error" : undefined}>
      <h2 className="form-section-title" id="fields-heading">
        Fields
      </h2>
      {violation ? (
        <p className="field-error" id="fields-error">
          Error: {violation}
        </p>
      ) : null}
      {body}
    </section>
  );
}

const CONTROLS = "input:not([type=hidden]), textarea, select, button, [contenteditable=true], [role=textbox]";

/** The control inside a field that takes the focus; a fieldset, array, block or section takes it itself. */
function focusTarget(owner: HTMLElement): HTMLElement {
  if (!owner.classList.contains("field")) return owner;
  for (const el of owner.querySelectorAll<HTMLElement>(CONTROLS)) {
    if (el.closest("[aria-hidden=true]") || (el as HTMLInputElement).disabled) continue;
    return el;
  }
  return owner;
}

/**
 * When `signal` changes, the control of the first violation in the form (in reading order) takes the
 * focus. The page sets the violations and the signal together; their text renders a frame or two later.
 */
function useFocusViolations(root: RefObject<HTMLElement | null>, signal: number): void {
  const seen = useRef(signal);
  useEffect(() => {
    if (seen.current === signal) return;
    seen.current = signal;
    let frames = 0;
    let raf = 0;
    const tick = (): void => {
      const error = root.current?.querySelector<HTMLElement>(".field-error");
      if (!error && frames++ < 10) {
        raf = requestAnimationFrame(tick);
        return;
      }
      const owner = error?.closest<HTMLElement>("[data-pointer]");
      if (!owner) return;
      const target = focusTarget(owner);
      target.scrollIntoView({ block: "center" });
      target.focus({ preventScroll: true });
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [signal, root]);
}
