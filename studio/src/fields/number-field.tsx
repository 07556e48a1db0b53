// `number` and `integer`: a NumberField (arrow keys step; integers step by 1 and show no fraction).
import { memo, type ReactNode } from "react";
import { NumberField as AriaNumberField, Input, Label } from "react-aria-components";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";
import { numberOf, typeOf } from "./schema";

export const NumberField = memo(function NumberField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const meta = useFieldMeta(props);
  const integer = typeOf(props.schema) === "integer";
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <AriaNumberField
        className="field-control"
        value={typeof value === "number" ? value : Number.NaN}
        onChange={(n) => setValue(Number.isNaN(n) ? undefined : n)}
        minValue={numberOf(props.schema, "minimum")}
        maxValue={numberOf(props.schema, "maximum")}
        step={integer ? 1 : numberOf(props.schema, "multipleOf")}
        formatOptions={integer ? { maximumFractionDigits: 0, useGrouping: false } : { maximumFractionDigits: 20, useGrouping: false }}
        isReadOnly={meta.disabled}
        isInvalid={meta.violation !== null}
        isRequired={props.required}
        validationBehavior="aria"
        aria-describedby={meta.describedBy}
      >
        <Label className="field-label">
          <LabelText meta={meta} required={props.required} />
        </Label>
        <Input className="input input-number" />
      </AriaNumberField>
    </FieldFrame>
  );
});
