import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { read, snapshotId, tempDir, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";
import { twoSessions } from "../session-fixture.js";
import { startUi, type RunningUi } from "../ui-helpers.js";

// The web app in real headless Chromium (Debian's chromium package; CI
// installs it, .ci/run). One browser for the file, one page per test.
// The pictures in docs/ (README.md and docs/ui.md show them) come of
// test/e2e/ui-review.test.ts (npm run screenshots).

const CHROMIUM = process.env.UNWIND_CHROMIUM ?? "/usr/bin/chromium";
const SA = "3f2a9c1e-agent-one";
const SB = "77aa5b2d-agent-two";

let root: string;
let ui: RunningUi;
let browser: Browser;

beforeAll(async () => {
  root = twoSessions(SA, SB);
  // A person edits session A's file afterwards: undoing A must not clobber it.
  write(root, "src/a.ts", "export const a = 2;\n// a person's note\n");
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), or point UNWIND_CHROMIUM at one`);
  ui = await startUi(root);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // evil.test resolves to this machine inside the browser: a DNS rebinding page, for real.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--host-resolver-rules=MAP evil.test 127.0.0.1",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
});

async function page(): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 760 }, colorScheme: "light" });
  const p = await ctx.newPage();
  await p.goto(ui.url);
  await p.locator(".row.session").first().waitFor();
  return p;
}

describe("unwind ui in a browser", () => {
  it("the timeline shows both sessions with their calls, newest first, and leaves the token out of the address bar", async () => {
    const p = await page();
    const sessions = p.locator(".row.session .title");
    await expect.poll(() => sessions.allTextContents()).toEqual([`claude:${SB}`, `claude:${SA}`]);
    expect(await p.locator(".row.call .title").allTextContents()).toEqual([expect.stringMatching(/^Write /), expect.stringMatching(/^Bash /), expect.stringMatching(/^Edit /)]);
    expect(await p.locator("#f-run option").first().textContent()).toBe("every run");
    expect(p.url()).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ui.port}/s/[0-9a-f]{32}/$`));
    await expect.poll(() => p.locator("#live").getAttribute("class")).toBe("live on");
    // Filters: by path (a substring or a glob), by session.
    await p.keyboard.press("/");
    await p.keyboard.type("gen/*.txt");
    expect(await p.locator(".row .title").allTextContents()).toEqual([`claude:${SA}`, expect.stringMatching(/^Bash /)]);
    await p.locator("#f-path").fill("");
    await p.locator("#f-session").selectOption(`claude:${SB}`);
    expect(await p.locator(".row .title").allTextContents()).toEqual([`claude:${SB}`, expect.stringMatching(/^Write /)]);
    await p.close();
  });

  it("opening a call with the keyboard shows its diff, unified and side by side", async () => {
    const p = await page();
    // j/k (or the arrows) move through the rows, newest first; Enter opens the one selected.
    const selected = () => p.locator('.row[aria-selected="true"] .title').textContent();
    expect(await selected()).toBe(`claude:${SB}`);
    await p.keyboard.press("j");
    expect(await selected()).toMatch(/^Write /);
    await p.keyboard.press("k");
    expect(await selected()).toBe(`claude:${SB}`);
    let moves = 0;
    while (!/^Edit /.test((await selected()) ?? "") && moves++ < 20) await p.keyboard.press(moves % 2 ? "j" : "ArrowDown");
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("#detail h2").textContent()).toMatch(/^call toolu_/);
    const diff = p.locator("table.diff");
    await diff.first().waitFor();
    expect(await diff.locator("td.code.del").allTextContents()).toEqual(["-export const a = 1;"]);
    expect(await diff.locator("td.code.add").allTextContents()).toEqual(["+export const a = 2;"]);
    await p.getByRole("button", { name: "Side by side" }).click();
    await p.locator("table.diff.split").waitFor();
    expect(await p.locator("table.diff.split td.code.left.del").allTextContents()).toEqual(["export const a = 1;"]);
    expect(await p.locator("table.diff.split td.code.right.add").allTextContents()).toEqual(["export const a = 2;"]);
    await p.getByRole("button", { name: "Unified" }).click();
    await p.close();
  });

  it("the undo preview explains a conflict in words; Apply changes the files on disk; Redo from the receipt brings them back", async () => {
    const p = await page();
    await p.locator(".row.session", { hasText: SA }).click();
    await p.locator("#preview-undo").click();
    const conflict = p.locator("tr.item.conflict");
    await conflict.waitFor();
    expect(await conflict.locator(".path").textContent()).toBe("src/a.ts");
    expect(await conflict.locator(".reason").textContent()).toMatch(/^changed-since: Someone changed this file after this work wrote it.*Merge takes back only this work's lines/);
    expect(await p.locator("tr.item.delete .path").textContent()).toBe("gen/out.txt");
    // What the person changed since, beside the reason: the record's bytes against the file now.
    await conflict.getByText("What changed since this work").click();
    await conflict.locator("table.diff").waitFor();
    expect(await conflict.locator("table.diff td.code.add").allTextContents()).toEqual(["+// a person's note"]);

    expect(await p.locator(".plan .summary").textContent()).toMatch(/nothing has been changed yet$/);
    await p.locator("#apply").click();
    await p.locator("#apply-result .done").waitFor();
    // After Apply the preview says what was done, not that nothing has been.
    expect(await p.locator(".plan h3").textContent()).toMatch(/^Undo applied/);
    expect(await p.locator(".plan .summary").textContent()).toMatch(/done: receipt r-/);
    expect(existsSync(join(root, "gen/out.txt"))).toBe(false);
    expect(read(root, "src/a.ts")).toBe("export const a = 2;\n// a person's note\n"); // the person's edit stays

    const receipt = p.locator(".row.receipt").first();
    await receipt.waitFor();
    await receipt.click();
    await p.locator("tr.item.restore .path", { hasText: "gen/out.txt" }).waitFor();
    await p.locator("#apply").click();
    await p.locator("#apply-result .done").waitFor();
    expect(read(root, "gen/out.txt")).toBe("generated\n");
    await p.close();
  });

  it("a plan that changed since its preview is refused with E_PLAN_CHANGED and nothing is written", async () => {
    const p = await page();
    await p.locator(".row.session", { hasText: SB }).click();
    await p.locator("#preview-undo").click();
    await p.locator("tr.item.restore").waitFor();
    write(root, "src/b.ts", "export const b = 3;\n");
    await p.locator("#apply").click();
    await expect.poll(() => p.locator("#apply-result .error").textContent()).toMatch(/^E_PLAN_CHANGED/);
    expect(await p.locator("#apply-result .stale").textContent()).toMatch(/changed since this preview/);
    expect(read(root, "src/b.ts")).toBe("export const b = 3;\n");
    write(root, "src/b.ts", "export const b = 2;\n");
    await p.close();
  });

  it("a snapshot opens on what changed since it, up to the work tree now, with a restore preview", async () => {
    const id = snapshotId(root, ["--label", "before the docs", "--task", "T-7"]);
    write(root, "README.md", "# r\nmore docs\n");
    const p = await page();
    await p.locator(".row.snapshot", { hasText: "before the docs" }).click();
    await p.locator("table.diff").waitFor();
    expect(await p.locator("#detail h2").textContent()).toBe(`snapshot ${id}`);
    expect(await p.locator("table.diff td.code.add").allTextContents()).toEqual(["+more docs"]);
    await p.locator("#preview-restore").click();
    expect(await p.locator("tr.item.restore .path").textContent()).toBe("README.md");
    expect(await p.locator(".row.task .title").allTextContents()).toEqual(["T-7"]);
    write(root, "README.md", "# r\n");
    await p.close();
  });

  it("the timeline is live: a session recorded while the page is open appears without a reload", async () => {
    const p = await page();
    claudeCall(root, "c0ffee00-agent-three", "Write", { file_path: join(root, "docs/new.md"), content: "# new\n" }, () => write(root, "docs/new.md", "# new\n"));
    await p.locator(".row.session", { hasText: "c0ffee00-agent-three" }).waitFor({ timeout: 10_000 });
    await p.close();
  });

  it("a page load reads the timeline once, though the live stamp comes while it is on its way; a capture then reads it again", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 760 } });
    const p = await ctx.newPage();
    const asked: string[] = [];
    p.on("request", (r) => {
      if (new URL(r.url()).pathname.endsWith("/api/timeline")) asked.push(r.url());
    });
    // The first answer held back, as a long record's is: the stream's first stamp lands before it.
    let held = false;
    await p.route(/\/api\/timeline$/, async (route) => {
      if (!held) {
        held = true;
        await new Promise((r) => setTimeout(r, 1000));
      }
      await route.continue();
    });
    let streams = 0;
    p.on("response", (r) => {
      if (new URL(r.url()).pathname.endsWith("/api/events")) streams++;
    });
    await p.goto(ui.url);
    await p.locator(".row.session").first().waitFor();
    await expect.poll(() => p.locator("#live").getAttribute("class")).toBe("live on");
    // Past the stream's first stamp and the reload's 150 ms wait.
    await p.waitForTimeout(1200);
    expect([held, asked.length, streams]).toEqual([true, 1, 1]);
    // Control: a capture changes the stamp, and the page reads the timeline again.
    claudeCall(root, "0dd0dd00-agent-four", "Write", { file_path: join(root, "docs/four.md"), content: "# four\n" }, () => write(root, "docs/four.md", "# four\n"));
    await p.locator(".row.session", { hasText: "0dd0dd00-agent-four" }).waitFor({ timeout: 10_000 });
    // Once for the call's pre and once for its post where the stream polled between them (a loaded machine): more than once, either way.
    expect(asked.length).toBeGreaterThan(1);
    await ctx.close();
  });

  it("a page without the token, or under a foreign host name (DNS rebinding), is refused; the printed URL works", async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const bare = await p.goto(`http://127.0.0.1:${ui.port}/`);
    expect(bare?.status()).toBe(401);
    // A person's browser gets a page that says what to do, not raw JSON; a script still gets JSON.
    expect(await p.locator("h1").textContent()).toBe("unwind ui");
    expect(await p.textContent("body")).toMatch(/needs the token.*Open the address unwind ui printed/s);
    const script = await fetch(`http://127.0.0.1:${ui.port}/`);
    expect([script.status, (await script.json()).error.code]).toEqual([401, "E_REFUSED"]);
    const rebound = await p.goto(`http://evil.test:${ui.port}/?token=${ui.token}`);
    expect(rebound?.status()).toBe(403);
    expect(await p.textContent("body")).toMatch(/Host .*evil\.test.* refused/);
    const good = await p.goto(ui.url);
    expect(good?.status()).toBe(200);
    await ctx.close();
  });

  it("the token reaches no other server on 127.0.0.1 unless asked for the app's random path; a reload still works", async () => {
    const seen: string[] = [];
    // An agent's dev server on another loopback port: it records every header the browser sends it.
    const dev = createServer((req, res) => {
      seen.push(`${req.url} ${JSON.stringify(req.headers)}`);
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<p>dev server</p>");
    });
    await new Promise<void>((resolve) => dev.listen(0, "127.0.0.1", resolve));
    const port = (dev.address() as AddressInfo).port;
    try {
      const p = await page();
      await p.reload();
      await p.locator(".row.session").first().waitFor();
      await expect.poll(() => p.locator("#live").getAttribute("class")).toBe("live on");
      const app = new URL(p.url()).pathname;
      for (const path of ["/", "/api/current?path=.env", "/api/events", "/s/"]) await p.goto(`http://127.0.0.1:${port}${path}`);
      // The browser asks each page's favicon too, when it gets round to it.
      const pages = () => seen.filter((l) => !l.startsWith("/favicon"));
      expect(pages()).toHaveLength(4);
      expect(seen.join("\n")).not.toContain(ui.token);
      // Its pages cannot know the app's random path; asked for it, it would get the cookie.
      await p.goto(`http://127.0.0.1:${port}${app}`);
      expect(pages().at(-1)).toContain(ui.token);
      // Control: a cookie at Path=/ (what the UI once set) reaches the dev server on any path.
      await p.context().addCookies([{ name: `unwind-${ui.port}`, value: ui.token, domain: "127.0.0.1", path: "/" }]);
      await p.goto(`http://127.0.0.1:${port}/api/current?path=.env`);
      expect(pages().at(-1)).toContain(ui.token);
      await p.close();
    } finally {
      dev.close();
    }
  });

  it("opened for the person, the browser is given a file that leads to the app, with no token on its command line", async () => {
    const bin = tempDir("unwind-opener-");
    const log = join(bin, "argv");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${log}"\n`, { mode: 0o755 });
    const opened = await startUi(root, [], { browser: true, env: { PATH: `${bin}:${process.env.PATH}` } });
    try {
      await expect.poll(() => existsSync(log)).toBe(true);
      const argv = readFileSync(log, "utf8");
      expect(argv).not.toContain(opened.token);
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(pathToFileURL(argv.trim()).href);
      await p.locator(".row.session").first().waitFor();
      expect(p.url()).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${opened.port}/s/[0-9a-f]{32}/$`));
      await expect.poll(() => p.locator("#live").getAttribute("class")).toBe("live on");
      await ctx.close();
    } finally {
      await opened.stop();
    }
  });

  it("the status bar says whether each client's installed hooks have run, and what a client still needs", async () => {
    const p0 = await page();
    expect(await p0.locator("#status").textContent()).not.toContain("hooks"); // control: no hooks installed, none mentioned
    await p0.close();
    expect(unwind(root, ["init", "--claude", "--gemini"]).code).toBe(0);
    try {
      const p = await page();
      const ran = p.locator("#status span", { hasText: "claude hooks ran" });
      await ran.waitFor();
      expect(await ran.getAttribute("class")).toBe("good");
      const never = p.locator("#status span", { hasText: "gemini hooks never ran" });
      expect(await never.getAttribute("class")).toBe("bad");
      await p.close();
    } finally {
      rmSync(join(root, ".claude"), { recursive: true, force: true });
      rmSync(join(root, ".gemini"), { recursive: true, force: true });
    }
  });
});
