/**
 * Every pinned client installs from the registry into the cache, at the
 * version pinned (or the one its environment variable names). `.ci/run`
 * starts this file alone while `npm test` runs, so the downloads (network,
 * not CPU) overlap the main suite and the real suites find the clients
 * cached; run on its own, it is what a first `npm run test:real` does anyway.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIENTS, clientVersion, installClient, type ClientName } from "./clients.js";
import { OTHER_CLIENTS, installOther, otherVersion, type OtherClient } from "./opencode-cline.js";

/** The package.json of `pkg` beside the installed executable's node_modules/.bin. */
function installedVersion(bin: string, pkg: string): string {
  const modules = dirname(dirname(bin));
  return JSON.parse(readFileSync(join(modules, pkg, "package.json"), "utf8")).version;
}

describe("the pinned clients install", () => {
  it.each(Object.keys(CLIENTS) as ClientName[])(
    "%s",
    (name) => {
      expect(installedVersion(installClient(name), CLIENTS[name].pkg)).toBe(clientVersion(name));
    },
    600_000,
  );
  it.each(Object.keys(OTHER_CLIENTS) as OtherClient[])(
    "%s",
    (name) => {
      expect(installedVersion(installOther(name), OTHER_CLIENTS[name].pkg)).toBe(otherVersion(name));
    },
    600_000,
  );
});
