// The messages of a settings form: a failure (role="alert") and a success (role="status").
export function ErrorText({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p role="alert" className="alert error">
      {message}
    </p>
  );
}

export function StatusText({ message }: { message: string | null }) {
  return (
    <p role="status" className="settings-status">
      {message ?? ""}
    </p>
  );
}
