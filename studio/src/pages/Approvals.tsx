// The project's approvals inbox (/studio/p/{slug}/approvals).
export function ApprovalsPage() {
  return (
    <main className="editor-pane" id="main">
      <h1>Approvals</h1>
    </main>
  );
}
