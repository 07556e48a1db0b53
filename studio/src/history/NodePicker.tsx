// A ComboBox that finds a page by title (GET /nodes?q=) for the activity's page filter.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ComboBox, Input, Label, ListBox, ListBoxItem, Popover, Text } from "react-aria-components";
import { projectBase, request } from "../app/api";
import type { NodeList } from "../app/types";

interface Option {
  id: string;
  title: string;
  path: string;
}

export function NodePicker({ slug, value, onChange }: { slug: string; value: Option | null; onChange: (node: Option | null) => void }) {
  const [input, setInput] = useState(value?.title ?? "");
  const [query, setQuery] = useState("");
  useEffect(() => setInput(value?.title ?? ""), [value]);
  // One request a word: the query follows the typing after a short pause.
  useEffect(() => {
    const t = window.setTimeout(() => setQuery(input === value?.title ? "" : input), 200);
    return () => window.clearTimeout(t);
  }, [input, value]);
  const found = useQuery({
    queryKey: ["nodes", slug, "pick", query],
    queryFn: async () => {
      const params = new URLSearchParams({ per_page: "20" });
      if (query) params.set("q", query);
      const res = await request<NodeList>(`${projectBase(slug)}/nodes?${params}`);
      return res.body.data.map((n) => ({ id: n.id, title: n.title, path: n.path }));
    },
    staleTime: 10_000,
  });
  // While a search is on its way, the last answer is narrowed to what is typed.
  const typed = input && input !== value?.title ? input.toLowerCase() : "";
  const matching = (found.data ?? []).filter((n) => !typed || n.title.toLowerCase().includes(typed));
  const items: Option[] = [...(value && !matching.some((n) => n.id === value.id) ? [value] : []), ...matching];
  return (
    <ComboBox
      className="st-field st-node-picker"
      items={items}
      selectedKey={value?.id ?? null}
      inputValue={input}
      onInputChange={(text) => {
        setInput(text);
        if (text === "" && value) onChange(null);
      }}
      onSelectionChange={(key) => {
        if (key === null) return;
        const node = items.find((n) => n.id === key);
        if (!node) return;
        // Both the input and the selection are controlled: the text follows the choice in the same
        // render, else the box sees typed text and opens its list again.
        setInput(node.title);
        onChange(node);
      }}
      allowsEmptyCollection
    >
      <Label>Page</Label>
      <Input placeholder="Any page: type to search by title" />
      <Popover className="st-popover">
        <ListBox className="st-listbox" renderEmptyState={() => <p className="st-listbox-empty">{found.isFetching ? "Searching…" : "No pages found"}</p>}>
          {(node: Option) => (
            <ListBoxItem id={node.id} className="st-listbox-item" textValue={node.title}>
              <Text slot="label">{node.title || "Untitled"}</Text>{" "}
              <Text slot="description" className="path muted">
                /{node.path}
              </Text>
            </ListBoxItem>
          )}
        </ListBox>
      </Popover>
    </ComboBox>
  );
}
