// My sessions (GET /studio/api/sessions), each of which I may end.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { Button } from "react-aria-components";
import { data, enc, messageOf, request } from "./api";
import { signedOut } from "./Shell";
import { formatTime } from "./time";
import type { SessionRow } from "./types";

export function SessionsPage() {
  const qc = useQueryClient();
  const sessions = useQuery({ queryKey: ["sessions"], queryFn: () => data<SessionRow[]>("/studio/api/sessions") });
  const end = useMutation({
    mutationFn: (row: SessionRow) => request(`/studio/api/sessions/${enc(row.id)}`, { method: "DELETE" }),
    onSuccess: (_r, row) => {
      if (row.current) signedOut(qc);
      else void qc.invalidateQueries({ queryKey: ["sessions"] });
    },
  });
  return (
    <main className="page" id="main">
      <p className="crumbs">
        <Link to="/">Projects</Link>
      </p>
      <h1>Sessions</h1>
      <p className="lede">Where you are signed in. Ending a session signs that browser out.</p>
      {sessions.isPending && <p>Loading sessions…</p>}
      {sessions.isError && (
        <p role="alert" className="alert error">
          {messageOf(sessions.error)}
        </p>
      )}
      {end.isError && (
        <p role="alert" className="alert error">
          {messageOf(end.error)}
        </p>
      )}
      {sessions.data && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Browser</th>
              <th scope="col">Signed in</th>
              <th scope="col">Last seen</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.map((s) => (
              <tr key={s.id}>
                <td>
                  {s.user_agent ?? "Unknown browser"}
                  {s.current && <span className="st-badge badge-current">This browser</span>}
                </td>
                <td>{formatTime(s.created_at)}</td>
                <td>{formatTime(s.last_seen_at)}</td>
                <td>{formatTime(s.expires_at)}</td>
                <td>
                  <Button className="st-button quiet" onPress={() => end.mutate(s)} isDisabled={end.isPending} aria-label={s.current ? "End session (this browser)" : undefined}>
                    End session
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
