import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/**
 * The web UI's request rules (SPEC section 12), as one function of the
 * request's method, path, query and headers, so each rule is visible in one
 * place and tested one by one (test/e2e/ui-server.test.ts). The server
 * listens on 127.0.0.1 only; these rules keep out what can still reach a
 * loopback port: a web page in the person's own browser (another origin,
 * DNS rebinding) and other local users or programs without the token.
 */
export interface Gate {
  port: number;
  token: string;
}

export type Verdict = { ok: true; firstLoad: boolean } | { ok: false; status: number; message: string };

/** The header the page sends its token in: a cross-origin page cannot set it without a CORS preflight, which is refused. */
export const TOKEN_HEADER = "x-unwind-token";

/**
 * The cookie a first load sets. Cookies are shared by every port of a host:
 * the server scopes it to a random path only it serves (src/ui/server.ts),
 * and names it for its port so two servers' cookies never meet.
 */
export const cookieName = (port: number) => `unwind-${port}`;

export function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

export function check(gate: Gate, method: string, pathname: string, query: URLSearchParams, headers: IncomingHttpHeaders): Verdict {
  // DNS rebinding: a page from evil.example whose name now resolves to 127.0.0.1 sends Host: evil.example:PORT.
  const host = headers.host ?? "";
  if (!allowedHosts(gate.port).includes(host)) return refuse(403, `Host ${JSON.stringify(host)} refused: use http://127.0.0.1:${gate.port}/`);
  // A browser names the page a request comes from; only this server's own pages may call it.
  const origin = headers.origin;
  if (origin !== undefined && !allowedHosts(gate.port).some((h) => origin === `http://${h}`)) return refuse(403, `cross-origin request from ${origin} refused`);
  // The printed URL is the one exception: opened from the opener's file (a file: page) it arrives cross-site, and it carries the token itself.
  const printed = pathname === "/" && (method === "GET" || method === "HEAD") && query.has("token");
  const site = headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none" && !printed) return refuse(403, `cross-site request (${site}) refused`);

  if (method !== "GET" && method !== "HEAD" && method !== "POST") return refuse(405, `${method} is not served`);
  const fromHeader = one(headers[TOKEN_HEADER]);
  if (method === "POST") {
    // A change needs the token in the header, not only the cookie a browser attaches by itself.
    if (fromHeader === undefined) return refuse(403, `a change needs the token in the ${TOKEN_HEADER} header`);
    if (!same(fromHeader, gate.token)) return refuse(401, "wrong token");
    if (!(headers["content-type"] ?? "").startsWith("application/json")) return refuse(415, "a change is a JSON body (content-type: application/json)");
    return { ok: true, firstLoad: false };
  }
  // The printed URL carries the token once, for the first page; after that the cookie (SameSite=Strict, HttpOnly, only under the app's path) or the header does.
  const fromQuery = pathname === "/" ? (query.get("token") ?? undefined) : undefined;
  const fromCookie = cookie(headers.cookie, cookieName(gate.port));
  const given = fromHeader ?? fromQuery ?? fromCookie;
  if (given === undefined) return refuse(401, "this needs the token from the URL unwind ui printed");
  if (!same(given, gate.token)) return refuse(401, "wrong token: use the URL unwind ui printed");
  return { ok: true, firstLoad: fromQuery !== undefined && fromHeader === undefined };
}

function refuse(status: number, message: string): Verdict {
  return { ok: false, status, message };
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Compared in constant time, so the token cannot be guessed a character at a time. */
function same(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Sent with every answer: nothing loads from outside this server, the page is never framed, the token never leaks in a Referer. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};
