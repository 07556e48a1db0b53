// The project's trash screen (/studio/p/{slug}/trash).
export function TrashPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Trash</h1>
    </main>
  );
}
