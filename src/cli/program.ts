import { Argument, Command, CommanderError, Option, type OptionValues } from "@commander-js/extra-typings";
import type { SnapshotStart } from "../capture/snapshot.js";
import { Exit, usage } from "../domain/errors.js";
import { printJsonError, reportError } from "./report-error.js";
import type * as Undo from "./commands/undo.js";
import { STORE_FORMAT, VERSION } from "../domain/version.js";
import { ID_HELP, KINDS, NARROWING, SCOPE_KINDS, withKeys } from "../scope/kinds.js";
import type { Globals } from "./globals.js";
import { setColorMode, type ColorMode, type Output } from "./render.js";
import { EXAMPLES, SHELLS } from "./describe.js";
import { writeJson } from "./json-out.js";

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
const ID = ID_HELP;

/** One option per scope kind, from the one table of kinds; a narrowing option (--to) right after the kind it narrows. */
function scopeFlags<C extends AnyCommand>(c: C): C {
  for (const k of KINDS) {
    c.option(SCOPE_KINDS[k].flag, SCOPE_KINDS[k].help);
    for (const w of withKeys(k)) if (w in NARROWING) c.option(NARROWING[w as keyof typeof NARROWING].flag, NARROWING[w as keyof typeof NARROWING].help);
  }
  return c;
}

/** Adds the example every command's help ends with. */
function example<C extends { addHelpText(pos: "after", text: string): unknown }>(c: C, ...lines: string[]): C {
  EXAMPLES.set(c, lines);
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
    .version(`${VERSION} (store format ${STORE_FORMAT})`)
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
    scopeFlags(c)
      .option("--prefix <dir>", "with --baseline: only under this prefix, one the baseline covers (repeatable)", collect)
      .option("--since <when>", "only calls that started at or after this ISO time, or this long ago (2h, 3d)")
      .option("--path <glob>", "only paths matching, relative to the current directory (repeatable)", collect)
      .option("--any-worktree", "with --snapshot or --baseline: allow one taken in another worktree") as C;
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
          .option("--merge", "three-way merge text files changed since, taking back only this scope's hunks")
          .option("--safe-only", "with --run: take back only review and deny paths; allow paths are kept (skip / retained)")
          .option("--hunk <n,...>", "with one --path: take back only these hunks of its change (numbered as changes --patch shows them)")
          .option("--patch", "with --dry-run: what each path would hold after, as a patch from what it holds now"),
      ),
    ).action(function (opts) {
      run(g(this), async () => (await import("./commands/undo.js")).undo(g(this), opts as Opts<typeof Undo.undo, 1>));
    }),
    "unwind undo --session claude:3f2a9c --dry-run",
    "unwind undo --session claude:3f2a9c --dry-run --patch",
    "unwind undo --session claude:3f2a9c --expect 5be1c0a9d2f4",
    "unwind undo --call toolu_01AbC --path 'src/**'",
    "unwind undo --run 1a2b3c4d --safe-only",
    "unwind undo --session claude:3f2a9c --path src/app.ts --hunk 2",
  );

  example(
    scopeOptions(
      program
        .command("changes")
        .description("what a scope changed, path by path, and who")
        .option("--patch", "each text change as a patch in git's format, its hunks numbered (git apply -R takes it back)"),
    ).action(function (opts) {
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
      .option("--local", "Claude Code: this machine's .claude/settings.local.json instead (not shared through the repository)")
      .option("--codex", "Codex: .codex/hooks.json")
      .option("--gemini", "Gemini CLI: .gemini/settings.json")
      .option("--qwen", "Qwen Code: .qwen/settings.json")
      .option("--copilot", "GitHub Copilot CLI: .github/hooks/unwind.json")
      .option("--opencode", "OpenCode: a plugin, .opencode/plugin/unwind.js")
      .option("--cline", "Cline: hook files in .clinerules/hooks/")
      .option("--mcp", "also register `unwind mcp` as an MCP server: Claude Code .mcp.json, Codex .codex/config.toml, Gemini CLI .gemini/settings.json, Qwen Code .qwen/settings.json")
      .option("--mcp-allow <own|any>", "what an agent may take back over MCP: own (its own session's work; the default) or any; kept in the store's config.json")
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/record.js")).init(g(this), opts));
      }),
    "unwind init --claude --codex",
    "unwind init --opencode --cline",
    "unwind init --claude --mcp",
    "unwind init --mcp-allow any",
  );

  example(
    program
      .command("hook")
      .description("capture one hook event from stdin (claude|codex|gemini|qwen|copilot|opencode|cline); what the harness runs; always exits 0")
      .argument("<harness>", "claude, codex, gemini, qwen, copilot, opencode or cline")
      .argument("[event]", "copilot only: the event (its payload does not name it)"),
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

  example(
    program
      .command("import")
      .description("records from a client's own session transcript, for sessions run before init or while hooks did not fire (marked imported; shell effects unknown)")
      .argument("[session]", "a session id (or a unique part of 6+ characters), or a transcript's path; default: every session of this project")
      .option("--claude", "Claude Code: its transcripts under ~/.claude/projects/ ($CLAUDE_CONFIG_DIR)")
      .option("--codex", "Codex: refused, saying why (its logs do not hold what a file held before)")
      .option("--dry-run", "say what would be imported; write nothing")
      .action(function (session, opts) {
        run(g(this), async () => (await import("./commands/import.js")).importCmd(g(this), session, opts));
      }),
    "unwind import --claude --dry-run",
    "unwind import --claude 3f2a9c1e",
    "unwind undo --session claude:3f2a9c1e --dry-run",
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

  const watchCmd = example(program.command("watch").description("a daemon that tells snapshots what changed, so they need not scan every file"), "unwind watch start", "unwind watch status --json");
  const watchWhat = {
    start: "start watching this work tree (one daemon per root; a second start says it is already running)",
    stop: "stop this work tree's watcher",
    status: "whether a watcher runs, since when, its pid, events seen, and whether it can vouch for the next snapshot",
  } as const;
  for (const verb of ["start", "stop", "status"] as const) {
    example(
      watchCmd
        .command(verb)
        .description(watchWhat[verb])
        .action(function () {
          run(g(this), async () => (await import("./commands/watch.js")).watch(g(this), verb));
        }),
      `unwind watch ${verb}`,
    );
  }

  const baseline = program.command("baseline").description("stage baselines: the state a stage found, per path, for undo and the revert check");
  example(
    baseline
      .command("capture")
      .description("record every non-ignored file under the prefixes; a path already in the baseline is never captured again")
      .addOption(new Option("--key <key>", "the baseline's key: the stage attempt, and the task its agents are labelled with (UNWIND_TASK)").makeOptionMandatory())
      .option("--prefix <dir>", "a directory to govern, relative to the current directory (repeatable; . is the whole tree)", collect)
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/baseline.js")).capture(g(this), opts));
      }),
    "unwind baseline capture --key story-19-implementer --prefix tests",
  );
  example(
    baseline
      .command("list")
      .description("baselines: keys, prefixes, path counts, first and last capture")
      .action(function () {
        run(g(this), async () => (await import("./commands/baseline.js")).list(g(this)));
      }),
    "unwind baseline list",
  );

  example(
    program
      .command("revert-check")
      .description("were a stage's edits under the prefixes needed? revert them to the baseline in a throwaway worktree and run the suite there")
      .argument("[command...]", "the test suite, after --")
      .addOption(new Option("--key <key>", "the baseline captured when the stage started").makeOptionMandatory())
      .option("--prefix <dir>", "the governed prefix, relative to the current directory (repeatable)", collect)
      .option("--grant <glob>", "edits the stage may make: not reverted, not counted (repeatable)", collect)
      .option("--link <dir>", "an ignored directory (node_modules) to symlink into the worktree (repeatable)", collect)
      .option("--timeout <duration>", "how long the suite may run (default 30m)")
      .option("--keep", "leave the throwaway worktree in place")
      .option("--out <file>", "also write the result (JSON) here")
      .action(function (command, opts) {
        run(g(this), async () => (await import("./commands/baseline.js")).revertCheck(g(this), command, opts));
      }),
    "unwind revert-check --key story-19-implementer --prefix tests --link node_modules --out revert-check-result.json -- npm test",
  );

  example(
    program
      .command("run")
      .description("run a command in a sealed run capsule (snapshots around it, its processes recorded, a policy decision per path); `run show <id>` shows one")
      .usage("[options] -- CMD [ARG...]\n       unwind run show <id>")
      .argument("[command...]", "the command and its arguments, after --")
      .option("--id <id>", "name the run (default: run-<time>-<8 hex>)")
      .option("--task <name>", "label the run and the hook sessions inside it with a task (default: $UNWIND_TASK)")
      .option("--policy <file>", "allow / review / deny globs (default: .unwind/policy.json in the root, else everything review)")
      .option("--timeout <duration>", "end the command's process group after this long: TERM, a grace period, KILL (e.g. 90s, 10m)")
      .option("--no-rollback", "record hashes only, keep no earlier bytes (undo of the run is then refused)")
      .option("--keep-processes", "leave processes the command left running (they stay recorded for unwind cleanup)")
      .action(function (argv, opts) {
        // `run show ID` shows a capsule; `run -- show ...` runs a command named show: only what came before `--` is ours.
        const raw = (this.parent as unknown as { rawArgs?: string[] } | null)?.rawArgs ?? [];
        const dash = raw.indexOf("--");
        const showAt = raw.indexOf("show", raw.indexOf("run") + 1);
        if (argv[0] === "show" && showAt >= 0 && (dash < 0 || showAt < dash)) {
          const given = Object.entries(opts).filter(([k, v]) => v !== undefined && !(k === "rollback" && v === true));
          if (given.length > 0) throw usage(`run show takes no --${given[0]![0].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, "unwind run show <id>");
          if (argv.length !== 2) throw usage(argv.length < 2 ? "run show: no run given" : "run show takes one run id", "list them with: unwind runs");
          run(g(this), async () => (await import("./commands/run.js")).runShow(g(this), argv[1]!));
          return;
        }
        run(g(this), async () => (await import("./commands/run.js")).run(g(this), argv, opts));
      }),
    "unwind run -- claude -p 'fix the failing test'",
    "unwind run --policy .unwind/policy.json --timeout 30m -- ./codegen.sh",
    "unwind run show 1a2b3c4d",
  );
  example(
    program
      .command("runs")
      .description("run capsules, newest first: id, start, duration, exit, changes per decision, command")
      .option("--task <name>", "only runs labelled with this task")
      .option("-n, --limit <n>", "at most this many", int("--limit"))
      .option("--since <when>", SINCE)
      .action(function (opts) {
        run(g(this), async () => (await import("./commands/run.js")).runs(g(this), opts));
      }),
    "unwind runs -n 5",
  );
  example(
    program
      .command("cleanup")
      .description("end a run's leftover processes: only those it recorded, only while pid and start time both still match")
      .argument("<id>", `the run: ${ID}`)
      .option("--grace <duration>", "how long to wait between TERM and KILL (default 5s)")
      .option("--dry-run", "say what would be signalled; signal nothing")
      .action(function (id, opts) {
        run(g(this), async () => (await import("./commands/run.js")).cleanup(g(this), id, opts));
      }),
    "unwind cleanup 1a2b3c4d --dry-run",
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

  // Sharing records through a git remote (SPEC section 14).
  example(
    program
      .command("push")
      .description("send sessions' records to a git remote under refs/unwind/shared/<origin>/ (never part of a default git push)")
      .argument("[remote]", "a configured remote, a URL or a path (default: origin)")
      .option("--session <id>", "a session: full name, bare id, or unique prefix of 6+ characters (repeatable)", collect)
      .option("--task <name>", "every session labelled with this task")
      .option("--run <id>", `a run capsule: ${ID}`)
      .option("--all", "every session recorded in this work tree")
      .option("--exclude <glob>", "leave out the content of matching paths, root-relative (repeatable); they are not-captured on the other side", collect)
      .option("--include-secrets", "also send secret-looking paths (.env*, *.pem, *.key, id_*, .npmrc, .netrc, *.p12, ... and share.secretPatterns) and content holding a token")
      .option("--dry-run", "say what would go, how many bytes and what is left out and why; write and push nothing")
      .action(function (remote, opts) {
        run(g(this), async () => (await import("./commands/share.js")).push(g(this), remote, opts));
      }),
    "unwind push origin --session 3f2a9c1e --dry-run",
    "unwind push --task ci-42 --exclude 'fixtures/private/**'",
  );
  example(
    program
      .command("fetch")
      .description("fetch refs/unwind/shared/* from a git remote; the records become readable (never writable) here")
      .argument("[remote]", "a configured remote, a URL or a path (default: origin)")
      .option("--origin <name>", "only this origin's records (repeatable); default: every origin's", collect)
      .action(function (remote, opts) {
        run(g(this), async () => (await import("./commands/share.js")).fetch(g(this), remote, opts));
      }),
    "unwind fetch && unwind sessions",
    "unwind fetch origin --origin ci-runner-7",
  );
  example(
    task
      .command("list")
      .description("tasks with their evidence: branch bindings (task start, orchestrator records), labelled sessions, runs")
      .action(function () {
        run(g(this), async () => (await import("./commands/task.js")).taskList(g(this)));
      }),
    "unwind task list",
    "unwind task list --json",
  );

  example(
    program
      .command("completion")
      .description("print the shell completion script for bash, zsh or fish (commands, options, option values)")
      .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(SHELLS))
      .action(function (shell) {
        run(g(this), async () => (await import("./commands/help.js")).completion(program, shell));
      }),
    "unwind completion fish > ~/.config/fish/completions/unwind.fish",
    'eval "$(unwind completion bash)"   (in ~/.bashrc; zsh: in ~/.zshrc after compinit)',
  );

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
    // `unwind` alone (global options at most): commander would print the command list as an error.
    const { operands, unknown } = program.parseOptions(argv);
    if (operands.length === 0 && unknown.length === 0 && !argv.some((a) => /^-(h|V|-help|-version)$/.test(a))) pending = startScreen(program);
    else await program.parseAsync(argv, { from: "user" });
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
    const stream = out.stream === "stderr" ? process.stderr : process.stdout;
    if (p.globals.json) await writeJson(stream, out.json, out.stream === "stderr" ? 0 : 2);
    else if (out.human) stream.write(out.human.endsWith("\n") ? out.human : out.human + "\n");
    return out.exit;
  } catch (e) {
    return reportError(e, Boolean(p.globals.json));
  }
}

/** A person's first screen: where this work tree stands, what to type next. */
function startScreen(program: Command): { globals: Globals; h: Handler } {
  const globals = program.opts() as Globals & { color?: ColorMode };
  setColorMode(globals.color ?? "auto");
  return { globals, h: async () => (await import("./commands/help.js")).startHere(globals, program) };
}
