// The frame: who is signed in (else the sign-in form, at whatever URL was asked for, so deep
// links survive), the header, a polite live region for announcements, and the page.
import { type QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, Outlet, useNavigate } from "@tanstack/react-router";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from "react";
import { Button, Form, Heading, Input, Label, TextField } from "react-aria-components";
import { ApiError, data, messageOf, onUnauthorized, request } from "./api";
import type { SessionInfo } from "./types";

const sessionKey = ["session"] as const;

/** Asks GET /studio/api/session; null when nobody is signed in. */
async function readSession(): Promise<SessionInfo | null> {
  try {
    return await data<SessionInfo>("/studio/api/session");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/** Nobody is signed in any more: the sign-in form shows, and nothing read with the old session stays cached. */
export function signedOut(qc: QueryClient) {
  qc.setQueryData(sessionKey, null);
  qc.removeQueries({ predicate: (q) => q.queryKey[0] !== sessionKey[0] });
}

const AnnounceContext = createContext<(text: string) => void>(() => {});
/** Says something in the page's polite live region. */
export const useAnnounce = () => useContext(AnnounceContext);

export function AppRoot() {
  const qc = useQueryClient();
  const session = useQuery({ queryKey: sessionKey, queryFn: readSession, staleTime: Number.POSITIVE_INFINITY });
  const [announcement, setAnnouncement] = useState("");
  const timer = useRef<number | undefined>(undefined);
  const announce = useCallback((text: string) => {
    // Clearing first makes a repeated message heard again.
    setAnnouncement("");
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setAnnouncement(text), 50);
  }, []);

  // A 401 from any call: the session ended (signed out elsewhere, expired): back to sign-in.
  useEffect(() => onUnauthorized(() => signedOut(qc)), [qc]);

  let body: ReactNode;
  if (session.isPending) body = <p className="page-loading">Loading…</p>;
  else if (session.isError)
    body = (
      <main className="signin">
        <p role="alert">{messageOf(session.error)}</p>
        <Button onPress={() => session.refetch()}>Try again</Button>
      </main>
    );
  else if (!session.data) body = <SignIn />;
  else
    body = (
      <>
        <Header session={session.data} />
        <Outlet />
      </>
    );
  return (
    <AnnounceContext.Provider value={announce}>
      {body}
      <div className="visually-hidden" aria-live="polite" aria-atomic="true">
        {announcement}
      </div>
    </AnnounceContext.Provider>
  );
}

function Header({ session }: { session: SessionInfo }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: () => request("/studio/api/session", { method: "DELETE" }),
    onSettled: () => {
      signedOut(qc);
      void navigate({ to: "/" });
    },
  });
  return (
    <header className="app-header">
      <Link to="/" className="brand">
        Studio
      </Link>
      <div className="header-end">
        <span className="who" title="Signed in as">
          {session.user.email}
        </span>
        <Link to="/sessions" className="header-link">
          Sessions
        </Link>
        <Button className="st-button quiet" onPress={() => signOut.mutate()} isDisabled={signOut.isPending}>
          Sign out
        </Button>
      </div>
    </header>
  );
}

function SignIn() {
  const qc = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const signIn = useMutation({
    mutationFn: (body: { email: string; password: string }) => data<SessionInfo>("/studio/api/session", { method: "POST", body }),
    onSuccess: (info) => {
      setError(null);
      qc.setQueryData(sessionKey, info);
    },
    onError: (err) => {
      if (err instanceof ApiError && err.status === 429) setError(tooManyAttempts(err.retryAfter));
      else setError(messageOf(err));
    },
  });
  return (
    <main className="signin">
      <Form
        className="signin-card"
        aria-labelledby="signin-heading"
        onSubmit={(e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          signIn.mutate({ email: String(fd.get("email") ?? ""), password: String(fd.get("password") ?? "") });
        }}
      >
        <Heading level={1} id="signin-heading">
          Sign in to Studio
        </Heading>
        {error && (
          <p role="alert" className="alert error">
            {error}
          </p>
        )}
        <TextField name="email" type="email" isRequired autoComplete="username" className="st-field" autoFocus>
          <Label>Email</Label>
          <Input />
        </TextField>
        <TextField name="password" type="password" isRequired autoComplete="current-password" className="st-field">
          <Label>Password</Label>
          <Input />
        </TextField>
        {/* Not isPending: React Aria's pending announcement outlives the button (an unnamed role="img"). */}
        <Button type="submit" className="st-button primary" isDisabled={signIn.isPending}>
          {signIn.isPending ? "Signing in…" : "Sign in"}
        </Button>
      </Form>
    </main>
  );
}

/** The sign-in refusal after too many failures, with the wait the server's Retry-After names, in minutes. */
function tooManyAttempts(seconds: number | null): string {
  if (seconds === null) return "Too many sign-in attempts. Try again in a few minutes.";
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return `Too many sign-in attempts. Try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
}

export function NotFound() {
  return (
    <main className="page">
      <h1>Not found</h1>
      <p>
        There is nothing at this address. <Link to="/">Go to your projects</Link>
      </p>
    </main>
  );
}
