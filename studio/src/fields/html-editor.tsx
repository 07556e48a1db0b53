// TipTap 3 for `html`. The editor's HTML is the stored value; TipTap parses it with DOMParser into
// its own schema (nothing outside the schema survives) and injects no CSS (form.css styles .ProseMirror).
import { EditorContent, useEditor } from "@tiptap/react";
import StarterKit from "@tiptap/starter-kit";
import { type ReactNode, useEffect, useRef } from "react";
import type { EditorProps } from "./editor-props";

function attributes(p: EditorProps): Record<string, string> {
  const attrs: Record<string, string> = {
    role: "textbox",
    "aria-multiline": "true",
    "aria-labelledby": p.labelId,
    "aria-invalid": p.invalid ? "true" : "false",
    class: "rich-text",
  };
  if (p.describedBy) attrs["aria-describedby"] = p.describedBy;
  if (p.required) attrs["aria-required"] = "true";
  if (p.readOnly) attrs["aria-readonly"] = "true";
  return attrs;
}

export function HtmlEditor(props: EditorProps): ReactNode {
  const latest = useRef(props);
  latest.current = props;
  const written = useRef(props.value);
  const editor = useEditor({
    extensions: [StarterKit.configure({ link: { openOnClick: false } })],
    content: props.value,
    injectCSS: false,
    editable: !props.readOnly,
    immediatelyRender: true,
    shouldRerenderOnTransaction: false,
    editorProps: { attributes: attributes(props) },
    onUpdate: ({ editor: e }) => {
      const html = e.getHTML();
      written.current = html;
      latest.current.onChange(html);
    },
  });

  useEffect(() => {
    if (props.value === written.current) return;
    written.current = props.value;
    editor.commands.setContent(props.value, { emitUpdate: false });
  }, [editor, props.value]);

  const { labelId, describedBy, invalid, required, readOnly } = props;
  useEffect(() => {
    editor.setEditable(!readOnly, false);
    editor.setOptions({ editorProps: { attributes: attributes({ ...latest.current, labelId, describedBy, invalid, required, readOnly }) } });
  }, [editor, labelId, describedBy, invalid, required, readOnly]);

  const run = (command: () => boolean) => () => {
    command();
  };
  return (
    <div className="html-editor">
      {props.readOnly ? null : (
        <div className="toolbar" role="toolbar" aria-label="Formatting">
          <button type="button" className="tool-button" onClick={run(() => editor.chain().focus().toggleBold().run())}>
            Bold
          </button>
          <button type="button" className="tool-button" onClick={run(() => editor.chain().focus().toggleItalic().run())}>
            Italic
          </button>
          <button type="button" className="tool-button" onClick={run(() => editor.chain().focus().toggleHeading({ level: 2 }).run())}>
            Heading
          </button>
          <button type="button" className="tool-button" onClick={run(() => editor.chain().focus().toggleBulletList().run())}>
            Bulleted list
          </button>
          <button type="button" className="tool-button" onClick={run(() => editor.chain().focus().toggleOrderedList().run())}>
            Numbered list
          </button>
        </div>
      )}
      <EditorContent editor={editor} />
    </div>
  );
}
