// The fallback for a value without a usable schema: JSON in a monospace text area. Each change is
// parsed; text that is not JSON stays in the box with the parser's message and is not stored.
import { memo, type ReactNode, useEffect, useRef, useState } from "react";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";
import { isRecord } from "./schema";

const show = (v: unknown): string => (v === undefined ? "" : JSON.stringify(v, null, 2));

/** A node's `fields` and a block's `data` are objects; any other value there is refused. */
const wantsObject = (pointer: string): boolean => pointer === "/fields" || /^\/blocks\/[0-9]+\/data$/.test(pointer);

export const JsonField = memo(function JsonField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const [text, setText] = useState(() => show(value));
  const [problem, setProblem] = useState<string | null>(null);
  const written = useRef<unknown>(value);
  const meta = useFieldMeta(props, ...(problem ? ["syntax"] : []));

  useEffect(() => {
    if (value === written.current) return;
    written.current = value;
    setText(show(value));
    setProblem(null);
  }, [value]);

  const change = (next: string): void => {
    setText(next);
    if (next.trim() === "" && !wantsObject(props.pointer)) {
      setProblem(null);
      written.current = undefined;
      setValue(undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(next);
    } catch (e) {
      setProblem(`Not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    if (wantsObject(props.pointer) && !isRecord(parsed)) {
      setProblem("Not valid JSON: this must be a JSON object ({ … })");
      return;
    }
    setProblem(null);
    written.current = parsed;
    setValue(parsed);
  };

  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <label className="field-label" htmlFor={`${meta.id}-json`} id={meta.labelId}>
        <LabelText meta={meta} required={props.required} />
        <span className="field-kind"> (JSON)</span>
      </label>
      <textarea
        id={`${meta.id}-json`}
        className="input json-editor"
        value={text}
        onChange={(e) => change(e.currentTarget.value)}
        readOnly={meta.disabled}
        spellCheck={false}
        rows={Math.min(16, Math.max(3, text.split("\n").length))}
        aria-invalid={meta.violation !== null || problem !== null ? true : undefined}
        aria-describedby={meta.describedBy}
      />
      {problem ? (
        <p className="field-error" id={`${meta.id}-syntax`} aria-live="polite">
          {problem}
        </p>
      ) : null}
    </FieldFrame>
  );
});
