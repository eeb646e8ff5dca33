import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeRepo, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";
import { startUi, type RunningUi } from "../ui-helpers.js";

// A change set larger than the page shows at once (src/ui/web/app.ts,
// ENTRY_CHUNK and HUNK_PAGE): the page builds a window of its entries, yet
// scrolling and the file tree reach every one, each with its own hunks.

const CHROMIUM = process.env.UNWIND_CHROMIUM ?? "/usr/bin/chromium";
const S = "4b5c6d7e-wide-shell";
const N = 260;
const name = (i: number) => `gen/f${String(i).padStart(3, "0")}.txt`;

let root: string;
let ui: RunningUi;
let browser: Browser;

beforeAll(async () => {
  root = makeRepo({ "README.md": "# r\n" });
  claudeCall(root, S, "Bash", { command: "for i in ...; do echo > gen/f$i.txt; done" }, () => {
    mkdirSync(join(root, "gen"), { recursive: true });
    for (let i = 0; i < N; i++) write(root, name(i), `line ${i}\n`);
  });
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}`);
  ui = await startUi(root);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
});

describe("a session of many paths in the browser", () => {
  it("shows a window of its entries, and scrolling and the file tree reach every one, with its hunks", async () => {
    const p = await (await browser.newContext({ viewport: { width: 1280, height: 760 } })).newPage();
    await p.goto(ui.url);
    await p.locator(".row.session").first().click();
    await expect.poll(() => p.locator("#changes h3").textContent()).toMatch(new RegExp(`^${N} changed paths`));
    // A window, not every row.
    expect(await p.locator("#changes .entry").count()).toBe(100);
    // Negative control of the window: the rows past it are not on the page until scrolled to.
    expect(await p.locator(`#changes .entry[data-path="${name(N - 1)}"]`).count()).toBe(0);
    for (let k = 0; k < 5 && (await p.locator("#changes .entry").count()) < N; k++) {
      await p.locator("#changes .more").scrollIntoViewIfNeeded();
      await p.waitForTimeout(300);
    }
    expect(await p.locator("#changes .entry").count()).toBe(N);
    expect(await p.locator("#changes .entry .path").last().textContent()).toBe(name(N - 1));
    // The last entry's hunks are past the first page the server diffed: asked for when it opens, and shown.
    const last = p.locator(`#changes .entry[data-path="${name(N - 1)}"]`);
    await last.locator("summary").click();
    await expect.poll(() => last.locator(".entry-body").textContent()).toContain(`line ${N - 1}`);
    await p.close();
  });

  it("a file of the tree past the window puts its entry on the page and opens it, with its hunks", async () => {
    const p = await (await browser.newContext({ viewport: { width: 1280, height: 760 } })).newPage();
    await p.goto(ui.url);
    await p.locator(".row.session").first().click();
    await p.locator("#changes .entry").first().waitFor();
    // 260 paths is under the tree's limit: every file is there at once.
    expect(await p.locator(".tree button.file").count()).toBe(N);
    await p.locator(`.tree button.file[title="${name(230)}"]`).click();
    const target = p.locator(`#changes .entry[data-path="${name(230)}"]`);
    await expect.poll(() => target.getAttribute("open")).toBe("");
    await expect.poll(() => target.locator(".entry-body").textContent()).toContain("line 230");
    await p.close();
  });
});
