// `object`: a fieldset whose legend is the label, with each property through the registry.
import { memo, type ReactNode } from "react";
import { useForm } from "../form/context";
import { childPointer } from "../form/pointer";
import type { JsonSchema } from "../form/types";
import { type FieldComponent, type FieldProps, HelpText, LabelText, UntranslatedBadge, useContainerMeta, ViolationText } from "./field-frame";
import { hasTranslatable, propertiesOf, requiredOf, typeOf } from "./schema";

interface PropertiesProps {
  schema: JsonSchema;
  pointer: string;
  inTranslatable: boolean;
  Field: FieldComponent;
}

/**
 * The properties of an object schema. In translation mode only what a translation may set is shown:
 * a `translatable: true` property (all of it), or a nested object that has one inside.
 */
export function ObjectProperties({ schema, pointer, inTranslatable, Field }: PropertiesProps): ReactNode {
  const form = useForm();
  const required = requiredOf(schema);
  return propertiesOf(schema).map(([name, sub]) => {
    let editable = inTranslatable;
    if (form.translation !== null && !inTranslatable) {
      if (sub.translatable === true) editable = true;
      else if (!(typeOf(sub) === "object" && hasTranslatable(sub))) return null;
    }
    return <Field key={name} schema={sub} pointer={childPointer(pointer, name)} name={name} required={required.has(name)} inTranslatable={editable} />;
  });
}

export const ObjectField = memo(function ObjectField(props: FieldProps): ReactNode {
  const meta = useContainerMeta(props);
  return (
    <fieldset
      className={meta.violation ? "fieldset field-invalid" : "fieldset"}
      data-pointer={props.pointer}
      aria-describedby={meta.describedBy}
      aria-invalid={meta.violation ? true : undefined}
      tabIndex={meta.violation ? -1 : undefined}
    >
      <legend className="fieldset-legend">
        <LabelText meta={meta} required={props.required} />
      </legend>
      <UntranslatedBadge meta={meta} />
      <HelpText meta={meta} />
      <ViolationText meta={meta} />
      <ObjectProperties schema={props.schema} pointer={props.pointer} inTranslatable={props.inTranslatable} Field={props.Field} />
    </fieldset>
  );
});
