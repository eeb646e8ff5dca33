/**
 * `unwind ui`: the local web app (SPEC section 12). A `node:http` server on
 * 127.0.0.1 that serves three fixed assets (built by build.mjs into
 * dist/ui/) and the JSON API of src/ui/api.ts, a thin client of the
 * library like the command line and the MCP server. Every request passes
 * the rules of src/ui/guard.ts first. The timeline is live through
 * Server-Sent Events: the server polls the record's stamp (a fingerprint
 * of names and sizes, no contents) and tells the page when it changed.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnwindError, usage } from "../domain/errors.js";
import { inTermsOf } from "../domain/terms.js";
import { open, type Unwind } from "../ops/open.js";
import { ROUTES, statusOf, warmTimeline, type Args } from "./api.js";
import { check, cookieName, SECURITY_HEADERS, type Gate } from "./guard.js";

export interface UiOptions {
  root?: string | undefined;
  /** 0 (the default): any free port. */
  port?: number | undefined;
  /** Where index.html, app.js and app.css are (default: dist/ui beside this bundle). */
  assets?: string | undefined;
  /** How often the live timeline looks for news, in milliseconds. */
  pollMs?: number | undefined;
}

export interface RunningUi {
  url: string;
  port: number;
  /** Resolves when the printed URL is first opened. */
  landed: Promise<void>;
  close(): Promise<void>;
}

/** A POST body larger than this is refused unread: the API's bodies are a few ids. */
const BODY_LIMIT = 64 * 1024;

/** Served under the app's prefix (`/s/<random>/`), where the cookie is valid: `/` is the page. */
const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};

/** Opens the record (a bad root fails here, before any URL is printed) and listens. */
export async function startUi(opts: UiOptions = {}): Promise<RunningUi> {
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`--port ${port}: expected a whole number from 0 to 65535`, "0 picks a free port");
  const u = await open({ root: opts.root, keepChangeSets: true });
  const dir = opts.assets ?? join(__dirname, "ui");
  const assets = new Map(Object.entries(ASSETS).map(([path, a]) => [path, { body: readFileSync(join(dir, a.file)), type: a.type }]));
  const token = randomBytes(32).toString("hex");
  const gate: Gate = { port: 0, token };
  // Cookies ignore ports: one at Path=/ went to every server on 127.0.0.1, a dev server an agent started among them.
  // Scoped to a path no other server can know, a browser sends it to this server's app alone.
  const prefix = `/s/${randomBytes(16).toString("hex")}/`;
  let landed!: () => void;
  const opened = new Promise<void>((resolve) => (landed = resolve));
  const streams = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    handle(req, res, u, gate, { prefix, landed }, assets, streams, opts.pollMs ?? 1000).catch((e: unknown) => {
      process.stderr.write(`unwind ui: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      if (!res.headersSent) send(res, 500, { error: { code: "E_INTERNAL", message: "internal error", hint: "this is a bug in unwind; see the terminal running unwind ui" } });
      else res.end();
    });
  });
  // Loopback only: nothing on another interface, or another machine, can connect.
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(e.code === "EADDRINUSE" ? new UnwindError("E_USAGE", `port ${port} is in use`, { hint: "pick another with --port, or 0 for any free one" }) : e),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  gate.port = bound;
  // Read while the browser opens: the page's first load is then answered from it.
  warmTimeline(u);
  return {
    url: `http://127.0.0.1:${bound}/?token=${token}`,
    port: bound,
    landed: opened,
    close: () =>
      new Promise((resolve) => {
        for (const s of streams) s.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  u: Unwind,
  gate: Gate,
  { prefix, landed }: { prefix: string; landed: () => void },
  assets: Map<string, { body: Buffer; type: string }>,
  streams: Set<ServerResponse>,
  pollMs: number,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = req.method ?? "GET";
  const verdict = check(gate, method, url.pathname, url.searchParams, req.headers);
  if (!verdict.ok) {
    // A person's browser asking for a page gets a page that says what to do; scripts and the app's own calls get JSON.
    if (method === "GET" && !url.pathname.includes("/api/") && (req.headers.accept ?? "").includes("text/html")) return refusedPage(res, verdict.status, verdict.message);
    return send(res, verdict.status, { error: { code: "E_REFUSED", message: verdict.message, hint: null } });
  }

  const inApp = url.pathname.startsWith(prefix);
  if (!inApp && url.pathname === "/") {
    if (verdict.firstLoad) landed();
    return landing(res, method, gate, prefix, verdict.firstLoad);
  }
  // The page's own requests go under the prefix, so they carry the cookie; the API answers at both places.
  const path = inApp ? url.pathname.slice(prefix.length - 1) : url.pathname;
  const asset = assets.get(path);
  if (asset) {
    if (method !== "GET" && method !== "HEAD") return send(res, 405, { error: { code: "E_USAGE", message: `${method} ${path}: use GET`, hint: null } }, { allow: "GET" });
    // The page reads the token for its POST header from a meta tag; CSP forbids inline scripts.
    const body = path === "/" ? Buffer.from(asset.body.toString("utf8").replace("%TOKEN%", gate.token)) : asset.body;
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": asset.type, "content-length": String(body.length) });
    res.end(method === "HEAD" ? undefined : body);
    return;
  }
  if (path === "/api/events") {
    if (method !== "GET") return send(res, 405, { error: { code: "E_USAGE", message: "the event stream is GET only", hint: null } }, { allow: "GET" });
    return events(res, u, streams, pollMs);
  }
  const route = ROUTES[path];
  if (!route) return send(res, 404, { error: { code: "E_USAGE", message: `no such page: ${path}`, hint: null } });
  // GET never changes anything: an apply sent as GET (a link, an <img>) is refused before any argument is read.
  if (method !== route.method && !(method === "HEAD" && route.method === "GET"))
    return send(res, 405, { error: { code: "E_USAGE", message: `${method} ${path}: use ${route.method}`, hint: null } }, { allow: route.method });
  let args: Args;
  try {
    args = route.method === "POST" ? await body(req) : Object.fromEntries(url.searchParams);
  } catch (e) {
    return send(res, statusOf(e), errorDoc(e));
  }
  try {
    send(res, 200, await route.run(u, args));
  } catch (e) {
    if (!(e instanceof UnwindError)) throw e;
    send(res, statusOf(e), errorDoc(e));
  }
}

/**
 * Where the printed URL lands: a page that sets the cookie (on first load)
 * and moves on to the app under its prefix. A page, not a 303: opened from
 * the opener's file, the first request is cross-site, and so is every
 * redirect of it, which then carries no SameSite=Strict cookie; the move
 * from this page is same-origin.
 */
function landing(res: ServerResponse, method: string, gate: Gate, prefix: string, firstLoad: boolean): void {
  if (method !== "GET" && method !== "HEAD") {
    send(res, 405, { error: { code: "E_USAGE", message: `${method} /: use GET`, hint: null } }, { allow: "GET" });
    return;
  }
  const body = Buffer.from(
    `<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0; url=${prefix}">\n<link rel="icon" href="data:,">\n<title>unwind</title>\n<p><a href="${prefix}">Open unwind</a></p>\n`,
  );
  const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8", "content-length": String(body.length) };
  if (firstLoad) headers["set-cookie"] = `${cookieName(gate.port)}=${gate.token}; HttpOnly; SameSite=Strict; Path=${prefix}`;
  res.writeHead(200, { ...SECURITY_HEADERS, ...headers });
  res.end(method === "HEAD" ? undefined : body);
}

/** Tells the page whenever the record's stamp changes; a comment every 15 s keeps proxies and the browser from timing out. */
function events(res: ServerResponse, u: Unwind, streams: Set<ServerResponse>, pollMs: number): void {
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
  streams.add(res);
  let last = "";
  let beats = 0;
  const tick = async () => {
    try {
      const { stamp } = await u.stamp();
      if (stamp !== last) res.write(`event: stamp\ndata: ${stamp}\n\n`);
      else if (++beats % Math.max(1, Math.round(15_000 / pollMs)) === 0) res.write(": alive\n\n");
      last = stamp;
    } catch {
      /* a store being gc'd or moved: try again next tick */
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), pollMs);
  res.on("close", () => {
    clearInterval(timer);
    streams.delete(res);
  });
}

async function body(req: IncomingMessage): Promise<Args> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > BODY_LIMIT) throw usage(`the request body is over ${BODY_LIMIT} bytes`);
    chunks.push(c);
  }
  let v: unknown;
  try {
    v = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw usage("the request body is not JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw usage("the request body must be a JSON object");
  return v as Args;
}

/** An error as the page shows it: in the UI's own words (its buttons and checkboxes), never a command-line flag. */
function errorDoc(e: unknown) {
  const u = e instanceof UnwindError ? e : new UnwindError("E_USAGE", String(e));
  return { error: { code: u.code, message: inTermsOf("ui", u.message), hint: u.hint ? inTermsOf("ui", u.hint) : null } };
}

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A refusal as a page: what was wrong, and that the URL `unwind ui` printed is the way in. No script, no style (the CSP allows neither inline), nothing loaded. */
function refusedPage(res: ServerResponse, status: number, message: string): void {
  const body = Buffer.from(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>unwind ui: not allowed</title></head><body>` +
      `<h1>unwind ui</h1><p><strong>${escapeHtml(message)}</strong></p>` +
      `<p>Open the address <code>unwind ui</code> printed in its terminal (it carries this session's token), or start it again: <code>unwind ui</code>.</p></body></html>`,
  );
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", "content-length": String(body.length) });
  res.end(body);
}

function send(res: ServerResponse, status: number, doc: unknown, extra: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(doc));
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "content-length": String(body.length), ...extra });
  res.end(body);
}

/**
 * Best effort: a machine without a browser opener still gets the URL on
 * stdout. A command line is public (`/proc/<pid>/cmdline`, `ps`) to every
 * local user, so the opener, and the browser it starts, are given a file
 * that leads to the URL, not the URL: private to this user (0600 in a 0700
 * directory). Returns its removal, for when the URL was opened (the browser
 * has read it) or the server stops, whichever comes first.
 */
export function openBrowser(url: string): () => void {
  let dir: string | undefined;
  const remove = () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    dir = mkdtempSync(join(tmpdir(), "unwind-ui-"));
    const file = join(dir, "open.html");
    writeFileSync(
      file,
      `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0; url=${url}">\n<title>unwind</title>\n<p><a href="${url}">Open unwind</a></p>\n`,
      { mode: 0o600, flag: "wx" },
    );
    const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
    const child = spawn(cmd, [file], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    /* no opener, or no temporary directory: the URL is printed */
  }
  return remove;
}

/**
 * Serves until SIGINT or SIGTERM (Ctrl-C), then closes every connection and
 * resolves. `onUrl` gets the URL as soon as the server listens.
 */
export async function serveUi(opts: UiOptions & { openBrowser?: boolean; onUrl: (ui: RunningUi) => void }): Promise<void> {
  // Listening for the signals before the URL is printed: a Ctrl-C right after it still stops the server cleanly.
  let signalled!: () => void;
  const stopped = new Promise<void>((resolve) => (signalled = resolve));
  const stop = () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    signalled();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  let ui: RunningUi;
  try {
    ui = await startUi(opts);
  } catch (e) {
    stop();
    throw e;
  }
  opts.onUrl(ui);
  const forget = opts.openBrowser ? openBrowser(ui.url) : () => {};
  void ui.landed.then(forget);
  await stopped;
  forget();
  await ui.close();
}
