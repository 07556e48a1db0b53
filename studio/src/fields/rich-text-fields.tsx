// `markdown` (CodeMirror 6) and `html` (TipTap 3): each editor is its own lazily loaded chunk,
// fetched when the first such field is rendered.
import { lazy, memo, type ReactNode, Suspense } from "react";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import type { EditorProps } from "./editor-props";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";

const MarkdownEditor = lazy(() => import("./markdown-editor").then((m) => ({ default: m.MarkdownEditor })));
const HtmlEditor = lazy(() => import("./html-editor").then((m) => ({ default: m.HtmlEditor })));

function RichTextField({ props, kind }: { props: FieldProps; kind: "markdown" | "html" }): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const meta = useFieldMeta(props);
  const editor: EditorProps = {
    value: typeof value === "string" ? value : "",
    onChange: setValue,
    labelId: meta.labelId,
    describedBy: meta.describedBy,
    invalid: meta.violation !== null,
    required: props.required,
    readOnly: meta.disabled,
  };
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <span className="field-label" id={meta.labelId}>
        <LabelText meta={meta} required={props.required} />
        <span className="field-kind"> ({kind === "markdown" ? "Markdown" : "rich text"})</span>
      </span>
      <Suspense
        fallback={
          <p className="editor-loading" role="status">
            Loading the editor…
          </p>
        }
      >
        {kind === "markdown" ? <MarkdownEditor {...editor} /> : <HtmlEditor {...editor} />}
      </Suspense>
    </FieldFrame>
  );
}

export const MarkdownField = memo(function MarkdownField(props: FieldProps): ReactNode {
  return <RichTextField props={props} kind="markdown" />;
});

export const HtmlField = memo(function HtmlField(props: FieldProps): ReactNode {
  return <RichTextField props={props} kind="html" />;
});
