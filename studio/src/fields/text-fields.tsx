// Text boxes: plain strings (with a live counter under `maxLength`) and `uri`.
import { memo, type ReactNode } from "react";
import { Input, Label, TextField } from "react-aria-components";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";
import { numberOf } from "./schema";

const asText = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));

function TextBox({ props, type, note }: { props: FieldProps; type: "text" | "url"; note?: string }): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const max = numberOf(props.schema, "maxLength");
  const extra = [max !== undefined ? "counter" : null, note ? "note" : null].filter((x) => x !== null);
  const meta = useFieldMeta(props, ...extra);
  const text = asText(value);
  const length = [...text].length;
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <TextField
        className="field-control"
        value={text}
        onChange={setValue}
        type={type}
        isReadOnly={meta.disabled}
        isInvalid={meta.violation !== null}
        isRequired={props.required}
        validationBehavior="aria"
        aria-describedby={meta.describedBy}
      >
        <Label className="field-label">
          <LabelText meta={meta} required={props.required} />
        </Label>
        <Input className="input" />
      </TextField>
      {max !== undefined ? (
        <p className={length > max ? "field-counter field-counter-over" : "field-counter"} id={`${meta.id}-counter`}>
          {length} / {max}
        </p>
      ) : null}
      {note ? (
        <p className="field-help" id={`${meta.id}-note`}>
          {note}
        </p>
      ) : null}
    </FieldFrame>
  );
}

export const StringField = memo(function StringField(props: FieldProps): ReactNode {
  return <TextBox props={props} type="text" />;
});

export const UriField = memo(function UriField(props: FieldProps): ReactNode {
  return <TextBox props={props} type="url" />;
});
