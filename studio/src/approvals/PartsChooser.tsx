// Approving in part: the parts of a publication (GET …/approvals/{id}: `parts`), one check box each,
// all checked. What is unchecked is left out: approving sets it back to the published version in
// the page's working copy and publishes the rest (docs/editorial.md, "Approving in part").
import { Checkbox, CheckboxGroup, Label, Text } from "react-aria-components";
import type { ApprovalPart } from "./types";

const CHANGE = { added: "new", changed: "changed", removed: "removed" } as const;

/** The segment of a JSON Pointer as written (~1 is "/", ~0 is "~"). */
const segment = (s: string): string => s.replace(/~1/g, "/").replace(/~0/g, "~");

/** What a part is, in words: "Title", "Field summary", "Block 2 (text)", "Translation de"… */
function partLabel(part: ApprovalPart, blockOrder: readonly string[]): string {
  const [, head = "", ...rest] = part.pointer.split("/");
  const key = segment(rest.join("/"));
  switch (head) {
    case "title":
      return "Title";
    case "slug":
      return "Slug (its URL)";
    case "type":
      return "Type";
    case "parent_id":
      return "Parent (where it sits)";
    case "seo":
      return `SEO ${key}`;
    case "fields":
      return `Field ${key}`;
    case "translations":
      return `Translation ${key}`;
    case "blocks": {
      const v = (part.after ?? part.before) as { type?: unknown } | undefined;
      const at = blockOrder.indexOf(key);
      return `Block${at >= 0 ? ` ${at + 1}` : ""}${typeof v?.type === "string" ? ` (${v.type})` : ""}`;
    }
    default:
      return part.pointer;
  }
}

/** A short text of a value: a string as it is, anything else as JSON, cut at 120 characters. */
function brief(v: unknown): string {
  const s = typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 119)}…` : s;
}

export function PartsChooser({
  parts,
  accepted,
  onChange,
  blockOrder,
  isDisabled,
}: {
  parts: readonly ApprovalPart[];
  accepted: readonly string[];
  onChange: (accepted: string[]) => void;
  blockOrder: readonly string[];
  isDisabled?: boolean;
}) {
  const leftOut = parts.length - accepted.length;
  return (
    <CheckboxGroup className="st-field approval-parts" value={[...accepted]} onChange={onChange} isDisabled={isDisabled}>
      <Label>Parts to publish</Label>
      <Text slot="description" className="help">
        Uncheck a part to leave it out: approving then publishes the checked parts now and sets the others back to the published version in the page’s working copy. The agent is told which were left
        out.
        {leftOut > 0 && ` ${leftOut} of ${parts.length} left out.`}
      </Text>
      {parts.map((p) => (
        <Checkbox key={p.pointer} value={p.pointer} className="approval-part">
          <span className="checkbox-box" aria-hidden="true" />
          <span className="approval-part-text">
            <strong>{partLabel(p, blockOrder)}</strong> <span className="st-badge">{CHANGE[p.change]}</span>
            {p.change !== "removed" && <span className="approval-part-after"> {brief(p.after)}</span>}
            {p.change === "removed" && <span className="approval-part-before"> was {brief(p.before)}</span>}
          </span>
        </Checkbox>
      ))}
    </CheckboxGroup>
  );
}
