// The project's activity screen (/studio/p/{slug}/activity).
export function ActivityPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Activity</h1>
    </main>
  );
}
