// `color`: the browser's colour picker beside a text box for the hex value; both write the same value.
import { memo, type ReactNode } from "react";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";

const HEX6 = /^#[0-9a-fA-F]{6}$/;
const HEX3 = /^#([0-9a-fA-F])([0-9a-fA-F])([0-9a-fA-F])$/;

/** The native picker takes only #rrggbb; a short or other value shows as the nearest it can. */
function pickerValue(text: string): string {
  if (HEX6.test(text)) return text.toLowerCase();
  const short = HEX3.exec(text);
  return short ? `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`.toLowerCase() : "#000000";
}

export const ColorField = memo(function ColorField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const meta = useFieldMeta(props);
  const text = typeof value === "string" ? value : "";
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <label className="field-label" id={meta.labelId} htmlFor={`${meta.id}-hex`}>
        <LabelText meta={meta} required={props.required} />
      </label>
      <div className="color-row">
        <input
          type="color"
          className="color-swatch"
          value={pickerValue(text)}
          onChange={(e) => setValue(e.currentTarget.value)}
          disabled={meta.disabled}
          aria-label="Colour picker"
          aria-describedby={meta.labelId}
        />
        <input
          id={`${meta.id}-hex`}
          type="text"
          className="input input-hex"
          value={text}
          onChange={(e) => setValue(e.currentTarget.value)}
          readOnly={meta.disabled}
          spellCheck={false}
          placeholder="#rrggbb"
          aria-invalid={meta.violation !== null ? true : undefined}
          aria-required={props.required ? true : undefined}
          aria-describedby={meta.describedBy}
        />
      </div>
    </FieldFrame>
  );
});
