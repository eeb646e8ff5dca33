import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, tempDir, wrappedGit } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";
import { request, startUi } from "../ui-helpers.js";

/*
 * A page of diffs asks for both sides of each entry it shows. One
 * `/api/contents` reads them with one batch of git's blobs, where one
 * `/api/content` an entry started a git process each: on a packed
 * repository, 40 of them for a page of 20 (docs/design.md, "The record at
 * scale"). The server runs with a git that logs what it is asked.
 */

const FILES = 24;
const was = (i: number) => `export const v${i} = ${i};\n`;
const now = (i: number) => `export const v${i} = ${i + 100};\n`;

describe("unwind ui: a page's contents in one request", () => {
  it("answers each state as /api/content does, with git's blobs in one batch; what is unknown is refused for its item alone", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`src/m${i}.ts`] = was(i);
    const root = makeRepo(files);
    const S = "contents-aaaa-1111";
    claudeCall(root, S, "Bash", { command: "sed -i s/=/=1/ src/*.ts", description: "rewrite" }, () => {
      for (let i = 0; i < FILES; i++) writeFileSync(join(root, `src/m${i}.ts`), now(i));
    });
    // Every blob packed, as on a long-lived repository: none is a loose object the server reads itself.
    git(root, "repack", "-a", "-d", "-q");
    git(root, "prune-packed");
    const log = join(tempDir(), "git.log");
    const ui = await startUi(root, [], { env: { PATH: wrappedGit(`echo "$*" >> "${log}"`) } });
    try {
      const auth = { "x-unwind-token": ui.token };
      const get = async (path: string) => request(ui.port, { path, headers: auth });
      const cs = (await get(`/api/changes?session=${S}`)).json as { entries: { path: string; pre: { sha256?: string; oid?: string }; post: { sha256?: string; oid?: string } }[] };
      expect(cs.entries).toHaveLength(FILES);
      const sides = cs.entries.flatMap((e) => [e.pre, e.post]);
      const refs = sides.map((s) => `${s.sha256 ?? ""}:${s.oid ?? ""}`);
      const catFiles = () =>
        existsSync(log)
          ? readFileSync(log, "utf8")
              .split("\n")
              .filter((l) => /\bcat-file\b/.test(l)).length
          : 0;

      const start = catFiles();
      const batch = await get(`/api/contents?refs=${refs.join(",")}`);
      expect(batch.status).toBe(200);
      const texts = batch.json.contents.map((c: { text: string }) => c.text);
      const byPath = cs.entries.flatMap((e) => {
        const i = Number(/m(\d+)\.ts$/.exec(e.path)![1]);
        return [was(i), now(i)];
      });
      expect(texts).toEqual(byPath);
      // The sizes a tree's entries lack, then the bytes: two git processes, whatever the page's length.
      const batched = catFiles() - start;
      expect(batched).toBeGreaterThan(0);
      expect(batched).toBeLessThanOrEqual(2);

      // Control: the same states one request each, as the page asked before, start a git process each.
      const one = catFiles();
      const each = [];
      for (const s of sides) each.push((await get(`/api/content?${new URLSearchParams({ ...(s.sha256 ? { sha256: s.sha256 } : {}), ...(s.oid ? { oid: s.oid } : {}) })}`)).json);
      expect(each).toEqual(batch.json.contents);
      expect(catFiles() - one).toBeGreaterThanOrEqual(FILES);

      // An unknown state is refused in its place, as /api/content refuses it; the others are answered.
      const unknown = await get(`/api/contents?refs=${"0".repeat(64)}:,${refs[0]}`);
      expect(unknown.status).toBe(200);
      expect(unknown.json.contents[0]).toMatchObject({ status: 404, error: { code: "E_SCOPE_UNKNOWN" } });
      expect(unknown.json.contents[1].text).toBe(texts[0]);
      expect((await get(`/api/content?sha256=${"0".repeat(64)}`)).status).toBe(404);
      // What is not a list of hashes, or too long a list, is refused whole.
      for (const bad of [`/api/contents?refs=${encodeURIComponent("../../etc/passwd")}`, "/api/contents?refs=abc:", `/api/contents?refs=${Array(101).fill(refs[0]).join(",")}`, "/api/contents"]) {
        expect((await get(bad)).status, bad).toBe(400);
      }
    } finally {
      await ui.stop();
    }
  });
});
