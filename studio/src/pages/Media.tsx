// The project's media screen (/studio/p/{slug}/media).
export function MediaPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Media</h1>
    </main>
  );
}
