// My sessions (GET /studio/api/sessions), each of which I may end.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { Button } from "react-aria-components";
import { data, enc, messageOf, request } from "./api";
import { DataTable } from "./DataTable";
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
      {end.isError && (
        <p role="alert" className="alert error">
          {messageOf(end.error)}
        </p>
      )}
      <DataTable
        query={sessions}
        rowKey={(s) => s.id}
        caption="Sessions"
        loadingText="Loading sessions…"
        empty={<p className="notice">No session.</p>}
        columns={[
          {
            header: "Browser",
            rowHeader: true,
            cell: (s) => (
              <>
                {s.user_agent ?? "Unknown browser"}
                {s.current && <span className="st-badge badge-current">This browser</span>}
              </>
            ),
          },
          { header: "Signed in", cell: (s) => formatTime(s.created_at) },
          { header: "Last seen", cell: (s) => formatTime(s.last_seen_at) },
          { header: "Expires", cell: (s) => formatTime(s.expires_at) },
        ]}
        actions={(s) => (
          <Button className="st-button quiet" onPress={() => end.mutate(s)} isDisabled={end.isPending} aria-label={s.current ? "End session (this browser)" : undefined}>
            End session
          </Button>
        )}
      />
    </main>
  );
}
