// The project's content model screen (/studio/p/{slug}/model): block types and node types read as
// a person reads them (content:read), and for people holding model:write `Edit as JSON`, where a
// change is checked against the existing content (a dry run) before it is applied.
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Button } from "react-aria-components";
import { messageOf } from "../app/api";
import { useMe, useModel } from "../app/queries";
import { formatTime } from "../app/time";
import { ModelEditor } from "../model/ModelEditor";
import { ModelView } from "../model/ModelView";
import "../model/model.css";

export function ModelPage() {
  const { slug } = useParams({ from: "/p/$slug" });
  const me = useMe(slug);
  const model = useModel(slug);
  const [editing, setEditing] = useState(false);
  const [status, setStatus] = useState("");
  const canEdit = !!me.data?.scopes.includes("model:write");
  const failed = me.error ?? model.error;
  return (
    <main className="editor-pane md-page" id="main">
      <div className="md-head">
        <h1>Content model</h1>
        {canEdit && model.data && !editing && (
          <Button
            className="st-button"
            onPress={() => {
              setStatus("");
              // The editor starts from the model as stored now, not from a cached read.
              void model.refetch().then(() => setEditing(true));
            }}
          >
            Edit as JSON
          </Button>
        )}
      </div>
      {model.data && model.data.version > 0 && (
        <p className="muted md-small">
          Version {model.data.version}
          {model.data.updated_at ? `, changed ${formatTime(model.data.updated_at)}` : ""}.
        </p>
      )}
      <p role="status" className="md-status">
        {status}
      </p>
      {failed && (
        <p role="alert" className="alert error">
          {messageOf(failed)}
        </p>
      )}
      {model.isPending && !failed && <p aria-busy="true">Loading the content model…</p>}
      {model.data && editing && (
        <ModelEditor
          slug={slug}
          model={model.data}
          onDone={(message) => {
            setEditing(false);
            setStatus(message);
          }}
        />
      )}
      {model.data && !editing && <ModelView model={model.data} />}
    </main>
  );
}
