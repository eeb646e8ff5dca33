import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeRepo, read, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";
import { startUi, type RunningUi } from "../ui-helpers.js";

// The web app as a reviewer uses it, in real headless Chromium, on a
// realistic record: two Claude sessions (edits of a TypeScript server in
// two far-apart places, a new module, a shell call that generates files,
// a README change) and a run. One browser and one server for the file.
// UNWIND_SCREENSHOTS=1 (npm run screenshots) writes the README's pictures
// of these views into docs/.

const CHROMIUM = process.env.UNWIND_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = process.env.UNWIND_SCREENSHOTS === "1";
const SA = "5d1e0f6a-2b7c-4e11-9a3d-7f0c2e4b8a11";
const SB = "a93c7d20-6f41-4b8e-b2d5-1c9e0a7f3d62";

/** A server module of 80 lines: the agent changes its port (line 9) and its error handler (line 61), two hunks apart. */
const SERVER = [
  'import { createServer, type IncomingMessage, type ServerResponse } from "node:http";',
  'import { readFile } from "node:fs/promises";',
  'import { join } from "node:path";',
  "",
  "/** Where the static files are, relative to the process's directory. */",
  'const ROOT = join(process.cwd(), "public");',
  "",
  "/** The port to listen on; 0 picks a free one. */",
  "const PORT = Number(process.env.PORT ?? 3000);",
  "",
  ...Array.from({ length: 48 }, (_, i) => (i % 6 === 0 ? `// route ${i / 6 + 1}` : `export const route${i} = { path: "/r${i}", method: "GET", cache: ${i * 10} };`)),
  "",
  "function fail(res: ServerResponse, e: unknown): void {",
  "  res.writeHead(500);",
  '  res.end("internal error");',
  "}",
  "",
  "async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {",
  "  try {",
  '    const body = await readFile(join(ROOT, req.url ?? "/index.html"));',
  "    res.writeHead(200);",
  "    res.end(body);",
  "  } catch (e) {",
  "    fail(res, e);",
  "  }",
  "}",
  "",
  "createServer((req, res) => void serve(req, res)).listen(PORT);",
  "",
].join("\n");
const SERVER_AFTER = SERVER.replace("process.env.PORT ?? 3000", "process.env.PORT ?? 8080").replace(
  '  res.writeHead(500);\n  res.end("internal error");',
  '  res.writeHead(500, { "content-type": "text/plain" });\n  res.end(`internal error: \u0024{String(e)}`);',
);

let root: string;
let ui: RunningUi;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), or point UNWIND_CHROMIUM at one`);
  root = makeRepo({ "src/server.ts": SERVER, "src/util/log.ts": "export const log = console.log;\n", "README.md": "# shop\n\nA small static server.\n", "package.json": '{ "name": "shop" }\n' });
  const browserStarted = chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const server = join(root, "src/server.ts");
  claudeCall(root, SA, "Edit", { file_path: server, old_string: "3000", new_string: "8080" }, () =>
    write(root, "src/server.ts", SERVER.replace("process.env.PORT ?? 3000", "process.env.PORT ?? 8080")),
  );
  claudeCall(root, SA, "Edit", { file_path: server, old_string: "res.writeHead(500);", new_string: "res.writeHead(500, …);" }, () => write(root, "src/server.ts", SERVER_AFTER));
  claudeCall(root, SA, "Write", { file_path: join(root, "src/util/format.ts"), content: "…" }, () =>
    write(
      root,
      "src/util/format.ts",
      "/** Bytes as a person reads them. */\nexport function bytes(n: number): string {\n  return n < 1024 ? `\u0024{n} B` : `\u0024{(n / 1024).toFixed(1)} KiB`;\n}\n",
    ),
  );
  claudeCall(root, SA, "Bash", { command: "npm run gen", description: "generate the route table" }, () => write(root, "gen/routes.json", '{ "routes": 48 }\n'));
  claudeCall(root, SB, "Edit", { file_path: join(root, "README.md"), old_string: "A small", new_string: "A small, fast" }, () =>
    write(root, "README.md", "# shop\n\nA small, fast static server.\n\nRun it with `npm start`.\n"),
  );
  expect(unwind(root, ["run", "--id", "build-1", "--", "sh", "-c", "mkdir -p out && echo built > out/app.js"]).code).toBe(0);
  [ui, browser] = await Promise.all([startUi(root), browserStarted]);
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await ui?.stop();
});

/** The width of most tests' pages: 1400 px, or UNWIND_LOOK_WIDTH (to look at every view at 1024 px, say). */
const WIDTH = Number(process.env.UNWIND_LOOK_WIDTH ?? 1400);

async function page(width = WIDTH, opts: { bypassCSP?: boolean } = {}): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width, height: 860 }, colorScheme: "light", ...opts });
  contexts.push(ctx);
  const p = await ctx.newPage();
  await p.goto(ui.url);
  await p.locator(".row.session").first().waitFor();
  return p;
}

/** The README's pictures (at 1400 px); UNWIND_LOOK_DIR also keeps every view at each width tested, for a person to look at. */
const shot = async (p: Page, name: string) => {
  const width = p.viewportSize()?.width ?? 0;
  if (SHOTS && width === 1400 && ["timeline", "diff", "undo-preview"].includes(name)) await p.screenshot({ path: join(import.meta.dirname, "..", "..", "docs", `ui-${name}.png`) });
  if (process.env.UNWIND_LOOK_DIR) await p.screenshot({ path: join(process.env.UNWIND_LOOK_DIR, `${name}-${width}.png`) });
};

/** Opens session A's row and waits for its first diff. */
async function openSessionA(p: Page): Promise<void> {
  await p.locator(".row.session", { hasText: SA }).click();
  await p.locator('details.entry[data-path="src/server.ts"] table.diff').waitFor();
}

/** The code column's share of its table: what the squeezed layout took from it. */
const codeShare = (p: Page, sel: string) =>
  p.evaluate((s) => {
    const c = document.querySelector(s) as HTMLElement;
    const t = c.closest("table") as HTMLElement;
    return c.getBoundingClientRect().width / t.getBoundingClientRect().width;
  }, sel);

const axe = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** axe-core's serious and critical findings on the page as it is now (injected by the test alone; the app never loads it). */
async function axeSerious(p: Page, within?: string): Promise<string[]> {
  if (!(await p.evaluate(() => "axe" in window))) await p.evaluate(readFileSync(axe, "utf8"));
  const found = await p.evaluate(async (sel) => {
    const r = await (window as any).axe.run(sel ? document.querySelector(sel) : document, { resultTypes: ["violations"] });
    return (r.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map((v) => ({ id: v.id, impact: v.impact, at: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) }));
  }, within);
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} at ${v.at.join(", ")}`);
}

describe("unwind ui: reviewing an agent's work", () => {
  it("keeps the code column wide at 1024 and 1400 px on a multi-hunk file, unified and side by side; without the fixed columns it is squeezed", async () => {
    for (const width of [1024, 1400]) {
      const p = await page(width);
      await openSessionA(p);
      const diff = p.locator('details.entry[data-path="src/server.ts"] table.diff');
      expect(await diff.locator("tr.hunk").count()).toBe(2);
      expect(await diff.locator("tr").first().getAttribute("class")).toBe("fold"); // starts with a folded run: the case that squeezed it
      const sel = 'details.entry[data-path="src/server.ts"] table.diff td.code.add';
      expect(await codeShare(p, sel), `unified at ${width}`).toBeGreaterThan(0.8);
      await shot(p, "diff");
      // Negative control: the same table without its column widths (the layout before the fix) squeezes the code.
      await p.evaluate(() => {
        for (const c of document.querySelectorAll("table.diff colgroup")) c.remove();
      });
      expect(await codeShare(p, sel), `unified at ${width}, no colgroup`).toBeLessThan(0.5);
      await p.getByRole("button", { name: "Side by side" }).click();
      await diff.and(p.locator(".split")).waitFor();
      expect(await codeShare(p, 'details.entry[data-path="src/server.ts"] table.diff td.code.right.add'), `split at ${width}`).toBeGreaterThan(0.4);
      await p.getByRole("button", { name: "Unified" }).click();
      await p.context().close();
    }
  });

  it("shows hunks with syntax colours and the words a line changed; a folded run expands; the file tree leads to each file; a viewed file stays viewed after a reload", async () => {
    const p = await page();
    await openSessionA(p);
    const diff = p.locator('details.entry[data-path="src/server.ts"] table.diff');
    expect(await diff.locator("tr.hunk .hunk-title").allTextContents()).toEqual(["Hunk 1 of 2", "Hunk 2 of 2"]);
    // Word level: in "PORT ?? 3000" → "PORT ?? 8080" only the number is marked.
    expect(await diff.locator("td.code.del mark.wd").first().textContent()).toBe("3000");
    expect(await diff.locator("td.code.add mark.wd").first().textContent()).toBe("8080");
    // Syntax: keywords and comments are tokens (a control: README.md, not code, has none).
    expect(await diff.locator(".tok-kwd", { hasText: "const" }).count()).toBeGreaterThan(0);
    expect(await diff.locator(".tok-cmnt").count()).toBeGreaterThan(0);
    await p.locator('details.entry[data-path="README.md"]').waitFor({ state: "detached" }); // session B's file is not in A's scope
    // Expand context: the run between the hunks (old lines 13 to 57) opens into its 45 numbered lines.
    const rows = await diff.locator("tr").count();
    const between = diff.locator("tr.fold button.expand").nth(1);
    expect(await between.textContent()).toBe("⋯ 45 unchanged lines");
    await between.focus();
    await p.keyboard.press("Enter");
    await expect.poll(() => diff.locator("tr").count()).toBe(rows + 44);
    const nums = await diff.locator("tr.ctx td.num:first-child").allTextContents();
    expect(nums).toContain("13");
    expect(nums).toContain("57");
    // The file tree leads to each file; a viewed file folds away and stays viewed after a reload.
    expect(await p.locator(".tree").textContent()).toBe("gen/routes.jsonsrc/util/format.tsserver.ts");
    const entry = p.locator('details.entry[data-path="src/util/format.ts"]');
    await p.locator(".tree button.file", { hasText: "format.ts" }).click();
    await expect.poll(() => entry.getAttribute("open")).toBe("");
    await p.getByRole("checkbox", { name: "viewed src/util/format.ts" }).check();
    await expect.poll(() => entry.getAttribute("open")).toBe(null);
    expect(await p.locator("#changes h3").textContent()).toBe("3 changed paths · 1 of 3 viewed");
    await shot(p, "viewed");
    await p.reload();
    await openSessionA(p);
    expect(await p.getByRole("checkbox", { name: "viewed src/util/format.ts" }).isChecked()).toBe(true);
    expect(await p.getByRole("checkbox", { name: "viewed src/server.ts" }).isChecked()).toBe(false); // control
    await p.context().close();
  });

  it("Escape in the path filter unfilters the timeline; a shell call's snapshots are folded into its row; runs have rows of their own", async () => {
    const p = await page();
    const all = await p.locator(".row").count();
    await p.keyboard.press("/");
    await p.keyboard.type("README");
    await expect.poll(() => p.locator(".row .title").allTextContents()).toEqual([`claude:${SB}`, expect.stringMatching(/^Edit /)]);
    await p.keyboard.press("Escape");
    expect(await p.locator("#f-path").inputValue()).toBe("");
    await expect.poll(() => p.locator(".row").count()).toBe(all);
    const timeline = (await p.evaluate(() =>
      fetch("./api/timeline", { headers: { "x-unwind-token": document.querySelector<HTMLMetaElement>('meta[name="unwind-token"]')!.content } }).then((r) => r.json()),
    )) as {
      snapshots: { session: string | null; call: string | null }[];
    };
    // Control: the record has the Bash call's snapshots (before and after it)...
    expect(timeline.snapshots.filter((s) => s.session === `claude:${SA}` && s.call !== null).length).toBeGreaterThanOrEqual(2);
    // ...and the timeline shows them as the call's restore points, not as rows.
    expect(await p.locator(".row.snapshot").count()).toBe(0);
    const bash = p.locator(".row.call", { hasText: "Bash" });
    expect(await bash.locator(".sub").textContent()).toMatch(/gen\/routes\.json · 2 restore points$/);
    // The run's own two snapshots (before and after it) are its restore points, not rows either.
    expect(await p.locator(".row.run .title").allTextContents()).toEqual(["run build-1"]);
    await shot(p, "timeline");
    await bash.click();
    expect(await p.locator(".around button").allTextContents()).toEqual([expect.stringMatching(/^before this call/), expect.stringMatching(/^after this call/)]);
    await p.locator(".around button").first().click();
    await expect.poll(() => p.locator("#detail h2").textContent()).toMatch(/^snapshot /);
    await p.context().close();
  });

  it("a run is a view: run show, a safe-only undo preview and a cleanup preview, through the same API as the command line", async () => {
    const p = await page();
    await p.locator(".row.run").click();
    await p.locator(".run-card").waitFor();
    expect(await p.locator(".run-card .facts").textContent()).toContain("sh -c mkdir -p out && echo built > out/app.js");
    await p.locator('details.entry[data-path="out/app.js"]').waitFor();
    await p.locator("#preview-safe").click();
    await expect.poll(() => p.locator(".plan h3").textContent()).toMatch(/^Safe-only undo preview/);
    const cli = unwind(root, ["undo", "--run", "build-1", "--safe-only", "--dry-run", "--json"]);
    expect(await p.locator(".plan .digest").getAttribute("title")).toBe(JSON.parse(cli.stdout).plan);
    await p.locator("#preview-cleanup").click();
    await expect.poll(() => p.locator(".plan h3").textContent()).toBe("Cleanup preview");
    expect(await p.locator("#apply").textContent()).toBe("Nothing to end");
    await shot(p, "run");
    // The run filter keeps the run and drops the sessions it did not hold.
    await p.locator("#f-run").selectOption("build-1");
    await expect.poll(() => p.locator(".row .title").allTextContents()).toEqual(["run build-1"]);
    await p.context().close();
  });

  it("has no serious accessibility violations on the timeline, a diff and a preview (axe-core)", async () => {
    const p = await page(WIDTH, { bypassCSP: true });
    expect(await axeSerious(p)).toEqual([]);
    await openSessionA(p);
    await p.locator("#preview-undo").click();
    await p.locator(".plan").waitFor();
    expect(await axeSerious(p)).toEqual([]);
    // Control: the check finds a real problem when there is one (a button with no name).
    await p.evaluate(() => document.querySelector("#detail")!.append(Object.assign(document.createElement("button"), { id: "nameless" })));
    expect((await axeSerious(p, "#nameless")).join("\n")).toContain("button-name at #nameless");
    await p.context().close();
  });

  it("takes back one hunk by keyboard: previewed as a diff, applied by digest; the other hunk and the other files stay; redo shows its diff and brings it back", async () => {
    const p = await page();
    await openSessionA(p);
    // Keyboard: Tab reaches the second hunk's button.
    const second = p.locator('details.entry[data-path="src/server.ts"] button.take-back[data-hunk="2"]');
    await second.focus();
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator(".plan h3").textContent()).toMatch(/^Take back hunk 2 of src\/server\.ts preview/);
    const what = p.locator(".plan details.what table.diff");
    await what.waitFor();
    expect(await what.locator("td.code.del").allTextContents()).toEqual(['-  res.writeHead(500, { "content-type": "text/plain" });', "-  res.end(`internal error: \u0024{String(e)}`);"]);
    expect(await what.locator("td.code.add").allTextContents()).toEqual(["+  res.writeHead(500);", '+  res.end("internal error");']);
    const cli = unwind(root, ["undo", "--session", `claude:${SA}`, "--path", "src/server.ts", "--hunk", "2", "--dry-run", "--json"]);
    expect(await p.locator(".plan .digest").getAttribute("title")).toBe(JSON.parse(cli.stdout).plan);
    await shot(p, "undo-preview");
    expect(read(root, "src/server.ts")).toBe(SERVER_AFTER); // control: a preview writes nothing
    await p.locator("#apply").click();
    await p.locator("#apply-result .done").waitFor();
    expect(await p.locator(".plan h3").textContent()).toMatch(/applied/);
    expect(await p.locator(".plan .summary").textContent()).toMatch(/done: receipt r-/);
    // Hunk 2 is back as it was; hunk 1 (the port) and every other file of the session stay.
    expect(read(root, "src/server.ts")).toBe(SERVER.replace("process.env.PORT ?? 3000", "process.env.PORT ?? 8080"));
    expect(existsSync(join(root, "src/util/format.ts"))).toBe(true);

    const receipt = p.locator(".row.receipt").first();
    await receipt.waitFor();
    await receipt.click();
    const redo = p.locator(".plan details.what table.diff");
    await redo.waitFor();
    expect(await redo.locator("td.code.add").allTextContents()).toEqual(['+  res.writeHead(500, { "content-type": "text/plain" });', "+  res.end(`internal error: \u0024{String(e)}`);"]);
    await p.locator("#apply").click();
    await p.locator("#apply-result .done").waitFor();
    expect(read(root, "src/server.ts")).toBe(SERVER_AFTER);
    await p.context().close();
  });

  it("undo from a call covers that call and every later one of its session", async () => {
    const p = await page();
    await p.locator(".row.session", { hasText: SA }).click();
    await p.locator(".row.call", { hasText: "Write" }).click();
    await p.locator("#preview-from-here").click();
    await expect.poll(() => p.locator(".plan h3").textContent()).toMatch(/^Undo from this call on preview/);
    // The Write and the Bash after it; not the two Edits before.
    expect((await p.locator("tr.item .path").allTextContents()).sort()).toEqual(["gen/routes.json", "src/util/format.ts"]);
    await shot(p, "from-call");
    await p.context().close();
  });
});
