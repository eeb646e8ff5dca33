// The docs' tours: the fenced `sh` blocks of README.md and docs/*.md, run as a reader would run them.
//
// A tour starts at `<!-- tour: NAME -->` and takes every `sh` block after it up to the next tour marker or the
// end of the file; `<!-- not a tour: REASON -->` right before a block leaves that one block out, and says why.
// Any other `sh` block is an error, and so is a `$ ` transcript in a fence that is not `sh`: no command is shown
// that nothing runs.
//
// A block with `$ ` lines is a transcript: each `$ ` line is a command (a line ending in `\` continues it, a
// heredoc runs to its terminator), the lines after it are output it must print (stdout and stderr together), in
// order, each a whole line but not every line: a doc shows the lines that matter. `…` in a line stands for any
// text (ids, times), runs of spaces match any run of spaces (column widths move with ids), and a line starting
// with `#` is a comment. A command ending in `# exit N` must exit N, any other 0. A block without `$ ` lines
// is a script, run whole under `set -e` in the same shell (a `cd` or an `export` carries on).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface Step {
  command: string;
  expected: string[];
  exit: number;
}

export interface Block {
  file: string;
  line: number; // 1-based line of the opening fence
  text: string;
  script: boolean; // true: run whole under set -e; false: a transcript of steps
  steps: Step[];
}

export interface Tour {
  file: string;
  name: string;
  line: number;
  blocks: Block[];
}

export interface Extracted {
  tours: Tour[];
  skipped: { file: string; line: number; reason: string }[];
  errors: string[];
}

const TOUR = /^<!--\s*tour:\s*(.+?)\s*-->\s*$/;
const NOT_A_TOUR = /^<!--\s*not a tour:\s*(.+?)\s*-->\s*$/;
const FENCE = /^(`{3,}|~{3,})\s*([^\s`]*)/;

export function extract(file: string, markdown: string): Extracted {
  const lines = markdown.split("\n");
  const out: Extracted = { tours: [], skipped: [], errors: [] };
  let tour: Tour | undefined;
  let skipReason: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const t = TOUR.exec(line);
    if (t) {
      tour = { file, name: t[1]!, line: i + 1, blocks: [] };
      out.tours.push(tour);
      continue;
    }
    const n = NOT_A_TOUR.exec(line);
    if (n) {
      skipReason = n[1]!;
      continue;
    }
    const f = FENCE.exec(line);
    if (!f) {
      if (line.trim() !== "") skipReason = undefined;
      continue;
    }
    const fence = f[1]!;
    const lang = f[2]!;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.startsWith(fence)) body.push(lines[j++]!);
    const at = `${file}:${i + 1}`;
    if (["bash", "shell", "console", "zsh", "shell-session"].includes(lang)) {
      out.errors.push(`${at}: a \`${lang}\` fence: make it \`sh\` (a tour, or marked not a tour)`);
    } else if (lang !== "sh") {
      if (body.some((l) => l.startsWith("$ "))) out.errors.push(`${at}: a \`$ \` transcript in a \`${lang || "plain"}\` fence: make it \`sh\` (a tour, or marked not a tour)`);
    } else if (skipReason !== undefined) {
      out.skipped.push({ file, line: i + 1, reason: skipReason });
    } else if (!tour) {
      out.errors.push(`${at}: an \`sh\` block outside any tour: put <!-- tour: NAME --> before it, or <!-- not a tour: REASON --> right above it`);
    } else {
      tour.blocks.push(parseBlock(file, i + 1, body));
    }
    skipReason = undefined;
    i = j;
  }
  for (const t of out.tours) if (t.blocks.length === 0) out.errors.push(`${t.file}:${t.line}: tour '${t.name}' has no \`sh\` block`);
  return out;
}

export function parseBlock(file: string, line: number, body: string[]): Block {
  const text = body.join("\n");
  if (!body.some((l) => l.startsWith("$ "))) return { file, line, text, script: true, steps: [] };
  const steps: Step[] = [];
  for (let i = 0; i < body.length; i++) {
    const l = body[i]!;
    if (!l.startsWith("$ ")) {
      const last = steps[steps.length - 1];
      if (last && !l.startsWith("#") && l.trim() !== "" && l.trim() !== "…") last.expected.push(l);
      continue;
    }
    const cmd = [l.slice(2)];
    while (cmd[cmd.length - 1]!.endsWith("\\") && i + 1 < body.length) cmd.push(body[++i]!);
    const heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(cmd.join("\n"));
    if (heredoc) while (i + 1 < body.length && cmd[cmd.length - 1] !== heredoc[1]) cmd.push(body[++i]!);
    const command = cmd.join("\n");
    const exit = /#\s*exit\s+(\d+)\s*$/.exec(cmd[0]!);
    steps.push({ command, expected: [], exit: exit ? Number(exit[1]) : 0 });
  }
  return { file, line, text, script: false, steps };
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim();

function lineMatcher(expected: string): RegExp {
  const parts = norm(expected)
    .split("…")
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`);
}

/** The first expected line not found (in order) in the actual output, or undefined when all are. */
export function missingLine(expected: string[], actual: string): string | undefined {
  const lines = actual.split("\n").map(norm);
  let at = 0;
  for (const e of expected) {
    const re = lineMatcher(e);
    while (at < lines.length && !re.test(lines[at]!)) at++;
    if (at === lines.length) return e;
    at++;
  }
  return undefined;
}

export interface TourResult {
  ok: boolean;
  report: string; // empty when ok
}

const MARK = "@@unwind-docs-";

function script(tour: Tour): string {
  // One pipe for both streams: on two, a command's stderr could reach us before the marker (on stdout) that ends
  // the command before it, and be judged as that one's output (it did, under load).
  const parts = ["exec </dev/null 2>&1", "set +e", `__m() { printf '\\n${MARK}%s@@\\n' "$1"; }`];
  tour.blocks.forEach((b, bi) => {
    if (b.script) {
      parts.push(`__m 'begin ${bi}.0'`, "set -e", b.text, "set +e", `__m 'end ${bi}.0 0'`);
      return;
    }
    b.steps.forEach((s, si) => {
      parts.push(`__m 'begin ${bi}.${si}'`, s.command, `__m "end ${bi}.${si} $?"`);
    });
  });
  return `${parts.join("\n")}\n`;
}

function envFor(home: string, tmp: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("GIT_") || k.startsWith("CLAUDE") || k.startsWith("GEMINI") || k.startsWith("CODEX")) continue;
    if (k.startsWith("UNWIND_") && k !== "UNWIND_HOOK_BUDGET_MS") continue;
    if (k === "FORCE_COLOR" || k.startsWith("npm_")) continue;
    env[k] = v;
  }
  return { ...env, HOME: home, TMPDIR: tmp, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1", PATH: `${join(REPO, "bin")}:${process.env.PATH}`, LC_ALL: "C.UTF-8" };
}

/** Runs a tour in `dir` (an empty directory: the scratch home and repository are made under it). */
export async function runTour(tour: Tour, dir: string, timeoutMs = 120_000): Promise<TourResult> {
  const home = join(dir, "home");
  const work = join(dir, "work");
  const tmp = join(dir, "tmp");
  for (const d of [home, work, tmp]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = A Person\n\temail = person@example.com\n[init]\n\tdefaultBranch = main\n[core]\n\tautocrlf = false\n[advice]\n\tdetachedHead = false\n");
  const { output, code } = await new Promise<{ output: string; code: number | null }>((done) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-c", script(tour)], { cwd: work, env: envFor(home, tmp), stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n(the tour was stopped after ${timeoutMs / 1000} s)\n`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ output, code });
    });
  });
  stopWatchers(work);
  return judge(tour, output, code);
}

// A tour that failed before its `unwind watch stop` leaves the watcher daemon it started running (it runs until
// stopped): stop it by the pid its own info file names, so a broken doc costs no process that outlives the test.
function stopWatchers(work: string): void {
  for (const repo of readdirSync(work)) {
    const dir = join(work, repo, ".git", "unwind", "watch");
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      try {
        process.kill(JSON.parse(readFileSync(join(dir, f), "utf8")).pid, "SIGTERM");
      } catch {}
    }
  }
}

function judge(tour: Tour, output: string, code: number | null): TourResult {
  const got = new Map<string, { out: string; exit: number | undefined }>();
  const re = new RegExp(`\\n?${MARK}begin (\\d+\\.\\d+)@@\\n([\\s\\S]*?)(?:\\n${MARK}end \\1 (\\d+)@@\\n|$)`, "g");
  for (const m of output.matchAll(re)) got.set(m[1]!, { out: m[2]!.replace(/\n+$/, ""), exit: m[3] === undefined ? undefined : Number(m[3]) });
  for (const [bi, b] of tour.blocks.entries()) {
    const where = `${b.file}:${b.line} (tour '${tour.name}')`;
    if (b.script) {
      const r = got.get(`${bi}.0`);
      if (!r || r.exit === undefined) {
        return fail(`${where}: the script block stopped (shell exit ${code}):\n${b.text}\n--- its output:\n${r?.out ?? "(none: it never started)"}`);
      }
      continue;
    }
    for (const [si, s] of b.steps.entries()) {
      const r = got.get(`${bi}.${si}`);
      const wrong = !r || r.exit === undefined ? `the shell stopped here (exit ${code})` : r.exit !== s.exit ? `exit ${r.exit}, the doc says ${s.exit}` : undefined;
      const missing = r ? missingLine(s.expected, r.out) : undefined;
      if (wrong || missing !== undefined) {
        const why = wrong ?? `this line is not in its output (in order): ${missing}`;
        return fail(`${where}: $ ${s.command}\n  ${why}\n--- the block as it ran, ready to paste:\n${pasteable(b, bi, got)}`);
      }
    }
  }
  return { ok: true, report: "" };
}

function pasteable(b: Block, bi: number, got: Map<string, { out: string; exit: number | undefined }>): string {
  return b.steps
    .map((s, si) => {
      const r = got.get(`${bi}.${si}`);
      const [first, ...rest] = s.command.split("\n");
      const bare = first!.replace(/\s*#\s*exit\s+\d+\s*$/, "");
      const exit = r?.exit !== undefined && r.exit !== 0 ? `   # exit ${r.exit}` : "";
      return [`$ ${bare}${exit}`, ...rest, ...(r && r.out !== "" ? [r.out] : [])].join("\n");
    })
    .join("\n");
}

const fail = (report: string): TourResult => ({ ok: false, report });

/** The relative links of a doc whose file does not exist, resolved from the doc's own directory. */
export function brokenLinks(file: string, markdown: string): string[] {
  const broken: string[] = [];
  for (const m of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!.split("#")[0]!;
    if (target === "" || /^[a-z]+:/.test(target)) continue;
    if (!existsSync(join(REPO, dirname(file), target))) broken.push(`${file}: ${m[1]}`);
  }
  return broken;
}
