// The project's webhooks screen (/studio/p/{slug}/webhooks).
export function WebhooksPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Webhooks</h1>
    </main>
  );
}
