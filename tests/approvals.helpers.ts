// A person on the approval page (issue 27): a browser stand-in that opens the agent's link, signs
// in with the consent page's sign-in and approves or rejects.
import { CookieJar, type Fetcher, hiddenFields } from "./oauth.helpers";

export interface PageVisit {
  status: number;
  html: string;
}

export async function decideInBrowser(
  fetcher: Fetcher,
  url: string,
  user: { email: string; password: string },
  action: "approve" | "reject" | null,
): Promise<{ signIn: PageVisit; review: PageVisit; decided: PageVisit | null }> {
  const jar = new CookieJar();
  const send = async (method: "GET" | "POST", form?: Record<string, string>): Promise<PageVisit> => {
    const headers: Record<string, string> = { cookie: jar.header() };
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetcher(new Request(url, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined }));
    jar.store(res);
    return { status: res.status, html: await res.text() };
  };
  const signIn = await send("GET");
  const review = await send("POST", { ...hiddenFields(signIn.html), email: user.email, password: user.password });
  if (action === null || review.status !== 200) return { signIn, review, decided: null };
  const decided = await send("POST", { ...hiddenFields(review.html), action });
  return { signIn, review, decided };
}
