import { defineConfig } from "vitest/config";

// The machines set NODE_EXTRA_CA_CERTS, and Node reads that bundle at every start-up (45 ms here, against 25 ms
// for all the rest of `node -e 0`). No test of this suite opens a TLS connection, and it starts thousands of
// unwind and node processes; the workers inherit this environment. (The hook as `init` installs it drops the
// variable too; test/e2e/init-cli.test.ts sets it on purpose to show that.)
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real-client suite runs on its own: npm run test:real (vitest.real.config.ts).
    exclude: ["test/real/**", "**/node_modules/**"],
    testTimeout: 60_000,
    // expect.poll's deadline (1 s by default): a page that renders after a server round trip took longer than
    // that under load (ui-scale's hunks, once). A poll returns as soon as it matches, so this costs nothing when quiet.
    expect: { poll: { timeout: 20_000 } },
    hookTimeout: 60_000,
    pool: "forks",
    // Two files at a time: the suite waits on git, fsync and child processes more than it computes (one worker kept
    // a 2-core machine under half busy: 10m50s of user time in a 15m20s run), and every test has its own repository.
    maxWorkers: 2,
    // A hook's tree snapshot gives up after 10 s (the lock wait included) so it never holds an agent
    // up; with every test file's git processes on two cores, a snapshot can take that long, and a
    // pre capture that timed out changes what a test sees. The tests of the budget set their own.
    env: { UNWIND_HOOK_BUDGET_MS: "60000" },
  },
});
