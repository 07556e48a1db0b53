// A value rendered by the widget its schema chooses; objects and arrays recurse through it.
import { memo, type ReactNode } from "react";
import type { FieldProps } from "./field-frame";
import { widgetFor } from "./registry";

export const SchemaField = memo(function SchemaField(props: Omit<FieldProps, "Field">): ReactNode {
  const Widget = widgetFor(props.schema);
  return <Widget {...props} Field={SchemaField} />;
});
