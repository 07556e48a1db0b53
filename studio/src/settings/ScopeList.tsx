// A credential's scopes, one a line.
export function ScopeList({ scopes }: { scopes: readonly string[] }) {
  return (
    <ul className="scope-list">
      {scopes.map((s) => (
        <li key={s}>{s}</li>
      ))}
    </ul>
  );
}
