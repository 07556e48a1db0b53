// `node`: a ComboBox that searches nodes as you type (props.searchNodes: by title, then by text),
// lists title and path, and stores the chosen node's id.
import { memo, type ReactNode, useEffect, useRef, useState } from "react";
import { ComboBox, Input, Label, ListBox, ListBoxItem, Popover } from "react-aria-components";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import type { NodeOption } from "../form/types";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";

/** Searching waits this long after the last keystroke, so typing a word makes one request. */
const SEARCH_DELAY_MS = 200;

export const NodeField = memo(function NodeField(props: FieldProps): ReactNode {
  const form = useForm();
  const [value, setValue] = useField<unknown>(form.store, props.pointer);
  const chosen = typeof value === "string" && value !== "" ? value : null;
  const meta = useFieldMeta(props, ...(chosen ? ["chosen"] : []));
  const titleOf = (id: string | null): string => (id ? (form.nodeTitles.get(id) ?? id) : "");
  const [input, setInput] = useState(() => titleOf(chosen));
  const [query, setQuery] = useState<string | null>(null);
  const [found, setFound] = useState<NodeOption[]>([]);
  const [status, setStatus] = useState<"idle" | "searching" | "failed">("idle");
  const request = useRef(0);

  // A value set from outside (a reset, a moved block) shows its own title.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a new id replaces what is typed
  useEffect(() => setInput(titleOf(chosen)), [chosen]);

  // A chosen node no search has shown yet (the form just opened): its title, looked up once by id.
  const [, setLooked] = useState(0);
  useEffect(() => {
    if (!chosen || form.nodeTitles.has(chosen)) return;
    let live = true;
    form.lookupNode(chosen).then(
      (node) => {
        if (!live || !node) return;
        form.nodeTitles.set(node.id, node.title);
        setInput((typed) => (typed === chosen ? node.title : typed));
        setLooked((n) => n + 1);
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [chosen, form]);

  useEffect(() => {
    if (query === null) return;
    const n = ++request.current;
    setStatus("searching");
    const timer = setTimeout(() => {
      form.searchNodes(query).then(
        (list) => {
          if (n !== request.current) return;
          for (const node of list) form.nodeTitles.set(node.id, node.title);
          setFound(list);
          setStatus("idle");
        },
        () => n === request.current && setStatus("failed"),
      );
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [query, form]);

  // The chosen node stays in the list, so the box can show its title when the list changes.
  const items = chosen && !found.some((n) => n.id === chosen) ? [{ id: chosen, title: titleOf(chosen), path: "" }, ...found] : found;

  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <ComboBox
        className="field-control combobox"
        items={items}
        selectedKey={chosen}
        inputValue={input}
        onInputChange={(text) => {
          setInput(text);
          if (text !== titleOf(chosen)) setQuery(text);
        }}
        onSelectionChange={(key) => {
          if (key === null) {
            if (input === "") setValue(undefined);
            return;
          }
          const node = items.find((n) => n.id === key);
          if (node) setInput(node.title);
          setValue(String(key));
        }}
        allowsEmptyCollection
        isReadOnly={meta.disabled}
        isInvalid={meta.violation !== null}
        isRequired={props.required}
        validationBehavior="aria"
        aria-describedby={meta.describedBy}
      >
        <Label className="field-label">
          <LabelText meta={meta} required={props.required} />
        </Label>
        <Input className="input" placeholder="Type to search pages by title or text" />
        <Popover className="popover">
          <ListBox className="listbox" renderEmptyState={() => <p className="listbox-empty">{status === "searching" ? "Searching…" : status === "failed" ? "Search failed" : "No nodes found"}</p>}>
            {(node: NodeOption) => (
              // Named "title, path": the path is shown, so it is part of the name too (WCAG 2.5.3, label in name).
              <ListBoxItem id={node.id} className="listbox-item" textValue={node.title}>
                <span>
                  {node.title}
                  {node.path ? <span className="listbox-name-sep">, </span> : null}
                </span>
                {node.path ? <span className="listbox-path">{node.path}</span> : null}
              </ListBoxItem>
            )}
          </ListBox>
        </Popover>
      </ComboBox>
      {chosen ? (
        <p className="field-help" id={`${meta.id}-chosen`}>
          Chosen: {titleOf(chosen)}
          {form.nodeTitles.has(chosen) ? ` (id ${chosen})` : " (a node id this project does not show)"}
        </p>
      ) : null}
    </FieldFrame>
  );
});
