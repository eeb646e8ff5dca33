import { Command, CommanderError, Option, type OptionValues } from "@commander-js/extra-typings";
import type { SnapshotStart } from "../capture/snapshot.js";
import { Exit, UnwindError, usage, type ExitCode } from "../domain/errors.js";
import type * as Undo from "./commands/undo.js";
import { VERSION } from "../domain/version.js";
import type { Globals } from "./globals.js";
import { setColorMode, type ColorMode, type Output } from "./render.js";

type Handler = () => Promise<Output>;

/** Any command, whatever its arguments and options. */
type AnyCommand = Command<unknown[], OptionValues, OptionValues>;

/** The option type of a command module's handler (its `n`th parameter). */
type Opts<F extends (...a: never[]) => unknown, N extends number> = Parameters<F>[N];

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw usage(`${name} ${v}: expected a whole number of 1 or more`, `e.g. ${name} 20`);
  return n;
};

const port = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535) throw usage(`--port ${v}: expected a whole number from 0 to 65535`, "0 (the default) picks a free port");
  return n;
};

const collect = (v: string, prev: string[] = []) => [...prev, v];

const SINCE = "only those at or after this ISO time, or this long ago (2h, 3d)";
const ID = "an id, or a unique prefix or suffix of 6+ characters (as the lists show them)";

/** Adds the example every command's help ends with. */
function example<C extends { addHelpText(pos: "after", text: string): unknown }>(c: C, ...lines: string[]): C {
  c.addHelpText("after", `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((l) => `  $ ${l}`).join("\n")}`);
  return c;
}

/**
 * The command line: a thin, typed shell over the library (src/ops/). Each
 * action only parses and hands over to its command module, loaded when
 * invoked, which calls one operation and renders what it returns.
 */
export function buildProgram(run: (globals: Globals, h: Handler) => void, early: { start: SnapshotStart | null } = { start: null }): Command {
  const program = new Command()
    .name("unwind")
    .description("A flight recorder and precise undo for AI coding agents.")
    .version(VERSION)
    .option("--root <dir>", "the work tree to guard (default: the repository of the current directory)")
    .option("--json", "print exactly one JSON document on stdout (messages go to stderr)")
    .addOption(new Option("--color <when>", "colour in human output (NO_COLOR and FORCE_COLOR are honoured under auto)").choices(["auto", "always", "never"] as const).default("auto" as const))
    .showSuggestionAfterError(true)
    .showHelpAfterError(false)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // Errors from the parser read like unwind's own: one line, `unwind: ...`, and what to do.
      outputError: (s, write) => write(`unwind: ${s.replace(/^error: /, "").trimEnd()} (see unwind --help)\n`),
    });

  const g = (cmd: { optsWithGlobals(): unknown }) => {
    const o = cmd.optsWithGlobals() as Globals & { color?: ColorMode };
    setColorMode(o.color ?? "auto");
    return o;
  };
  // These add options a command shares with others; its action reads them through the command module's own option type.
  const scopeOptions = <C extends AnyCommand>(c: C): C =>
    c
      .option("--session <id>", "a session: full name, bare id, or unique prefix of 6+ characters")
      .option("--call <id>", "one tool call (with --session to pick among sessions that share the id)")
      .option("--task <name>", "a task: its sessions, or its branch when bound with `unwind task start`")
      .option("--snapshot <id>", `changes since this snapshot (${ID})`)
      .option("--to <id>", "with --snapshot: up to this snapshot (default: the work tree now)")
      .option("--run <id>", "a run capsule (not built yet)")
      .option("--baseline <key>", "a stage baseline (not built yet)")
      .option("--since <when>", "only calls that started at or after this ISO time, or this long ago (2h, 3d)")
      .option("--path <glob>", "only paths matching, relative to the current directory (repeatable)", collect)
      .option("--any-worktree", "with --snapshot: allow a snapshot taken in another worktree") as C;
  const reportOptions = <C extends AnyCommand>(c: C): C =>
    c
      .option("--dry-run", "plan only, change nothing; prints the plan's digest")
      .option("--expect <digest>", "apply only if the plan is still the one a dry run printed (else exit 3, nothing done)")
      .option("-q, --quiet", "only the summary line, not one line per path")
      .option("--all", "every path, however many (default: every conflict and the first 100 others)") as C;

  example(
    program
      .command("snapshot")
      .description("take a tree snapshot of the work tree; prints its id")
      .option("--task <name>", "label it with a task (default: $UNWIND_TASK)")
      .option("--session <id>", "label it with a session")
      .option("--label <text>", "a free-form label")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/snapshot.js")).snapshot(g(this), opts, early.start));
      }),
    'unwind snapshot --label "before the refactor"',
  );

  example(
    program
      .command("snapshots")
      .description("list snapshots, newest first")
      .option("--task <name>", "only those labelled with this task")
      .option("--session <id>", "only those labelled with this session")
      .option("-n, --limit <n>", "at most this many", int("--limit"))
      .option("--since <when>", SINCE)
      .option("--all", "snapshots of every worktree of the repository, not only this one")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/snapshot.js")).snapshots(g(this), opts));
      }),
    "unwind snapshots -n 5",
  );

  example(
    program
      .command("diff")
      .description("what changed from snapshot A to snapshot B (default: the work tree now)")
      .argument("[a]", `the earlier snapshot: ${ID}`)
      .argument("[b]", "the later snapshot (default: the work tree now)")
      .option("--last", "from this worktree's newest snapshot")
      .option("--stat", "a diffstat (default)")
      .option("--patch", "the full patch (with --json: in the document's `patch`)")
      .action(function (a, b, opts) {
        run(g(this), async () => (await import("./commands/snapshot.js")).diff(g(this), a, b, opts));
      }),
    "unwind diff --last --patch",
    "unwind diff 9af83b 1c2d3e",
  );

  example(
    reportOptions(
      program
        .command("restore")
        .description("make the non-ignored work tree (or just PATHs) equal to a snapshot; redoable")
        .argument("[id]", `the snapshot: ${ID}`)
        .argument("[paths...]", "only these paths, relative to the current directory, after --")
        .option("--last", "this worktree's newest snapshot")
        .option("--force", "restore paths that changed since, keeping what was there in the receipt")
        .option("--any-worktree", "allow a snapshot taken in another worktree of the repository"),
    ).action(function (id, paths, opts) {
      run(g(this), async () => (await import("./commands/undo.js")).restore(g(this), id, paths, opts as Opts<typeof Undo.restore, 3>));
    }),
    "unwind restore --last --dry-run",
    "unwind restore 9af83b -- src/app.ts",
  );

  example(
    reportOptions(
      scopeOptions(
        program
          .command("undo")
          .description("take a scope's changes back, and nothing else")
          .option("--force", "take back paths changed since too (the receipt keeps what is overwritten)")
          .option("--merge", "three-way merge text files changed since, taking back only this scope's hunks"),
      ),
    ).action(function (opts) {
      run(g(this), async () => (await import("./commands/undo.js")).undo(g(this), opts as Opts<typeof Undo.undo, 1>));
    }),
    "unwind undo --session claude:3f2a9c --dry-run",
    "unwind undo --session claude:3f2a9c --expect 5be1c0a9d2f4",
    "unwind undo --call toolu_01AbC --path 'src/**'",
  );

  example(
    scopeOptions(program.command("changes").description("what a scope changed, path by path, and who")).action(function (opts) {
      run(g(this), async () => (await import("./commands/undo.js")).changes(g(this), opts as Opts<typeof Undo.changes, 1>));
    }),
    "unwind changes --task login-form",
  );

  example(
    reportOptions(
      program
        .command("redo")
        .description("take an undo or restore back")
        .argument("[receipt]", `the receipt: ${ID}`)
        .option("--last", "this work tree's newest receipt")
        .option("--any-worktree", "allow a receipt applied in another worktree of the repository"),
    ).action(function (id, opts) {
      run(g(this), async () => (await import("./commands/undo.js")).redo(g(this), id, opts as Opts<typeof Undo.redo, 2>));
    }),
    "unwind redo --last",
  );

  example(
    program
      .command("sessions")
      .description("sessions with harness, agent, task, first/last time, calls, paths")
      .option("--task <name>", "only sessions labelled with this task")
      .option("-n, --limit <n>", "at most this many", int("--limit"))
      .option("--since <when>", SINCE)
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/sessions.js")).sessions(g(this), opts));
      }),
    "unwind sessions --since 2h",
  );

  example(
    program
      .command("log")
      .description("calls, newest first, with the paths each changed")
      .option("--session <id>", "only this session's calls")
      .option("--task <name>", "only calls labelled with this task")
      .option("-n, --limit <n>", "at most this many (default 50)", int("--limit"))
      .option("--since <when>", SINCE)
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/sessions.js")).log(g(this), opts));
      }),
    "unwind log --session claude:3f2a9c -n 10",
  );

  example(
    program
      .command("receipts")
      .description("applied plans (undo, restore, redo), newest first")
      .option("-n, --limit <n>", "at most this many", int("--limit"))
      .option("--since <when>", SINCE)
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/sessions.js")).receipts(g(this), opts));
      }),
    "unwind receipts -n 3",
  );

  example(
    program
      .command("verify")
      .description("check every stored blob, record and the receipt chain; exit 4 on damage")
      .action(function () {
        run(g(this), async () => (await import("./commands/store.js")).verify(g(this)));
      }),
    "unwind verify",
  );

  example(
    program
      .command("status")
      .description("the store: size, snapshots, receipts, capture errors not yet acknowledged")
      .option("--ack", "acknowledge the capture errors shown, so they are not shown again (the log keeps them)")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/store.js")).status(g(this), opts));
      }),
    "unwind status",
    "unwind status --ack",
  );

  example(
    program
      .command("gc")
      .description("drop records and content older than the TTL that nothing live needs")
      .option("--ttl <duration>", "e.g. 30d, 12h (default: the store's config, else 30d)")
      .option("--dry-run", "report, delete nothing")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/store.js")).gc(g(this), opts));
      }),
    "unwind gc --ttl 7d --dry-run",
  );

  const stack = program.command("stack").description("ordered branch stack of a task");
  const stackWhat = { push: "record a branch as the next entry", list: "the stack, oldest first", clear: "drop the task's stack refs (the branches stay)" } as const;
  for (const verb of ["push", "list", "clear"] as const) {
    example(
      stack
        .command(verb)
        .description(stackWhat[verb])
        .addOption(new Option("--task <name>", "the task").makeOptionMandatory())
        .option("--branch <name>", "with push: the branch (default: the current one)")
        .action(function (opts) {
          run(g(this), async () => (await import("./commands/task.js")).stack(g(this), verb, opts));
        }),
      `unwind stack ${verb} --task login-form`,
    );
  }

  example(
    program
      .command("init")
      .description("create the store; merge unwind's hooks into the harnesses' project settings (and with --mcp, register the MCP server)")
      .option("--claude", "Claude Code: .claude/settings.json")
      .option("--codex", "Codex: .codex/hooks.json")
      .option("--gemini", "Gemini CLI: .gemini/settings.json")
      .option("--mcp", "also register `unwind mcp` as an MCP server: Claude Code .mcp.json, Codex .codex/config.toml, Gemini CLI .gemini/settings.json")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/record.js")).init(g(this), opts));
      }),
    "unwind init --claude --codex",
    "unwind init --claude --mcp",
  );

  example(
    program.command("hook").description("capture one hook event from stdin (claude|codex|gemini); what the harness runs; always exits 0").argument("<harness>", "claude, codex or gemini"),
    "echo '{...}' | unwind hook claude   (unwind init writes this into the harness's settings)",
  );

  example(
    program
      .command("record")
      .description("generic capture: file capture of PATHs, or a tree snapshot without PATHs")
      .argument("[paths...]", "the files the call is about to change (pre) or changed (post)")
      .requiredOption("--session <name>", "the session, e.g. myorch:run-42")
      .requiredOption("--phase <phase>", "pre or post")
      .option("--task <name>", "label it with a task (default: $UNWIND_TASK)")
      .option("--agent <id>", "the agent that made the call")
      .option("--tool <name>", "the tool (default: record)")
      .option("--call <id>", "pairs pre with post (default: derived from session, tool and paths)")
      .action(function (paths, opts) {
        run(g(this), async () => (await import("./commands/record.js")).record(g(this), paths, opts));
      }),
    "unwind record --session myorch:run-42 --phase pre src/a.ts && edit src/a.ts && unwind record --session myorch:run-42 --phase post src/a.ts",
  );

  const task = program.command("task").description("tasks bound to branches");
  example(
    task
      .command("start")
      .description("bind a task to a branch (and its worktree), recording the fork point")
      .argument("<task>", "the task's name (1-128 characters git accepts in a ref name)")
      .option("--branch <name>", "the task's branch, created from --onto if missing (default: task/<task>)")
      .option("--worktree <dir>", "the task's worktree (added on the branch if missing)")
      .option("--onto <branch>", "the integration branch (default: the current branch)")
      .action(function (name, opts) {
        run(g(this), async () => (await import("./commands/task.js")).taskStart(g(this), name, opts));
      }),
    "unwind task start login-form --worktree ../login-form",
  );

  example(
    program
      .command("mcp")
      .description("the MCP server over stdio: agents inspect and take back their own work (register it with unwind init --mcp)")
      .action(function () {
        run(g(this), async () => (await import("./commands/mcp.js")).mcp(g(this)));
      }),
    "unwind init --claude --mcp   (registers `unwind mcp` in .mcp.json; the client starts it)",
  );

  example(
    program
      .command("ui")
      .description("the local web app: every agent's work on a live timeline, diffs, undo and restore previews, apply by plan digest, redo")
      .option("--port <n>", "the port on 127.0.0.1 (default: any free port)", port)
      .option("--no-open", "do not open a browser; only print the URL")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/ui.js")).ui(g(this), opts));
      }),
    "unwind ui --no-open --port 8765",
  );

  // In the contract (SPEC section 4) but not built yet: said so, never a silent no-op.
  const notBuilt: [string, string, string][] = [
    ["run", "run a command in a sealed run capsule", "9"],
    ["runs", "list run capsules", "9"],
    ["cleanup", "end a run's leftover processes by identity", "9"],
    ["baseline", "stage baselines: capture, list", "10"],
    ["revert-check", "the revert check of a stage", "10"],
    ["push", "share records through a git remote", "14"],
    ["fetch", "fetch shared records from a git remote", "14"],
  ];
  for (const [name, what, section] of notBuilt) {
    program
      .command(name)
      .description(`${what} (not built yet)`)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(function () {
        run(g(this), async () => {
          throw new UnwindError("E_NOT_BUILT", `unwind ${name} is not built yet`, { hint: `planned: SPEC section ${section}` });
        });
      });
  }
  task
    .command("list")
    .description("tasks with their evidence (not built yet)")
    .action(function () {
      run(g(this), async () => {
        throw new UnwindError("E_NOT_BUILT", "unwind task list is not built yet", { hint: "planned: SPEC section 6; see unwind sessions --task T meanwhile" });
      });
    });

  return program;
}

/**
 * Parses argv, runs one handler, prints its output once, returns the exit
 * code. `early`: the first phase of `unwind snapshot`, begun by bin/unwind
 * before this bundle loaded; the snapshot command finishes it.
 */
export async function runCli(argv: string[], early: { start: SnapshotStart | null } = { start: null }): Promise<number> {
  let pending: { globals: Globals; h: Handler } | null = null;
  const program = buildProgram((globals, h) => {
    pending = { globals, h };
  }, early);
  const jsonWanted = argv.includes("--json");
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return Exit.ok;
      if (jsonWanted) printJsonError("E_USAGE", e.message.replace(/^error: /, ""), "see unwind --help");
      return Exit.usage;
    }
    return reportError(e, jsonWanted);
  }
  const p = pending as { globals: Globals; h: Handler } | null;
  if (!p) {
    program.outputHelp({ error: true });
    return Exit.usage;
  }
  try {
    const out = await p.h();
    if (p.globals.json) process.stdout.write(JSON.stringify(out.json, null, 2) + "\n");
    else if (out.human) process.stdout.write(out.human.endsWith("\n") ? out.human : out.human + "\n");
    return out.exit;
  } catch (e) {
    return reportError(e, Boolean(p.globals.json));
  }
}

function printJsonError(code: string, message: string, hint?: string): void {
  process.stdout.write(JSON.stringify({ error: { code, message, hint: hint ?? null } }, null, 2) + "\n");
}

function reportError(e: unknown, json: boolean): ExitCode {
  if (e instanceof UnwindError) {
    process.stderr.write(`unwind: ${e.message}${e.hint ? ` (${e.hint})` : ""}\n`);
    if (json) printJsonError(e.code, e.message, e.hint);
    return e.exit;
  }
  const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`unwind: internal error: ${msg}\nThis is a bug in unwind; please report it with the command you ran.\n`);
  if (json) printJsonError("E_INTERNAL", e instanceof Error ? e.message : String(e));
  return Exit.internal;
}
