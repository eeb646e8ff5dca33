#!/usr/bin/env bash
# End-to-end demo in a scratch repository, through the real hook entry point:
# `unwind init --claude` installs the hooks, two Claude Code sessions edit
# files and run shell commands (each tool call sends the PreToolUse and
# PostToolUse payloads Claude sends), a person edits a file, and then one
# session is taken back — and only that one.
set -euo pipefail
UNWIND="$(cd "$(dirname "$0")/.." && pwd)/bin/unwind"
demo=$(mktemp -d "${TMPDIR:-/tmp}/unwind-demo-XXXXXX")
trap 'rm -rf "$demo"' EXIT
cd "$demo"
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
note() { printf '\n\033[2m# %s\033[0m\n' "$*"; }
run() { say "$*"; "$@" || true; }
unwind() { "$UNWIND" "$@"; }

git init -q -b main
git config user.email demo@example.com
git config user.name demo
mkdir -p src docs
printf 'export const answer = 42;\n' > src/answer.ts
printf 'export const name = "unwind";\n' > src/name.ts
printf '# Notes\n' > docs/notes.md
printf 'dist/\n' > .gitignore
git add -A && git commit -qm "initial"
printf 'work in progress\n' > scratch.txt   # untracked, but still yours

run unwind init --claude
hook=$(node -e 'console.log(require("./.claude/settings.json").hooks.PreToolUse[0].hooks[0].command)')

# One tool call as Claude Code makes it: PreToolUse hook, the tool runs, PostToolUse hook.
call() { # session tool-use-id tool input-json effect...
  local session=$1 id=$2 tool=$3 input=$4; shift 4
  local payload='{"session_id":"'$session'","transcript_path":"/tmp/t.jsonl","cwd":"'$demo'","permission_mode":"default","hook_event_name":"%s","tool_name":"'$tool'","tool_input":'$input',"tool_use_id":"'$id'"}'
  printf "$payload" PreToolUse | sh -c "$hook"
  "$@"
  printf "$payload" PostToolUse | sh -c "$hook"
}

note "session 3f2a… edits a file, then a shell command: sed -i, rm, codegen, a build"
call 3f2a9c1e-agent-one toolu_01 Edit '{"file_path":"src/answer.ts","old_string":"42","new_string":"41"}' \
  sed -i 's/42/41/' src/answer.ts
call 3f2a9c1e-agent-one toolu_02 Bash '{"command":"rm scratch.txt && mkdir -p src/gen && echo ... > src/gen/api.ts && npm run build"}' \
  sh -c 'rm scratch.txt && mkdir -p src/gen && printf "export {}\n" > src/gen/api.ts && mkdir -p dist && printf "built\n" > dist/out.js'
note "session 77aa… (another agent) writes its own file"
call 77aa5b2d-agent-two toolu_03 Write '{"file_path":"docs/notes.md","content":"# Notes\\nfrom agent two\\n"}' \
  sh -c 'printf "# Notes\nfrom agent two\n" > docs/notes.md'
note "a person edits a file afterwards"
printf 'export const name = "unwind!";\n' > src/name.ts

run unwind sessions
run unwind log
run unwind changes --session 3f2a9c1e
run unwind undo --session 3f2a9c1e --dry-run
note "apply exactly the plan that was previewed: its digest, from the dry run"
plan=$(unwind undo --session 3f2a9c1e --dry-run --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).plan.slice(0,12)))')
run unwind undo --session 3f2a9c1e --expect "$plan"
run git status --short
run cat src/answer.ts scratch.txt docs/notes.md src/name.ts dist/out.js

note "changed your mind? every undo has a receipt"
run unwind receipts
run unwind redo --last
run cat src/answer.ts
run unwind verify
run unwind status
