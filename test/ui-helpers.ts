import { spawn, type ChildProcess } from "node:child_process";
import { request as httpRequest } from "node:http";
import { BIN } from "./helpers.js";

export interface RunningUi {
  url: string;
  port: number;
  token: string;
  child: ChildProcess;
  /** Spawn to the URL on stdout, in milliseconds. */
  ms: number;
  stderr: () => string;
  /** Ctrl-C, as a person stops it; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** `unwind ui --no-open` (or, with `browser`, as it opens one) as a real process: resolves once it printed its URL. */
export function startUi(cwd: string, args: string[] = [], opts: { browser?: boolean; env?: Record<string, string> } = {}): Promise<RunningUi> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, "ui", ...(opts.browser ? [] : ["--no-open"]), ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...opts.env } });
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+))\n/.exec(out);
      if (m)
        resolve({
          url: m[1]!,
          port: Number(m[2]),
          token: m[3]!,
          child,
          ms: performance.now() - t0,
          stderr: () => err,
          stop: () => {
            child.kill("SIGINT");
            return exited;
          },
        });
    });
    void exited.then((code) => reject(new Error(`unwind ui exited ${code} before printing its URL: ${err}`)));
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: any;
}

/** One raw HTTP request, any Host and headers, as a browser or another program could send it. */
export function request(port: number, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: opts.host ?? "127.0.0.1", port, method: opts.method ?? "GET", path: opts.path ?? "/", headers: { host: `127.0.0.1:${port}`, ...opts.headers }, setHost: false },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(body);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
        });
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}
