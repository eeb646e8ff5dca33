import { Command, CommanderError, Option } from "@commander-js/extra-typings";
import { Exit, UnwindError, usage, type ExitCode } from "../domain/errors.js";
import type { Globals } from "./globals.js";
import type { Output } from "./render.js";


type Handler = () => Promise<Output>;

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw usage(`${name} ${v}: expected a whole number of 1 or more`);
  return n;
};

const collect = (v: string, prev: string[] = []) => [...prev, v];

/**
 * The command line: a thin, typed shell. Each action only parses and hands
 * over to its command module, loaded when invoked, which returns data.
 */
export function buildProgram(run: (globals: Globals, h: Handler) => void): Command {
  const program = new Command()
    .name("unwind")
    .description("A flight recorder and precise undo for AI coding agents.")
    .version("0.1.0")
    .option("--root <dir>", "the work tree to guard (default: the repository of the current directory)")
    .option("--json", "print exactly one JSON document on stdout")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  const g = (cmd: { optsWithGlobals(): unknown }) => cmd.optsWithGlobals() as Globals;
  const scopeOptions = (c: Command) =>
    c
      .option("--session <id>", "a session: full name, bare id, or unique prefix of 6+ characters")
      .option("--call <id>", "one tool call")
      .option("--task <id>", "a task")
      .option("--snapshot <id>", "changes since this snapshot")
      .option("--to <id>", "with --snapshot: up to this snapshot (default: the work tree now)")
      .option("--run <id>", "a wrapped run");

  program
    .command("snapshot")
    .description("take a tree snapshot of the work tree; prints its id")
    .option("--task <id>")
    .option("--session <id>")
    .option("--label <text>")
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/snapshot.js")).snapshot(g(this), opts));
    });

  program
    .command("snapshots")
    .description("list snapshots, newest first")
    .option("--task <id>")
    .option("--session <id>")
    .option("--limit <n>", "at most this many", int("--limit"))
    .option("--all", "snapshots of every worktree of the repository, not only this one")
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/snapshot.js")).snapshots(g(this), opts));
    });

  program
    .command("diff")
    .description("what changed from snapshot A to snapshot B (default: the work tree now)")
    .argument("<a>")
    .argument("[b]")
    .option("--stat", "a diffstat (default)")
    .option("--patch", "the full patch")
    .action(function (a, b, opts) {
      run(g(this), async () => (await import("./commands/snapshot.js")).diff(g(this), a, b, opts));
    });

  program
    .command("restore")
    .description("make the non-ignored work tree (or just PATHs) equal to a snapshot")
    .argument("<id>")
    .argument("[paths...]", "paths relative to the current directory, after --")
    .option("--dry-run", "compute the plan, change nothing")
    .option("--force", "restore paths that changed since, keeping what was there in the receipt")
    .option("--any-worktree", "allow a snapshot taken in another worktree of the repository")
    .action(function (id, paths, opts) {
      run(g(this), async () => (await import("./commands/undo.js")).restore(g(this), id, paths, opts));
    });

  scopeOptions(
    program
      .command("undo")
      .description("take a scope's changes back")
      .option("--dry-run", "compute the plan, change nothing")
      .option("--force", "restore regardless of later changes (the receipt keeps them)")
      .option("--merge", "three-way merge text files changed since, taking back only this scope's hunks")
      .option("--any-worktree", "with --snapshot: allow a snapshot taken in another worktree")
      .option("--since <when>", "only calls that started at or after this ISO time, or this long ago (2h, 3d)")
      .option("--path <glob>", "only paths matching (repeatable)", collect),
  ).action(function (opts) {
    run(g(this), async () => (await import("./commands/undo.js")).undo(g(this), opts));
  });

  scopeOptions(
    program
      .command("changes")
      .description("the change set of a scope")
      .option("--since <when>", "only calls that started at or after this ISO time, or this long ago (2h, 3d)")
      .option("--path <glob>", "only paths matching (repeatable)", collect),
  ).action(function (opts) {
    run(g(this), async () => (await import("./commands/undo.js")).changes(g(this), opts));
  });

  program
    .command("redo")
    .description("take an undo or restore back")
    .argument("<receipt>")
    .option("--dry-run", "compute the plan, change nothing")
    .action(function (id, opts) {
      run(g(this), async () => (await import("./commands/undo.js")).redo(g(this), id, opts));
    });

  program
    .command("receipts")
    .description("applied plans, newest first")
    .option("--limit <n>", "at most this many", int("--limit"))
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/store.js")).receipts(g(this), opts));
    });

  program
    .command("verify")
    .description("check every stored blob, record and the receipt chain; exit 4 on damage")
    .action(function () {
      run(g(this), async () => (await import("./commands/store.js")).verify(g(this)));
    });

  program
    .command("status")
    .description("the store: size, snapshots, receipts, recent capture errors")
    .action(function () {
      run(g(this), async () => (await import("./commands/store.js")).status(g(this)));
    });

  program
    .command("gc")
    .description("drop records and content older than the TTL that nothing live needs")
    .option("--ttl <duration>", "e.g. 30d, 12h (default 30d)")
    .option("--dry-run", "report, delete nothing")
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/store.js")).gc(g(this), opts));
    });

  const stack = program.command("stack").description("ordered branch stack of a task");
  for (const verb of ["push", "list", "clear"] as const) {
    stack
      .command(verb)
      .description(verb === "push" ? "record a branch as the next entry" : verb === "list" ? "the stack, oldest first" : "drop the task's stack refs")
      .addOption(new Option("--task <id>", "the task").makeOptionMandatory())
      .option("--branch <name>", "with push: the branch (default: the current one)")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/stack.js")).stack(g(this), verb, opts));
      });
  }

  program
    .command("init")
    .description("create the store; merge unwind's hooks into the harnesses' project settings")
    .option("--claude", "Claude Code: .claude/settings.json")
    .option("--codex", "Codex: .codex/hooks.json")
    .option("--gemini", "Gemini CLI: .gemini/settings.json")
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/capture.js")).init(g(this), opts));
    });

  program
    .command("hook")
    .description("capture one hook event from stdin (claude|codex|gemini); always exits 0")
    .argument("<harness>");

  program
    .command("record")
    .description("generic capture: file capture of PATHs, or a tree snapshot without PATHs")
    .argument("[paths...]")
    .requiredOption("--session <name>", "the session, e.g. myorch:run-42")
    .requiredOption("--phase <phase>", "pre or post")
    .option("--task <id>")
    .option("--agent <id>")
    .option("--tool <name>")
    .option("--call <id>", "pairs pre with post (default: derived from session, tool and paths)")
    .action(function (paths, opts) {
      run(g(this), async () => (await import("./commands/capture.js")).record(g(this), paths, opts));
    });

  program
    .command("sessions")
    .description("sessions with harness, agent, task, first/last time, calls, paths")
    .option("--task <id>")
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/sessions.js")).sessions(g(this), opts));
    });

  program
    .command("log")
    .description("calls, newest first, with the paths each changed")
    .option("--session <id>")
    .option("--task <id>")
    .option("--limit <n>", "at most this many (default 50)", int("--limit"))
    .action(function (opts) {
      run(g(this), async () => (await import("./commands/sessions.js")).log(g(this), opts));
    });

  program
    .command("task")
    .description("tasks bound to branches")
    .command("start")
    .description("bind a task to a branch (and its worktree), recording the fork point")
    .argument("<task>")
    .option("--branch <name>", "the task's branch, created from --onto if missing (default: task/<task>)")
    .option("--worktree <dir>", "the task's worktree (added on the branch if missing)")
    .option("--onto <branch>", "the integration branch (default: the current branch)")
    .action(function (task, opts) {
      run(g(this), async () => (await import("./commands/task.js")).taskStart(g(this), task, opts));
    });

  return program;
}

/** Parses argv, runs one handler, prints its output once, returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let pending: { globals: Globals; h: Handler } | null = null;
  const program = buildProgram((globals, h) => {
    pending = { globals, h };
  });
  const jsonWanted = argv.includes("--json");
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return Exit.ok;
      if (jsonWanted) printJsonError("E_USAGE", e.message.replace(/^error: /, ""));
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
  process.stdout.write(JSON.stringify({ error: { code, message, ...(hint ? { hint } : {}) } }, null, 2) + "\n");
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
