// `Edit as JSON`: the whole model (strict, block_types, node_types) in a monospace text box whose
// JSON syntax is checked as it is typed. `Check` sends it as a dry run (PUT …/model?dry_run=true)
// and shows the report: the model's own violations (400 invalid_content) or the nodes it would
// break. `Apply` sends it for real, and only after a clean check of exactly the text shown.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, FieldError, Label, Text, TextArea, TextField } from "react-aria-components";
import { projectBase, request } from "../app/api";
import { keys } from "../app/queries";
import type { ContentModel } from "../app/types";
import { CheckReport, type InvalidNode, type Report, reportOfError } from "./CheckReport";

interface UpdateAnswer {
  data: ContentModel;
  applied: boolean;
  invalid: InvalidNode[];
  count: number;
}

/** The editable part of the model, as the text box starts. */
const modelText = (m: ContentModel): string => `${JSON.stringify({ strict: m.strict, block_types: m.block_types, node_types: m.node_types }, null, 2)}\n`;

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** The text as JSON, or where its syntax fails (with the line and column when the engine names only a position). */
function parse(text: string): Parsed {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, error: 'The model must be a JSON object: { "strict": …, "block_types": […], "node_types": […] }.' };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /position (\d+)/.exec(message);
    if (at?.[1] && !/line \d+/.test(message)) {
      const before = text.slice(0, Number(at[1])).split("\n");
      return { ok: false, error: `Not valid JSON (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}): ${message}` };
    }
    return { ok: false, error: `Not valid JSON: ${message}` };
  }
}

export function ModelEditor({ slug, model, onDone }: { slug: string; model: ContentModel; onDone: (message: string) => void }) {
  const qc = useQueryClient();
  const [text, setText] = useState(() => modelText(model));
  const [busy, setBusy] = useState<"check" | "apply" | null>(null);
  // The last answer with the text it was about: Apply needs a clean check of the text shown.
  const [checked, setChecked] = useState<{ text: string; report: Report; value: unknown } | null>(null);
  const parsed = parse(text);
  const url = `${projectBase(slug)}/model`;
  const cleanForText = checked !== null && checked.text === text && checked.report.kind === "clean";

  const check = async () => {
    if (!parsed.ok) return;
    const sent = text;
    setBusy("check");
    try {
      const answer = await putModel(`${url}?dry_run=true`, parsed.value);
      setChecked({ text: sent, report: answer.count > 0 ? { kind: "content", invalid: answer.invalid, count: answer.count, applied: false } : { kind: "clean" }, value: parsed.value });
    } catch (err) {
      setChecked({ text: sent, report: reportOfError(err), value: parsed.value });
    } finally {
      setBusy(null);
    }
  };

  const apply = async () => {
    if (!parsed.ok || !cleanForText) return;
    const sent = text;
    setBusy("apply");
    try {
      const answer = await putModel(url, parsed.value);
      await qc.invalidateQueries({ queryKey: keys.model(slug) });
      onDone(`Model saved: version ${answer.data.version}.`);
    } catch (err) {
      // Content may have changed since the check: the refusal is reported as a check's would be.
      setChecked({ text: sent, report: reportOfError(err), value: parsed.value });
    } finally {
      setBusy(null);
    }
  };
  const stale = checked !== null && checked.text !== text;
  return (
    <section className="md-editor" aria-labelledby="md-editor-heading">
      <h2 id="md-editor-heading">Edit the model as JSON</h2>
      <TextField className="st-field md-json-field" value={text} onChange={setText} isInvalid={!parsed.ok} validationBehavior="aria">
        <Label>Content model (JSON)</Label>
        <Text slot="description" className="help">
          The whole model: strict, block_types and node_types (version {model.version}). Check it against the existing content before applying it.
        </Text>
        <TextArea className="md-json" rows={24} spellCheck={false} autoCapitalize="off" autoCorrect="off" autoFocus />
        <FieldError className="st-field-error">{parsed.ok ? "" : parsed.error}</FieldError>
      </TextField>
      <div className="md-actions">
        <Button className="st-button" isDisabled={!parsed.ok || busy !== null} onPress={() => void check()}>
          {busy === "check" ? "Checking…" : "Check"}
        </Button>
        <Button className="st-button primary" isDisabled={!cleanForText || busy !== null} onPress={() => void apply()}>
          {busy === "apply" ? "Applying…" : "Apply"}
        </Button>
        <Button className="st-button" isDisabled={busy !== null} onPress={() => onDone("")}>
          Cancel
        </Button>
        <span className="muted md-small" aria-live="polite">
          {stale ? "Changed since the last check: check again before applying." : !cleanForText && parsed.ok ? "Apply is enabled after a clean check." : ""}
        </span>
      </div>
      {checked && !stale && <CheckReport report={checked.report} model={checked.value} slug={slug} />}
    </section>
  );
}

/** PUT of the model with the whole answer: the new model in `data`, the check's fields beside it. */
async function putModel(url: string, body: unknown): Promise<UpdateAnswer> {
  return (await request<UpdateAnswer>(url, { method: "PUT", body })).body;
}
