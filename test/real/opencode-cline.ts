/**
 * OpenCode and Cline for test/real, run like the others (clients.ts): from
 * the npm registry at an exact version, headless in a loopback-only network
 * namespace, against the fake model server's OpenAI Chat Completions.
 *
 * Versions: UNWIND_REAL_OPENCODE, UNWIND_REAL_CLINE override the pinned ones.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, type ClientSpec, installPackage, RECORDER, type RunResult, runInNamespace, type Script, tail } from "./clients.js";

export type OtherClient = "opencode" | "cline";

/** The versions this suite was written against (docs/clients.md, seen 2026-12-03). */
export const OTHER_CLIENTS: Record<OtherClient, ClientSpec> = {
  opencode: { pkg: "opencode-ai", bin: "opencode", version: "1.18.33", versionEnv: "UNWIND_REAL_OPENCODE" },
  cline: { pkg: "cline", bin: "cline", version: "3.0.65", versionEnv: "UNWIND_REAL_CLINE" },
};

export function otherVersion(name: OtherClient): string {
  const spec = OTHER_CLIENTS[name];
  return process.env[spec.versionEnv] || spec.version;
}

export function installOther(name: OtherClient): string {
  return installPackage(OTHER_CLIENTS[name], otherVersion(name));
}

const PROMPT = "Do the scripted work.";

/**
 * What OpenCode needs in a folder it loads configuration from so that it
 * does not run `npm install @opencode-ai/plugin` there (offline that stalls
 * about 70 s before it gives up): node_modules/, and a package.json whose
 * lock file lists that package. The .gitignore is the one OpenCode writes
 * where there is none.
 */
export function quietOpencodeFolder(dir: string): void {
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  const deps = { "@opencode-ai/plugin": "*" };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ dependencies: deps })}\n`);
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify({ name: "opencode-config", lockfileVersion: 3, packages: { "": { dependencies: deps } } })}\n`);
  writeFileSync(join(dir, ".gitignore"), "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n");
}

/**
 * Keeps every payload unwind's hook is given in `<work>/payloads`, beside
 * unwind: OpenCode's plugin command is wrapped to hand its stdin to the
 * recorder first; for Cline the same events get a recorder hook in the
 * user's hook folder (~/.cline/hooks, in the test's HOME), which Cline runs
 * along with the project's.
 */
export function addOtherRecorder(repo: string, name: OtherClient, work: string): void {
  const dir = join(work, "payloads");
  mkdirSync(dir, { recursive: true });
  const record = `${process.execPath} ${RECORDER} ${dir}`;
  if (name === "opencode") {
    const plugin = join(repo, ".opencode", "plugin", "unwind.js");
    const text = readFileSync(plugin, "utf8");
    const m = /^const COMMAND = ("(?:[^"\\]|\\.)*");$/m.exec(text);
    if (m === null) throw new Error(`no COMMAND line in ${plugin}`);
    const unwindCommand = JSON.parse(m[1]!) as string;
    const wrapped = `f=$(mktemp); cat > "$f"; ${record} < "$f"; ${unwindCommand} < "$f"; rm -f "$f"`;
    writeFileSync(plugin, text.replace(m[0], `const COMMAND = ${JSON.stringify(wrapped)};`));
    return;
  }
  const hooks = join(work, "home", ".cline", "hooks");
  mkdirSync(hooks, { recursive: true });
  for (const event of ["PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel"]) {
    writeFileSync(join(hooks, event), `#!/bin/sh\n${record}\n`);
    chmodSync(join(hooks, event), 0o755);
  }
}

const unshare = (program: string) => ["-n", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', program];

/** Runs `name` headless in `repo` against the fake model server serving `script`; `work` holds its HOME and what it left. */
export function runOther(name: OtherClient, bin: string, repo: string, script: Script, work: string, timeoutMs = 120_000): RunResult {
  const env = baseEnv(work);
  const templates: string[] = [];
  let args: string[];
  if (name === "opencode") {
    const config = {
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          name: "fake",
          options: { baseURL: "http://127.0.0.1:{{PORT}}/v1", apiKey: "fake-key-for-the-fake-server" },
          models: { "fake-model": { name: "fake-model", tool_call: true } },
        },
      },
      model: "fake/fake-model",
      small_model: "fake/fake-model",
      permission: { edit: "allow", bash: "allow", webfetch: "allow", external_directory: "allow" },
      autoupdate: false,
      share: "disabled",
    };
    quietOpencodeFolder(join(env.XDG_CONFIG_HOME!, "opencode"));
    Object.assign(env, { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1" });
    args = ["run", "--auto", PROMPT];
  } else {
    // Without it Cline starts a hub daemon that outlives the run.
    Object.assign(env, { CLINE_SESSION_BACKEND_MODE: "local", CLINE_NO_AUTO_UPDATE: "1" });
    // `cline auth` checks the URL, so the port is put in after: it writes providers.json and talks to nothing.
    const auth = spawnSync("unshare", [...unshare(bin), "auth", "-p", "openai-compatible", "-k", "fake-key-for-the-fake-server", "-m", "fake-model", "-b", "http://127.0.0.1:1/v1"], {
      env,
      cwd: repo,
      encoding: "utf8",
      timeout: 60_000,
    });
    if (auth.status !== 0) throw new Error(`cline auth failed (exit ${auth.status ?? auth.signal}): ${tail(`${auth.stdout}${auth.stderr}`, 20)}`);
    const providers = join(env.HOME!, ".cline", "data", "settings", "providers.json");
    writeFileSync(providers, readFileSync(providers, "utf8").replaceAll("http://127.0.0.1:1/v1", "http://127.0.0.1:{{PORT}}/v1"));
    templates.push(providers);
    // The prompt must hold a space: one word is taken for a subcommand.
    args = ["--json", "--auto-approve", "true", "-c", repo, PROMPT];
  }
  return runInNamespace(`${name} ${otherVersion(name)}`, bin, args, env, templates, repo, script, work, timeoutMs);
}
