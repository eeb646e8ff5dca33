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
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { UnwindError, usage } from "../domain/errors.js";
import { open, type Unwind } from "../ops/open.js";
import { ROUTES, statusOf, type Args } from "./api.js";
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
  close(): Promise<void>;
}

/** A POST body larger than this is refused unread: the API's bodies are a few ids. */
const BODY_LIMIT = 64 * 1024;

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};

/** Opens the record (a bad root fails here, before any URL is printed) and listens. */
export async function startUi(opts: UiOptions = {}): Promise<RunningUi> {
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`--port ${port}: expected a whole number from 0 to 65535`, "0 picks a free port");
  const u = await open({ root: opts.root });
  const dir = opts.assets ?? join(__dirname, "ui");
  const assets = new Map(Object.entries(ASSETS).map(([path, a]) => [path, { body: readFileSync(join(dir, a.file)), type: a.type }]));
  const token = randomBytes(32).toString("hex");
  const gate: Gate = { port: 0, token };
  const streams = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    handle(req, res, u, gate, assets, streams, opts.pollMs ?? 1000).catch((e: unknown) => {
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
  return {
    url: `http://127.0.0.1:${bound}/?token=${token}`,
    port: bound,
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
  assets: Map<string, { body: Buffer; type: string }>,
  streams: Set<ServerResponse>,
  pollMs: number,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = req.method ?? "GET";
  const verdict = check(gate, method, url.pathname, url.searchParams, req.headers);
  if (!verdict.ok) return send(res, verdict.status, { error: { code: "E_REFUSED", message: verdict.message, hint: null } });

  const asset = assets.get(url.pathname);
  if (asset) {
    if (method !== "GET" && method !== "HEAD") return send(res, 405, { error: { code: "E_USAGE", message: `${method} ${url.pathname}: use GET`, hint: null } }, { allow: "GET" });
    const headers: Record<string, string> = { "content-type": asset.type };
    // The cookie lets the page's later requests (assets, the event stream) carry the token without it in every URL.
    if (verdict.firstLoad) headers["set-cookie"] = `${cookieName(gate.port)}=${gate.token}; HttpOnly; SameSite=Strict; Path=/`;
    // The page reads the token for its POST header from a meta tag; CSP forbids inline scripts.
    const body = url.pathname === "/" ? Buffer.from(asset.body.toString("utf8").replace("%TOKEN%", gate.token)) : asset.body;
    res.writeHead(200, { ...SECURITY_HEADERS, ...headers, "content-length": String(body.length) });
    res.end(method === "HEAD" ? undefined : body);
    return;
  }
  if (url.pathname === "/api/events") {
    if (method !== "GET") return send(res, 405, { error: { code: "E_USAGE", message: "the event stream is GET only", hint: null } }, { allow: "GET" });
    return events(res, u, streams, pollMs);
  }
  const route = ROUTES[url.pathname];
  if (!route) return send(res, 404, { error: { code: "E_USAGE", message: `no such page: ${url.pathname}`, hint: null } });
  // GET never changes anything: an apply sent as GET (a link, an <img>) is refused before any argument is read.
  if (method !== route.method && !(method === "HEAD" && route.method === "GET"))
    return send(res, 405, { error: { code: "E_USAGE", message: `${method} ${url.pathname}: use ${route.method}`, hint: null } }, { allow: route.method });
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

function errorDoc(e: unknown) {
  const u = e instanceof UnwindError ? e : new UnwindError("E_USAGE", String(e));
  return { error: { code: u.code, message: u.message, hint: u.hint ?? null } };
}

function send(res: ServerResponse, status: number, doc: unknown, extra: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(doc));
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "content-length": String(body.length), ...extra });
  res.end(body);
}

/** Best effort: a machine without a browser opener still gets the URL on stdout. */
export function openBrowser(url: string): void {
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(cmd, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    /* no opener: the URL is printed */
  }
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
  if (opts.openBrowser) openBrowser(ui.url);
  await stopped;
  await ui.close();
}
