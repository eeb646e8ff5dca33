// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the completion scripts are shell code, whose ${...} is the shell's.
/**
 * What the shell completions (`unwind completion bash|zsh|fish`) and the man
 * page (dist/unwind.1, written at build) say, read from the command table
 * the parser itself runs on (src/cli/program.ts): a command or option added
 * there is completed and documented without a second list to keep.
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { STORE_FORMAT, VERSION } from "../domain/version.js";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

interface OptionEntry {
  long: string;
  short: string | null;
  flags: string;
  description: string;
  /** The option takes a value; `choices` when only some are allowed. */
  value: boolean;
  choices: string[] | null;
}

interface CommandEntry {
  /** Where the command sits: "unwind", "unwind/stack", "unwind/stack/push". */
  key: string;
  words: string[];
  description: string;
  usage: string;
  options: OptionEntry[];
  /** The choices of its first argument, when it has some (`completion <shell>`). */
  argChoices: string[] | null;
  children: CommandEntry[];
  examples: string[];
}

/** Any command of the table, whatever its arguments and options. */
type AnyCommand = CommandUnknownOpts;

/** The examples each command's help ends with (program.ts records them as it adds them). */
export const EXAMPLES = new WeakMap<object, string[]>();

function optionsOf(cmd: AnyCommand): OptionEntry[] {
  const out: OptionEntry[] = [];
  for (const o of cmd.options) {
    if (!o.long || o.hidden) continue;
    out.push({ long: o.long, short: o.short ?? null, flags: o.flags, description: o.description, value: o.required || o.optional, choices: o.argChoices ?? null });
  }
  out.push({ long: "--help", short: "-h", flags: "-h, --help", description: "display help for the command", value: false, choices: null });
  return out;
}

function entry(cmd: AnyCommand, words: string[]): CommandEntry {
  return {
    key: ["unwind", ...words].join("/"),
    words,
    description: cmd.description(),
    usage: cmd.usage(),
    options: optionsOf(cmd),
    argChoices: cmd.registeredArguments[0]?.argChoices ?? null,
    children: cmd.commands.filter((c) => !(c as { _hidden?: boolean })._hidden).map((c) => entry(c, [...words, c.name()])),
    examples: EXAMPLES.get(cmd) ?? [],
  };
}

function flatten(e: CommandEntry): CommandEntry[] {
  return [e, ...e.children.flatMap(flatten)];
}

/** Single-quoted for a POSIX shell (bash, zsh). */
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** Single-quoted for fish, where a backslash escapes inside single quotes too. */
const fq = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/** The first sentence of a description, short enough for a completion menu's line. */
function brief(s: string): string {
  const first = s.split(/[;:(]/)[0]!.trim();
  return first.length > 60 ? `${first.slice(0, 57)}...` : first;
}

/** The completion script for `shell`: sourced, it completes unwind's commands, their options and option values. */
export function completionScript(program: AnyCommand, shell: Shell): string {
  const root = entry(program, []);
  const all = flatten(root);
  const globals = root.options.filter((o) => o.long !== "--help");
  // Options are offered with the command they follow; global ones everywhere, as the parser takes them anywhere.
  const optionsAt = (e: CommandEntry) => (e === root ? e.options : [...e.options, ...globals]);
  const valued = all.flatMap(optionsAt).filter((o, i, a) => o.value && a.findIndex((x) => x.long === o.long) === i);
  const walk = all.filter((e) => e !== root).map((e) => e.key.slice("unwind".length));
  if (shell === "bash") return bash(root, all, optionsAt, valued, walk);
  if (shell === "zsh") return zsh(all, optionsAt, valued, walk);
  return fish(all, optionsAt, walk);
}

type OptionsAt = (e: CommandEntry) => OptionEntry[];

function bash(_root: CommandEntry, all: CommandEntry[], optionsAt: OptionsAt, valued: OptionEntry[], walk: string[]): string {
  const lines = [
    '# bash completion for unwind: eval "$(unwind completion bash)" in ~/.bashrc',
    "_unwind() {",
    "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path= w i",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    "    w=${COMP_WORDS[i]}",
    "    # After --, the words are a command's own (unwind run -- CMD): files, as bash completes them.",
    "    [[ $w == -- ]] && return 0",
    '    case "$path/$w" in',
    `      ${walk.join("|")}) path=$path/$w ;;`,
    "    esac",
    "  done",
    "  case $prev in",
    ...valued.filter((o) => o.choices).map((o) => `    ${o.long}) COMPREPLY=($(compgen -W ${sq(o.choices!.join(" "))} -- "$cur")); return 0 ;;`),
    "    # A value of its own: files, as bash completes them (complete -o default).",
    `    ${valued
      .filter((o) => !o.choices)
      .map((o) => o.long)
      .join("|")}) COMPREPLY=(); return 0 ;;`,
    "  esac",
    "  local words",
    "  case $path in",
    ...all.map((e) => {
      const words = [...e.children.map((c) => c.words.at(-1)!), ...(e.argChoices ?? []), ...optionsAt(e).map((o) => o.long)];
      return `    ${sq(e.key.slice("unwind".length))}) words=${sq(words.join(" "))} ;;`;
    }),
    "  esac",
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    "}",
    "complete -o default -F _unwind unwind",
  ];
  return `${lines.join("\n")}\n`;
}

function zsh(all: CommandEntry[], optionsAt: OptionsAt, valued: OptionEntry[], walk: string[]): string {
  const item = (name: string, desc: string) => sq(`${name.replace(/:/g, "\\:")}:${brief(desc)}`);
  const lines = [
    "#compdef unwind",
    '# zsh completion for unwind: eval "$(unwind completion zsh)" in ~/.zshrc after compinit,',
    "# or save it as _unwind in a directory of $fpath.",
    "_unwind() {",
    "  local p= w i",
    "  for ((i = 2; i < CURRENT; i++)); do",
    "    w=${words[i]}",
    "    # After --, the words are a command's own (unwind run -- CMD).",
    "    [[ $w == -- ]] && { _files; return }",
    '    case "$p/$w" in',
    `      ${walk.join("|")}) p=$p/$w ;;`,
    "    esac",
    "  done",
    "  case ${words[CURRENT-1]} in",
    ...valued.filter((o) => o.choices).map((o) => `    ${o.long}) compadd -- ${o.choices!.map(sq).join(" ")}; return ;;`),
    `    ${valued
      .filter((o) => !o.choices)
      .map((o) => o.long)
      .join("|")}) _default; return ;;`,
    "  esac",
    "  local -a c o",
    "  case $p in",
    ...all.map((e) => {
      const c = [...e.children.map((x) => item(x.words.at(-1)!, x.description)), ...(e.argChoices ?? []).map((a) => item(a, a))];
      const o = optionsAt(e).map((x) => item(x.long, x.description));
      return `    ${sq(e.key.slice("unwind".length))}) c=(${c.join(" ")}); o=(${o.join(" ")}) ;;`;
    }),
    "  esac",
    "  if [[ ${words[CURRENT]} == -* ]]; then",
    "    _describe -t options option o",
    "  elif (( ${#c} )); then",
    "    _describe -t commands command c",
    "  else",
    "    _files",
    "  fi",
    "}",
    'if [[ ${funcstack[1]} == _unwind ]]; then _unwind "$@"; else compdef _unwind unwind; fi',
  ];
  return `${lines.join("\n")}\n`;
}

function fish(all: CommandEntry[], optionsAt: OptionsAt, walk: string[]): string {
  const lines = [
    "# fish completion for unwind: unwind completion fish > ~/.config/fish/completions/unwind.fish",
    "function __unwind_at",
    "  set -l p unwind",
    "  for w in (commandline -opc)[2..-1]",
    "    # After --, the words are a command's own (unwind run -- CMD).",
    "    test $w = -- ; and return 1",
    '    switch "$p/$w"',
    `      case ${walk.map((k) => fq(`unwind${k}`)).join(" ")}`,
    '        set p "$p/$w"',
    "    end",
    "  end",
    '  test "$p" = "$argv[1]"',
    "end",
  ];
  for (const e of all) {
    const at = `-n ${fq(`__unwind_at ${e.key}`)}`;
    for (const c of e.children) lines.push(`complete -c unwind ${at} -f -a ${fq(c.words.at(-1)!)} -d ${fq(brief(c.description))}`);
    for (const a of e.argChoices ?? []) lines.push(`complete -c unwind ${at} -f -a ${fq(a)}`);
    for (const o of optionsAt(e)) {
      const value = o.choices ? ` -x -a ${fq(o.choices.join(" "))}` : o.value ? " -r" : "";
      const short = o.short ? ` -s ${o.short.slice(1)}` : "";
      lines.push(`complete -c unwind ${at} -l ${o.long.slice(2)}${short}${value} -d ${fq(brief(o.description))}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** roff text: backslashes and hyphens escaped, a line never starting with a control character. */
function roff(s: string): string {
  return s
    .replace(/\\/g, "\\e")
    .replace(/-/g, "\\-")
    .replace(/`([^`]+)`/g, "\\fB$1\\fR")
    .split("\n")
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join("\n");
}

/** The flags of an option as the man page shows them: the names bold, the value's name in italics. */
function manFlags(flags: string): string {
  return flags
    .split(/([<[][^>\]]+[>\]])/)
    .map((part, i) => (i % 2 === 1 ? `\\fI${roff(part)}\\fR` : `\\fB${roff(part)}\\fR`))
    .join("");
}

/** The exit codes, as SPEC section 4 states them. */
const EXIT_CODES: [number, string][] = [
  [0, "done; or nothing to do"],
  [1, "done as far as safe: conflicts or skips (other than unchanged) remain"],
  [2, "usage error"],
  [3, "the scope could not be resolved (unknown, ambiguous, git failed); nothing was done; the message says why and names the candidates"],
  [4, "the store is damaged (verify failed, receipt chain broken)"],
];

/** The man page unwind(1), in roff, from the command table. */
export function manPage(program: AnyCommand): string {
  const root = entry(program, []);
  const out = [
    `.TH UNWIND 1 "" "unwind ${VERSION}" "User Commands"`,
    ".SH NAME",
    `unwind \\- ${roff(root.description.replace(/\.$/, "").replace(/^A /, "a "))}`,
    ".SH SYNOPSIS",
    ".B unwind",
    "[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]",
    ".SH DESCRIPTION",
    roff(
      "unwind records what changed in a working tree while AI coding agents work (their hooks call `unwind hook` on every tool call; whole-tree snapshots catch what shell commands did) and takes back exactly that, path by path, without clobbering what someone changed afterwards. Every undo writes a receipt and can itself be undone (`unwind redo`).",
    ),
    ".PP",
    roff(`Run without a command, unwind says where this repository stands and what to do first. --version names the store's on-disk format (${STORE_FORMAT}).`),
    ".SH GLOBAL OPTIONS",
  ];
  for (const o of root.options) out.push(".TP", manFlags(o.flags), roff(o.description));
  out.push(".SH COMMANDS");
  for (const e of flatten(root).slice(1)) {
    out.push(`.SS ${manFlags(["unwind", ...e.words].join(" "))} ${roff(e.usage.split("\n")[0]!)}`.trimEnd(), roff(e.description));
    const own = e.options.filter((o) => o.long !== "--help");
    for (const o of own) out.push(".TP", manFlags(o.flags), roff(o.description));
    if (e.examples.length > 0) {
      out.push(".PP", "Example:", ".RS", ".nf");
      for (const x of e.examples) out.push(roff(`$ ${x}`));
      out.push(".fi", ".RE");
    }
  }
  out.push(".SH EXIT STATUS");
  for (const [code, text] of EXIT_CODES) out.push(".TP", `.B ${code}`, roff(text));
  out.push(
    ".SH FILES",
    ".TP",
    ".I .git/unwind/",
    roff("the store: content, journal, receipts and run capsules of the repository (its VERSION file holds the store format)."),
    ".SH SEE ALSO",
    roff("unwind --help, unwind COMMAND --help; the README and docs/ of the project."),
  );
  return `${out.join("\n")}\n`;
}
