// What every field shows around its control: help text, the violation, and in translation mode the
// base value and whether it is translated; plus the ids the control points at with aria-describedby.
import { type ReactNode, useId } from "react";
import { AgentBadge, useAgentMark } from "../editorial/agent-marks";
import { type FieldState, FieldStateBadge, useFieldState } from "../editorial/field-status";
import { useForm } from "../form/context";
import { getIn, parsePointer } from "../form/pointer";
import { useFieldSelector } from "../form/store";
import type { JsonSchema } from "../form/types";
import { useOwnedViolation } from "../form/violations";
import { descriptionOf, formatOf, labelOf, plainText } from "./schema";

export interface FieldProps {
  schema: JsonSchema;
  pointer: string;
  /** The property name; the label when the schema has no `title`. */
  name: string;
  required: boolean;
  /** In translation mode: this field is a translatable property or inside one, so it is editable. */
  inTranslatable: boolean;
  /** The component that renders a nested schema (objects and arrays recurse through it). */
  Field: FieldComponent;
}
export type FieldComponent = (props: Omit<FieldProps, "Field">) => ReactNode;

export interface FieldMeta {
  id: string;
  labelId: string;
  label: string;
  help: string | null;
  violation: string | null;
  /** Ids for the control's aria-describedby (help, violation, base value), or undefined. */
  describedBy: string | undefined;
  disabled: boolean;
  untranslated: boolean;
  base: { value: unknown; locale: string } | null;
  /** The agent whose change to this field no person has saved over yet (its badge is `${id}-agent`), or null. */
  agent: string | null;
  /** In translation mode: the translated field's state (its badge is `${id}-state`), or null. */
  state: FieldState | null;
}

const isUnset = (v: unknown): boolean => v === undefined;

/** `extra`: id suffixes of more describing elements the widget renders itself (a counter: `${meta.id}-counter`). */
export function useFieldMeta(props: FieldProps, ...extra: string[]): FieldMeta {
  return useMeta(props, extra, false);
}

/** An object's or array's meta: the base value shows beside each leaf inside, not on the container. */
export function useContainerMeta(props: FieldProps): FieldMeta {
  return useMeta(props, [], true);
}

function useMeta(props: FieldProps, extra: string[], container: boolean): FieldMeta {
  const form = useForm();
  const id = useId();
  const violation = useOwnedViolation(form.owners, props.pointer);
  const unset = useFieldSelector(form.store, props.pointer, isUnset);
  const help = descriptionOf(props.schema);
  const base = form.translation && !container ? { value: getIn(form.translation.base, parsePointer(props.pointer)), locale: form.translation.locale } : null;
  const untranslated = form.translation !== null && unset;
  const agent = useAgentMark(props.pointer);
  const state = useFieldState(props.pointer);
  const shownState = !container && (state === "machine" || state === "needs_review" || state === "stale") ? state : null;
  const ids = [
    agent && !container ? `${id}-agent` : null,
    shownState ? `${id}-state` : null,
    help ? `${id}-help` : null,
    ...extra.map((suffix) => `${id}-${suffix}`),
    violation ? `${id}-error` : null,
    untranslated ? `${id}-untranslated` : null,
    base ? `${id}-base` : null,
  ].filter((x) => x !== null);
  return {
    id,
    labelId: `${id}-label`,
    label: labelOf(props.schema, props.name),
    help,
    violation,
    describedBy: ids.length > 0 ? ids.join(" ") : undefined,
    disabled: form.readOnly || (form.translation !== null && !props.inTranslatable),
    untranslated,
    base,
    agent: container ? null : agent,
    state: shownState,
  };
}

/** The required mark is hidden from assistive technology: the control says aria-required itself. */
export function LabelText({ meta, required }: { meta: FieldMeta; required: boolean }): ReactNode {
  return (
    <>
      {meta.label}
      {required ? (
        <span className="field-required" aria-hidden="true">
          {" "}
          *
        </span>
      ) : null}
    </>
  );
}

export function HelpText({ meta }: { meta: FieldMeta }): ReactNode {
  return meta.help ? (
    <p className="field-help" id={`${meta.id}-help`}>
      {meta.help}
    </p>
  ) : null;
}

export function ViolationText({ meta }: { meta: FieldMeta }): ReactNode {
  return meta.violation ? (
    <p className="field-error" id={`${meta.id}-error`}>
      Error: {meta.violation}
    </p>
  ) : null;
}

export function UntranslatedBadge({ meta }: { meta: FieldMeta }): ReactNode {
  return meta.untranslated ? (
    <span className="badge badge-untranslated" id={`${meta.id}-untranslated`}>
      Not translated
    </span>
  ) : null;
}

function BaseValue({ meta, schema }: { meta: FieldMeta; schema: JsonSchema }): ReactNode {
  if (!meta.base) return null;
  return (
    <div className="field-base" id={`${meta.id}-base`}>
      <span className="field-base-label">Base value: </span>
      <span className="field-base-text">{plainText(meta.base.value, formatOf(schema))}</span>
    </div>
  );
}

/** A leaf field: the control (with its label), then help, the violation and the base value. */
export function FieldFrame({ meta, pointer, schema, children }: { meta: FieldMeta; pointer: string; schema: JsonSchema; children: ReactNode }): ReactNode {
  return (
    <div className={meta.violation ? "field field-invalid" : "field"} data-pointer={pointer}>
      {children}
      <AgentBadge agent={meta.agent} id={`${meta.id}-agent`} />
      <FieldStateBadge state={meta.state} id={`${meta.id}-state`} />
      <UntranslatedBadge meta={meta} />
      <HelpText meta={meta} />
      <ViolationText meta={meta} />
      <BaseValue meta={meta} schema={schema} />
    </div>
  );
}
