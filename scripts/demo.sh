#!/usr/bin/env bash
# End-to-end demo in a scratch repository: snapshot, let an "agent" break
# things the way shell commands do, preview the undo, restore, redo, verify.
set -euo pipefail
UNWIND="$(cd "$(dirname "$0")/.." && pwd)/bin/unwind"
demo=$(mktemp -d "${TMPDIR:-/tmp}/unwind-demo-XXXXXX")
trap 'rm -rf "$demo"' EXIT
cd "$demo"
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@" || true; }
unwind() { "$UNWIND" "$@"; }

git init -q -b main
git config user.email demo@example.com
git config user.name demo
mkdir -p src docs
printf 'export const answer = 42;\n' > src/answer.ts
printf '# Notes\n' > docs/notes.md
printf 'dist/\n' > .gitignore
git add -A && git commit -qm "initial"
printf 'work in progress\n' > scratch.txt   # untracked: snapshots keep it too

run unwind snapshot --label "before the agent"
snap=$(unwind snapshots --json --limit 1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).snapshots[0].id))')

say "# the agent runs shell commands: sed -i, rm, mv, codegen, a build"
sed -i 's/42/41/' src/answer.ts
rm scratch.txt
mv docs/notes.md docs/NOTES.md
mkdir -p src/gen && printf 'export {}\n' > src/gen/api.ts
mkdir -p dist && printf 'built\n' > dist/out.js   # ignored build output: never touched
run git status --short

run unwind diff "$snap"
run unwind restore "$snap" --dry-run
run unwind restore "$snap"
run git status --short
run cat src/answer.ts scratch.txt

receipt=$(unwind receipts --json --limit 1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).receipts[0].id))')
run unwind redo "$receipt"
run cat src/answer.ts
run unwind receipts
run unwind verify
run unwind status
