// The project's settings screen (/studio/p/{slug}/settings).
export function SettingsPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Settings</h1>
    </main>
  );
}
