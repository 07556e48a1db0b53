// CodeMirror 6 for Markdown. Lossless: the text that comes in is the text that goes out until the
// person edits it (no reformatting; "\r\n" line ends are kept), and nothing is written on mount.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { markdown } from "@codemirror/lang-markdown";
import { Compartment, EditorState, type Extension } from "@codemirror/state";
import { EditorView, keymap, placeholder } from "@codemirror/view";
import { type ReactNode, useEffect, useRef } from "react";
import type { EditorProps } from "./editor-props";

/** Lines split only on the text's own line end, so a lone "\r" or a mixed text comes back unchanged. */
const lineSeparator = (text: string): string => (text.includes("\r\n") && !/\r(?!\n)|(?<!\r)\n/.test(text) ? "\r\n" : "\n");

/**
 * CSP (style-src 'self'): style-mod, CodeMirror's style layer, writes a <style> element into a root
 * that has a `head`, and uses a constructed stylesheet in `adoptedStyleSheets` only for a root
 * without one (a shadow root). One throwaway view whose root is the document minus its `head` makes
 * the document's style set an adopted sheet; every later view adds its rules to that sheet.
 */
function adoptStyles(): void {
  const root = new Proxy(document, {
    get: (target, key) => {
      if (key === "head") return undefined;
      const value: unknown = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set: (target, key, value) => Reflect.set(target, key, value),
  });
  new EditorView({ root }).destroy();
}
adoptStyles();

// CodeMirror's own theme (mounted through the adopted sheet above).
const theme = EditorView.theme({
  "&": { border: "1px solid #8a8f98", borderRadius: "6px", backgroundColor: "#fff", fontSize: "0.95rem" },
  "&.cm-focused": { outline: "3px solid #1a5fb4", outlineOffset: "1px" },
  ".cm-content": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", minHeight: "6rem", padding: "8px 0" },
  ".cm-scroller": { maxHeight: "24rem", overflow: "auto" },
  ".cm-placeholder": { color: "#4d535c" },
});

function attributes(p: EditorProps): Extension {
  const attrs: Record<string, string> = { "aria-labelledby": p.labelId, "aria-invalid": p.invalid ? "true" : "false" };
  if (p.describedBy) attrs["aria-describedby"] = p.describedBy;
  if (p.required) attrs["aria-required"] = "true";
  return [EditorView.contentAttributes.of(attrs), EditorState.readOnly.of(p.readOnly), EditorView.editable.of(!p.readOnly)];
}

export function MarkdownEditor(props: EditorProps): ReactNode {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const dynamic = useRef(new Compartment());

  const createState = (text: string): EditorState =>
    EditorState.create({
      doc: text,
      extensions: [
        EditorState.lineSeparator.of(lineSeparator(text)),
        history(),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        markdown(),
        EditorView.lineWrapping,
        placeholder("Markdown"),
        theme,
        dynamic.current.of(attributes(latest.current)),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          const next = u.state.sliceDoc();
          if (next !== latest.current.value) latest.current.onChange(next);
        }),
      ],
    });

  // biome-ignore lint/correctness/useExhaustiveDependencies: the view is made once; later props reach it below
  useEffect(() => {
    if (!host.current) return;
    view.current = new EditorView({ state: createState(latest.current.value), parent: host.current });
    return () => {
      view.current?.destroy();
      view.current = null;
    };
  }, []);

  // A value set from outside (a reset, a moved block) replaces the document and its history.
  // biome-ignore lint/correctness/useExhaustiveDependencies: createState reads the latest props
  useEffect(() => {
    const v = view.current;
    if (v && v.state.sliceDoc() !== props.value) v.setState(createState(props.value));
  }, [props.value]);

  const { labelId, describedBy, invalid, required, readOnly } = props;
  useEffect(() => {
    const next = attributes({ ...latest.current, labelId, describedBy, invalid, required, readOnly });
    view.current?.dispatch({ effects: dynamic.current.reconfigure(next) });
  }, [labelId, describedBy, invalid, required, readOnly]);

  return <div ref={host} className="markdown-editor" />;
}
