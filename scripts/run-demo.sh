#!/usr/bin/env bash
# Run capsules end to end in a scratch repository: a policy, a script that
# does its job in src/, rewrites the CI workflow, drops a .env and leaves a
# server running in the background, all wrapped by `unwind run`; then the
# review (runs, changes) and the take-back of the collateral only (undo
# --safe-only), and cleanup of the process it left. The output is the tour
# in docs/runs.md (the docs test runs that tour; this script is its long form).
set -euo pipefail
UNWIND="$(cd "$(dirname "$0")/.." && pwd)/bin/unwind"
demo=$(mktemp -d "${TMPDIR:-/tmp}/unwind-run-demo-XXXXXX")
cd "$demo"
say() { printf '\n$ %s\n' "$*"; }
note() { printf '\n# %s\n' "$*"; }
run() { say "$*"; "$@" || printf '(exit %s)\n' "$?"; }
unwind() { "$UNWIND" "$@"; }
# Whatever happens, the background server is not left behind (by the pid its run recorded, not by name).
cleanup_demo() { "$UNWIND" cleanup --grace 1s agent-1 >/dev/null 2>&1 || true; rm -rf "$demo"; }
trap cleanup_demo EXIT

git init -q -b main
git config user.email demo@example.com
git config user.name demo
mkdir -p src .github/workflows .unwind
printf 'export const greet = (n: string) => `hi ${n}`;\n' > src/greet.ts
printf 'name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{ run: npm test }]\n' > .github/workflows/ci.yml
printf 'node_modules/\n' > .gitignore
cat > .unwind/policy.json <<'POLICY'
{ "default": "review", "allow": ["src/**", "test/**"], "deny": [".env*", ".github/**", "**/*.pem"] }
POLICY
git add -A && git commit -qm "initial"

cat > ../agent-1.sh <<'AGENT'
#!/bin/sh
# The job: a new feature in src/, and its test.
printf 'export const greet = (n: string) => `hello, ${n}!`;\n' > src/greet.ts
mkdir -p test && printf 'import "../src/greet";\n' > test/greet.test.ts
# The collateral: CI "fixed" by skipping the tests, a secret written down, a server left running.
printf 'name: ci\non: [push]\njobs: {}\n' > .github/workflows/ci.yml
printf 'API_KEY=sk-live-123\n' > .env
setsid nohup sleep 600 >/dev/null 2>&1 &
echo "agent: done"
AGENT
chmod +x ../agent-1.sh

note "the policy, in the root: .unwind/policy.json"
run cat .unwind/policy.json
run unwind run --id agent-1 --keep-processes -- ../agent-1.sh
run unwind runs
run unwind changes --run agent-1
run unwind undo --run agent-1 --safe-only --dry-run
run unwind undo --run agent-1 --safe-only
run git status --short
run cat src/greet.ts .github/workflows/ci.yml
run unwind cleanup agent-1 --dry-run
run unwind cleanup agent-1
run unwind run show agent-1
run unwind verify
