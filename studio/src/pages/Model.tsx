// The project's content model screen (/studio/p/{slug}/model).
export function ModelPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Content model</h1>
    </main>
  );
}
