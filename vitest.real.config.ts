import { defineConfig } from "vitest/config";

// `npm run test:real`: unwind against the real Claude Code, Codex and Gemini CLI (test/real, README
// "Testing with the real clients"). Kept out of `npm test`: it installs the clients from npm and needs
// `unshare -n` (root or user namespaces) and iproute2.
export default defineConfig({
  test: {
    include: ["test/real/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: "forks",
  },
});
