/**
 * The web app's page (SPEC section 12): a live timeline on the left, the
 * opened item on the right. Everything it shows comes from the server's JSON
 * API, which is the library's `--json` documents; it changes nothing but by
 * POSTing a previewed plan's digest. Built by build.mjs into dist/ui/app.js.
 */
import type { ChangeSetReport } from "../../ops/changes.js";
import type { BaselineSummary } from "../../ops/baseline.js";
import type { CleanupReport, RunShow, RunSummary } from "../../ops/runs.js";
import type { ReceiptSummary } from "../../ops/receipts.js";
import type { CallSummary, SessionSummary } from "../../ops/sessions.js";
import type { SnapshotInfo } from "../../ops/snapshot.js";
import type { StatusReport } from "../../ops/status.js";
import type { ReportItem, UndoReport } from "../../ops/take-back.js";
import type { VerifyReport } from "../../ops/verify.js";
import type { State } from "../../domain/types.js";
import { renderDiff, type DiffMode, type HunkLike } from "./diff-view.js";
import { languageOf } from "./highlight.js";
import { ago, bytes, clear, h } from "./dom.js";
import { ACTIONS, REASONS } from "./words.js";
import { revertHunks } from "../../domain/hunks.js";

interface Timeline {
  root: string;
  stamp: string;
  sessions: SessionSummary[];
  calls: CallSummary[];
  callsTotal: number;
  snapshots: SnapshotInfo[];
  receipts: ReceiptSummary[];
  runs: { available: boolean; note: string | null };
  runList: RunSummary[];
  baselines: BaselineSummary[];
}

interface Content {
  size: number;
  sha256: string | null;
  oid: string | null;
  text: string | null;
  binary: boolean;
  tooLarge: boolean;
}

type ApiError = Error & { status: number; code: string; hint: string | null };

/** What a timeline row opens: a scope (its change set, undo preview), or a receipt (its redo preview). */
type Target =
  | { kind: "session"; id: string }
  | { kind: "call"; id: string; session: string }
  | { kind: "task"; id: string }
  | { kind: "snapshot"; id: string }
  | { kind: "receipt"; id: string }
  | { kind: "run"; id: string }
  | { kind: "baseline"; id: string };

interface Row {
  key: string;
  target: Target;
  el: HTMLElement;
}

const token = document.querySelector<HTMLMetaElement>('meta[name="unwind-token"]')?.content ?? "";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const state = {
  timeline: null as Timeline | null,
  rows: [] as Row[],
  cursor: 0,
  openKey: null as string | null,
  mode: (localStorage.getItem("unwind-diff") as DiffMode | null) ?? "unified",
  filter: { session: "", task: "", run: "", path: "" },
  runSessions: new Map<string, string[]>(),
  /** Which diffs the person marked viewed, by scope, path and the state shown (a new change to the path shows again). */
  viewed: new Set<string>(JSON.parse(localStorage.getItem("unwind-viewed") ?? "[]") as string[]),
  /** The calls the server found for the session and path filters among every call, when the timeline lists only the newest (`key`: the filters they are for). */
  found: null as { key: string; calls: CallSummary[] } | null,
};

let refining = 0;
/** Until the page's first timeline lands: a stamp that comes meanwhile waits for it (`live`). */
let firstLoad = true;

/**
 * The timeline lists the newest calls only; a session or path filter must
 * reach every call, so the server is asked for those the filters select
 * (a moment after the last keystroke), and the rows show them too.
 */
function refine(): void {
  const t = state.timeline;
  const { session, task, path } = state.filter;
  const key = `${session}\0${task}\0${path}`;
  if (!t || t.callsTotal <= t.calls.length || (!session && !path)) {
    state.found = null;
    return;
  }
  if (state.found?.key === key) return;
  const mine = ++refining;
  window.setTimeout(async () => {
    if (mine !== refining) return;
    try {
      const r = await api<{ calls: CallSummary[] }>("/api/log", { session, task, path, limit: "300" });
      if (mine !== refining) return;
      state.found = { key, calls: r.calls };
      renderTimeline();
    } catch {
      /* the timeline's own calls stay */
    }
  }, 120);
}

async function api<T>(path: string, params: Record<string, string | undefined> = {}, body?: object): Promise<T> {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ""));
  // Relative to the page: under the app's random path, like its assets and event stream, which the page never needs to name.
  const res = await fetch(body ? `.${path}` : `.${path}${q.size ? `?${q}` : ""}`, {
    method: body ? "POST" : "GET",
    headers: { "x-unwind-token": token, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : null,
    credentials: "same-origin",
  });
  const doc = await res.json();
  if (!res.ok) {
    const e = new Error(doc?.error?.message ?? `HTTP ${res.status}`) as ApiError;
    e.status = res.status;
    e.code = doc?.error?.code ?? "E_HTTP";
    e.hint = doc?.error?.hint ?? null;
    throw e;
  }
  return doc as T;
}

function errorBox(e: unknown, retry?: { label: string; run: () => void }): HTMLElement {
  const err = e as Partial<ApiError>;
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, err.code ?? "Error"),
    " ",
    err.message ?? String(e),
    err.hint ? h("div", { class: "hint" }, err.hint) : null,
    retry ? h("button", { onclick: retry.run }, retry.label) : null,
  );
}

const short = (s: string | null | undefined, n = 8) => (s ? s.slice(0, n) : "-");
const stateShort = (s: State | null) => (s === null ? "absent" : s.kind === "file" ? short(s.oid ?? s.sha256) : `${s.kind} ${short(s.oid ?? s.sha256)}`);
const scopeParams = (t: Target): Record<string, string> => (t.kind === "call" ? { call: t.id, session: t.session } : { [t.kind]: t.id });
/** The snapshots a hook took around a shell call: its restore points, shown in the call's row and page, not as rows of their own. */
const snapshotsOf = (t: Timeline, session: string, call: string) => [...(aroundCalls(t).get(`${session}\0${call}`) ?? [])].sort((a, b) => (a.at < b.at ? -1 : 1));
/** The timeline's snapshots by the call they were taken around, made once per timeline: every call row asks. */
const byCall = new WeakMap<Timeline, Map<string, SnapshotInfo[]>>();
function aroundCalls(t: Timeline): Map<string, SnapshotInfo[]> {
  let m = byCall.get(t);
  if (m) return m;
  m = new Map();
  for (const x of t.snapshots) {
    if (x.session === null || x.call === null) continue;
    const k = `${x.session}\0${x.call}`;
    const list = m.get(k);
    if (list) list.push(x);
    else m.set(k, [x]);
  }
  byCall.set(t, m);
  return m;
}
/** The run a snapshot was taken around (`unwind run` labels them "run ID: before" and "run ID: after"), when that run is listed. */
const runOfSnapshot = (t: Timeline, s: SnapshotInfo) => {
  const m = /^run (.+): (before|after)$/.exec(s.label ?? "");
  return m && t.runList.some((r) => r.id === m[1]) ? m[1]! : null;
};
const runSnapshots = (t: Timeline, id: string) => t.snapshots.filter((s) => runOfSnapshot(t, s) === id).sort((a, b) => (a.at < b.at ? -1 : 1));

// ---------------------------------------------------------------- timeline

async function loadTimeline(): Promise<void> {
  try {
    state.timeline = await api<Timeline>("/api/timeline");
    state.found = null;
    refine();
    renderFilters();
    renderTimeline();
  } catch (e) {
    clear($("timeline"), h("div", { class: "empty" }, errorBox(e)));
  }
}

function tasksOf(t: Timeline): string[] {
  return [...new Set([...t.sessions.flatMap((s) => s.tasks), ...t.snapshots.flatMap((s) => (s.task ? [s.task] : []))])].sort();
}

function renderFilters(): void {
  const t = state.timeline!;
  const sel = (id: string, all: string, values: { value: string; label: string }[], current: string) => {
    const el = $<HTMLSelectElement>(id);
    clear(el, h("option", { value: "" }, all), ...values.map((v) => h("option", { value: v.value, selected: v.value === current }, v.label)));
  };
  sel(
    "f-session",
    "every session",
    t.sessions.map((s) => ({ value: s.session, label: s.session })),
    state.filter.session,
  );
  sel(
    "f-task",
    "every task",
    tasksOf(t).map((x) => ({ value: x, label: x })),
    state.filter.task,
  );
  const run = $<HTMLSelectElement>("f-run");
  run.disabled = !t.runs.available;
  run.title = t.runs.note ?? "";
  clear(
    run,
    h("option", { value: "" }, t.runs.available ? "every run" : "runs: not built yet"),
    ...t.runList.map((r) => h("option", { value: r.id, selected: r.id === state.filter.run }, `${r.id} · ${r.command.join(" ").slice(0, 40)}`)),
  );
}

/** A path filter: a plain substring, or a glob when it holds * or ?. */
function pathMatcher(f: string): ((p: string) => boolean) | null {
  if (!f) return null;
  if (!/[*?]/.test(f)) return (p) => p.includes(f);
  const re = new RegExp(
    `^${f
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*/g, "\0")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]")
      .replace(/\0/g, ".*")}$`,
  );
  return (p) => re.test(p);
}

function renderTimeline(): void {
  const t = state.timeline!;
  const { session, task, path, run } = state.filter;
  // A run's sessions are those its hooks labelled with it (`run show` lists them): the run filter keeps them and the run.
  const runSessions = new Set(run ? (state.runSessions.get(run) ?? []) : []);
  const match = pathMatcher(path);
  const list = $("timeline");
  const rows: Row[] = [];
  type Item = { at: string; render: () => void };
  const items: Item[] = [];

  // The calls the server found for these filters, beside the newest the timeline lists.
  let pool = t.calls;
  if (state.found && state.found.key === `${session}\0${task}\0${path}`) {
    const listed = new Set(t.calls.map((c) => `${c.session}\0${c.call}`));
    pool = [...t.calls, ...state.found.calls.filter((c) => !listed.has(`${c.session}\0${c.call}`))].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  }
  const callsOf = (s: string) => pool.filter((c) => c.session === s && (!match || c.paths.some(match)));
  for (const s of t.sessions) {
    if (session && s.session !== session) continue;
    if (run && !runSessions.has(s.session)) continue;
    if (task && !s.tasks.includes(task)) continue;
    const calls = callsOf(s.session);
    if (match && calls.length === 0) continue;
    items.push({
      at: s.last,
      render: () => {
        rows.push(
          row(
            { kind: "session", id: s.session },
            "session",
            s.session,
            `${s.calls} call${s.calls === 1 ? "" : "s"} · ${s.paths} path${s.paths === 1 ? "" : "s"}${s.tasks.length ? ` · task ${s.tasks.join(", ")}` : ""}`,
            s.last,
            0,
          ),
        );
        // A shell call's snapshots (before and after it) are folded into its row: one row a call, not three.
        for (const c of calls) {
          const around = snapshotsOf(t, c.session, c.call).length;
          const sub = `${c.paths.join(" ") || "(no paths)"}${around ? ` · ${around} restore point${around === 1 ? "" : "s"}` : ""}`;
          rows.push(row({ kind: "call", id: c.call, session: c.session }, "call", `${c.tool} ${short(c.call, 14)}`, sub, c.at, 1));
        }
      },
    });
  }
  if (!match) {
    for (const r of t.runList) {
      if (run && r.id !== run) continue;
      if (session || (task && r.task !== task)) continue;
      const ch = r.changes;
      const sub = `${r.command.join(" ")} · exit ${r.exit}${r.timedOut ? " (timed out)" : ""} · ${ch.allow + ch.review + ch.deny} path${ch.allow + ch.review + ch.deny === 1 ? "" : "s"} (${ch.allow} allow, ${ch.review} review, ${ch.deny} deny)`;
      items.push({ at: r.startedAt, render: () => rows.push(row({ kind: "run", id: r.id }, "run", `run ${r.id}`, sub, r.startedAt, 0)) });
    }
    for (const b of t.baselines) {
      if (session || task || run) continue;
      items.push({
        at: b.lastAt,
        render: () =>
          rows.push(
            row(
              { kind: "baseline", id: b.key },
              "baseline",
              b.key,
              `${b.paths} path${b.paths === 1 ? "" : "s"} under ${b.prefixes.join(", ")} · ${b.captures} capture${b.captures === 1 ? "" : "s"}`,
              b.lastAt,
              0,
            ),
          ),
      });
    }
    for (const name of tasksOf(t)) {
      if (run) continue;
      if (task && name !== task) continue;
      if (session && !t.sessions.some((s) => s.session === session && s.tasks.includes(name))) continue;
      const times = [...t.sessions.filter((s) => s.tasks.includes(name)).map((s) => s.last), ...t.snapshots.filter((s) => s.task === name).map((s) => s.at)];
      const last = times.reduce((m, x) => (x > m ? x : m), times[0] ?? "");
      items.push({ at: last, render: () => rows.push(row({ kind: "task", id: name }, "task", name, "a task: its sessions' work", last, 0)) });
    }
    for (const s of t.snapshots) {
      if (s.session !== null && s.call !== null && t.sessions.some((x) => x.session === s.session)) continue; // folded into its call's row
      if (runOfSnapshot(t, s) !== null) continue; // folded into its run's row
      if (run) continue;
      if (session && s.session !== session) continue;
      if (task && s.task !== task) continue;
      items.push({ at: s.at, render: () => rows.push(row({ kind: "snapshot", id: s.id }, "snapshot", s.label ?? s.id, `${s.id}${s.session ? ` · ${s.session}` : ""}`, s.at, 0)) });
    }
    for (const r of t.receipts) {
      if (run && r.scope.id !== run) continue;
      if (session && r.scope.id !== session) continue;
      if (task && r.scope.id !== task) continue;
      items.push({
        at: r.at,
        render: () => rows.push(row({ kind: "receipt", id: r.id }, "receipt", `${r.kind} ${r.scope.kind} ${r.scope.id}`, `${r.id} · ${countsText(r.counts)}${byText(r.by)}`, r.at, 0)),
      });
    }
  }
  items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  for (const i of items) i.render();
  // A live reload replaces the rows: the keyboard stays on the row it was on.
  const hadFocus = list.contains(document.activeElement);
  clear(list, ...rows.map((r) => r.el));
  if (rows.length === 0)
    list.append(
      h(
        "div",
        { class: "empty" },
        t.sessions.length === 0 && t.snapshots.length === 0 ? "Nothing recorded yet: run unwind init --claude (or --codex, --gemini) and let an agent work." : "Nothing matches these filters.",
      ),
    );
  if (t.callsTotal > t.calls.length) list.append(h("div", { class: "empty" }, `The newest ${t.calls.length} of ${t.callsTotal} calls are listed.`));
  state.rows = rows;
  const open = rows.findIndex((r) => r.key === state.openKey);
  state.cursor = Math.min(Math.max(0, open >= 0 ? open : state.cursor), Math.max(0, rows.length - 1));
  markCursor(hadFocus);
}

function row(target: Target, kind: string, title: string, sub: string, at: string, depth: number): Row {
  const key = `${target.kind}:${target.id}:${target.kind === "call" ? target.session : ""}`;
  const el = h(
    "div",
    { class: `row ${kind} depth${depth}${key === state.openKey ? " open" : ""}`, "data-kind": kind, role: "option", tabindex: -1, "aria-selected": "false" },
    h("span", { class: "badge" }, kind),
    h("span", { class: "title" }, title),
    h("span", { class: "when", title: at }, at ? ago(at) : ""),
    h("div", { class: "sub" }, sub),
  );
  const r = { key, target, el };
  el.addEventListener("click", () => {
    state.cursor = state.rows.indexOf(r);
    markCursor(true);
    openTarget(r);
  });
  return r;
}

/** The row last marked selected: moving the cursor touches it and the new one, not every row. */
let marked: HTMLElement | null = null;

function markCursor(focus: boolean): void {
  const r = state.rows[state.cursor];
  if (marked && marked !== r?.el) marked.setAttribute("aria-selected", "false");
  r?.el.setAttribute("aria-selected", "true");
  marked = r?.el ?? null;
  if (r && focus) {
    r.el.focus({ preventScroll: true });
    r.el.scrollIntoView({ block: "nearest" });
  }
}

function countsText(c: Record<string, number>): string {
  const parts = [
    c.restore && `${c.restore} restored`,
    c.delete && `${c.delete} deleted`,
    c.merge && `${c.merge} merged`,
    c.skip && `${c.skip} skipped`,
    c.conflict && `${c.conflict} conflict${c.conflict === 1 ? "" : "s"}`,
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "nothing to do";
}

// ---------------------------------------------------------------- detail

function openTarget(r: Row): void {
  state.openKey = r.key;
  for (const x of state.rows) x.el.classList.toggle("open", x.key === r.key);
  if (r.target.kind === "receipt") void showReceipt(r.target.id);
  else void showScope(r.target);
}

function modeToggle(rerender: () => void): HTMLElement {
  const b = (m: DiffMode, label: string) =>
    h(
      "button",
      {
        class: state.mode === m ? "on" : "",
        "aria-pressed": String(state.mode === m),
        onclick: () => {
          state.mode = m;
          localStorage.setItem("unwind-diff", m);
          rerender();
        },
      },
      label,
    );
  return h("span", { class: "toggle", role: "group", "aria-label": "diff layout" }, b("unified", "Unified"), b("split", "Side by side"));
}

async function showScope(t: Target): Promise<void> {
  const pane = $("detail");
  const title = t.kind === "call" ? `call ${t.id}` : `${t.kind} ${t.id}`;
  const preview = h("div", { id: "preview" });
  const extra = h("div", { id: "about" });
  const changes = h("div", { id: "changes" }, h("p", { class: "muted" }, "Loading the change set…"));
  const render = () => void renderChanges(t, changes, preview);
  const around = !state.timeline ? [] : t.kind === "call" ? snapshotsOf(state.timeline, t.session, t.id) : t.kind === "run" ? runSnapshots(state.timeline, t.id) : [];
  const what = t.kind === "run" ? "the run" : "this call";
  clear(
    pane,
    h(
      "header",
      { class: "detail-head" },
      h("h2", {}, title),
      t.kind === "call" ? h("div", { class: "muted" }, `in session ${t.session}`) : null,
      // A shell call's snapshots, folded into its page: the tree before and after it, each a restore point.
      around.length
        ? h(
            "div",
            { class: "around" },
            "Restore points: ",
            ...around.map((x, i) =>
              h("button", { class: "link", type: "button", onclick: () => openSnapshot(x.id) }, `${around.length === 2 ? (i === 0 ? "before" : "after") : `#${i + 1}`} ${what} (${short(x.id, 12)})`),
            ),
          )
        : null,
      h(
        "div",
        { class: "actions" },
        h("button", { id: "preview-undo", class: "primary", onclick: () => void showUndoPreview(t, preview, {}) }, "Preview undo"),
        t.kind === "call"
          ? h(
              "button",
              { id: "preview-from-here", title: "this call and every later call of its session", onclick: () => void showUndoPreview(t, preview, { fromHere: true }) },
              "Preview undo from here",
            )
          : null,
        t.kind === "run" ? h("button", { id: "preview-safe", onclick: () => void showUndoPreview(t, preview, { safeOnly: true }) }, "Preview safe-only undo") : null,
        t.kind === "run" ? h("button", { id: "preview-cleanup", onclick: () => void showCleanup(t.id, preview) }, "Preview cleanup") : null,
        t.kind === "snapshot" ? h("button", { id: "preview-restore", onclick: () => void showRestorePreview(t.id, preview, {}) }, "Preview restore") : null,
        modeToggle(render),
      ),
    ),
    extra,
    preview,
    changes,
  );
  if (t.kind === "run") void renderRun(t.id, extra);
  render();
}

/** Opens a snapshot's page from a call's restore points: its row, when listed, or the page alone. */
function openSnapshot(id: string): void {
  const r = state.rows.find((x) => x.target.kind === "snapshot" && x.target.id === id);
  if (r) openTarget(r);
  else {
    state.openKey = `snapshot:${id}:`;
    void showScope({ kind: "snapshot", id });
  }
}

/** A run's capsule (`unwind run show`): its command, exit, processes, policy per path, and what it cannot take back. */
async function renderRun(id: string, box: HTMLElement): Promise<void> {
  let r: RunShow;
  try {
    r = await api<RunShow>("/api/run", { run: id });
  } catch (e) {
    clear(box, errorBox(e));
    return;
  }
  const rec = r.record as RunShow["record"] & { argv?: string[]; exit?: { status: number; signal: string | null; timedOut: boolean }; durationMs?: number };
  const decisions = { allow: 0, review: 0, deny: 0 };
  for (const e of r.entries) decisions[e.decision]++;
  const running = r.processes.filter((p) => p.end === "still-running" || p.end === "access-denied").length;
  clear(
    box,
    h(
      "section",
      { class: "run-card" },
      h("h3", {}, "Run"),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "command"),
        h("dd", {}, h("code", {}, (rec.argv ?? []).join(" "))),
        h("dt", {}, "exit"),
        h(
          "dd",
          {},
          `${rec.exit?.status ?? "?"}${rec.exit?.signal ? ` (${rec.exit.signal})` : ""}${rec.exit?.timedOut ? ", timed out" : ""}${rec.durationMs !== undefined ? ` after ${(rec.durationMs / 1000).toFixed(1)} s` : ""}`,
        ),
        h("dt", {}, "paths"),
        h("dd", {}, `${r.entries.length} (${decisions.allow} allow, kept by a safe-only undo; ${decisions.review} review; ${decisions.deny} deny)`),
        h("dt", {}, "processes"),
        h("dd", {}, `${r.processes.length}${running ? `, ${running} left running` : ""}`),
        h("dt", {}, "sessions"),
        h("dd", {}, r.sessions.length ? r.sessions.join(", ") : "none recorded inside it"),
        h("dt", {}, "seal"),
        h("dd", { class: "good" }, `holds (${short(r.seal, 12)})`),
      ),
      r.results.length ? h("p", { class: "muted" }, `Since: ${r.results.map((x) => `${x.kind} ${ago(x.at)}`).join(", ")}`) : null,
      h("details", {}, h("summary", {}, `What this run cannot take back (${r.cannotTakeBack.length})`), h("ul", {}, ...r.cannotTakeBack.map((c) => h("li", {}, c)))),
    ),
  );
}

/** Hunks are asked for a page of entries at a time (the first page: the entries shown open): a change set of 10,000 paths is not diffed whole to show its first few, and each diff may read two blobs. */
const HUNK_PAGE = 20;
/** Entries are put on the page a chunk at a time, the next when the person scrolls near the end: 10,000 rows are never built at once. */
const ENTRY_CHUNK = 100;

async function renderChanges(t: Target, box: HTMLElement, preview: HTMLElement): Promise<void> {
  let cs: ChangeSetReport;
  try {
    cs = await api<ChangeSetReport>("/api/changes", { ...scopeParams(t), patch: "1", offset: "0", limit: String(HUNK_PAGE) });
  } catch (e) {
    clear(box, errorBox(e));
    return;
  }
  const key = (e: ChangeSetReport["entries"][number]) => `${t.kind}:${t.id}:${e.path}:${stateShort(e.post)}`;
  const count = h("span", { class: "muted" });
  const counted = () => {
    const seen = cs.entries.filter((e) => state.viewed.has(key(e))).length;
    count.textContent = ` · ${seen} of ${cs.entries.length} viewed`;
  };
  clear(box, h("h3", {}, `${cs.entries.length} changed path${cs.entries.length === 1 ? "" : "s"}`, cs.entries.length ? count : null));
  if (cs.entries.length === 0) {
    box.append(h("p", { class: "muted" }, "This changed nothing in the work tree (or nothing that is still on the record)."));
    return;
  }
  counted();
  // The hunks of the entries past the first page, asked for when one of them is opened.
  const pages = new Map<number, Promise<void>>([[0, Promise.resolve()]]);
  const hunksOf = (i: number): Promise<void> => {
    const page = Math.floor(i / HUNK_PAGE) * HUNK_PAGE;
    let p = pages.get(page);
    if (!p) {
      p = api<ChangeSetReport>("/api/changes", { ...scopeParams(t), patch: "1", offset: String(page), limit: String(HUNK_PAGE) }).then((more) => {
        for (let k = page; k < Math.min(page + HUNK_PAGE, more.entries.length); k++) if (cs.entries[k]?.path === more.entries[k]!.path) cs.entries[k]!.hunks = more.entries[k]!.hunks ?? null;
      });
      p.catch(() => pages.delete(page));
      pages.set(page, p);
    }
    return p;
  };
  const files = h("div", { class: "files" });
  const anchors = new Map<string, HTMLDetailsElement>();
  const entryBox = (e: ChangeSetReport["entries"][number], i: number): HTMLElement => {
    const body = h("div", { class: "entry-body" });
    const seen = state.viewed.has(key(e));
    const viewed = h("input", { type: "checkbox", class: "viewed", checked: seen, "aria-label": `viewed ${e.path}` });
    const details = h(
      "details",
      { class: `entry${seen ? " is-viewed" : ""}`, open: i < 20 && !seen, id: `file-${i}`, "data-path": e.path },
      h(
        "summary",
        {},
        h("span", { class: `change ${e.change}` }, e.change),
        h("span", { class: "path" }, e.path),
        h("span", { class: "states" }, `${stateShort(e.pre)} → ${stateShort(e.post)}`),
        h("span", { class: "by" }, e.by.join(", ")),
        e.shared?.length ? h("span", { class: "shared" }, `shared with ${e.shared.map((c) => (c.session === `run:${c.call}` ? `run ${c.call}` : `${c.session} ${c.call}`)).join(", ")}`) : null,
        e.unclosed ? h("span", { class: "shared" }, "unclosed call") : null,
      ),
      body,
    );
    // Beside the summary, not in it: a control inside a summary is a control inside a button to a screen reader.
    viewed.addEventListener("change", () => {
      const k = key(e);
      if (viewed.checked) state.viewed.add(k);
      else state.viewed.delete(k);
      localStorage.setItem("unwind-viewed", JSON.stringify([...state.viewed]));
      details.classList.toggle("is-viewed", viewed.checked);
      tree.querySelector(`[data-file="${i}"]`)?.classList.toggle("is-viewed", viewed.checked);
      if (viewed.checked) details.open = false;
      counted();
    });
    let loaded = false;
    const load = async () => {
      if (loaded) return;
      loaded = true;
      if (e.hunks === undefined) {
        clear(body, h("p", { class: "muted" }, "Loading…"));
        try {
          await hunksOf(i);
        } catch (err) {
          loaded = false;
          clear(body, errorBox(err));
          return;
        }
      }
      // The engine takes back hunks of a file's change (an added file's too), not of a deletion, a link or a snapshot's change up to now.
      const hunkable = e.post?.kind === "file" && (e.pre === null || e.pre.kind === "file") && t.kind !== "snapshot";
      const take = hunkable && e.hunks && e.hunks.length > 0 ? (n: number) => void showUndoPreview(t, preview, { path: e.path, hunks: [n], states: { pre: e.pre, post: e.post } }) : undefined;
      void renderEntryDiff(e.pre, e.post, body, e.path, { hunks: e.hunks ?? null, takeBack: take });
    };
    details.addEventListener("toggle", () => details.open && void load());
    if (i < 20 && !seen) void load();
    anchors.set(e.path, details);
    return h("div", { class: "entry-box" }, details, h("label", { class: "viewed-label" }, viewed, " Viewed"));
  };
  // The entries a chunk at a time: the next chunk once the person scrolls near the end of what is shown.
  let shown = 0;
  const more = h("div", { class: "more muted", role: "status" });
  const showTo = (n: number) => {
    const upTo = Math.min(cs.entries.length, n);
    for (; shown < upTo; shown++) files.insertBefore(entryBox(cs.entries[shown]!, shown), more);
    more.textContent = shown < cs.entries.length ? `${shown} of ${cs.entries.length} shown; more as you scroll` : "";
  };
  files.append(more);
  showTo(ENTRY_CHUNK);
  new IntersectionObserver(
    (seen, obs) => {
      if (!seen.some((x) => x.isIntersecting)) return;
      showTo(shown + ENTRY_CHUNK);
      if (shown >= cs.entries.length) obs.disconnect();
    },
    { rootMargin: "600px" },
  ).observe(more);
  const index = new Map(cs.entries.map((e, i) => [e.path, i]));
  const tree = fileTree(cs.entries, (path) => {
    const i = index.get(path);
    if (i !== undefined && i >= shown) showTo(i + 1);
    const d = anchors.get(path);
    if (!d) return;
    d.open = true;
    d.scrollIntoView({ block: "start" });
    d.querySelector("summary")?.focus();
  });
  cs.entries.forEach((e, i) => {
    if (state.viewed.has(key(e))) tree.querySelector(`[data-file="${i}"]`)?.classList.add("is-viewed");
  });
  box.append(h("div", { class: "review" }, tree, files));
}

/** Up to this many paths, the file tree is built whole, every folder open; past it, folders open on a click. */
const TREE_OPEN = 500;

function countFiles(d: { dirs: Map<string, unknown>; files: unknown[] }): number {
  let n = d.files.length;
  for (const sub of d.dirs.values()) n += countFiles(sub as typeof d);
  return n;
}

/** The scope's paths as a tree of folders, each file a link to its diff (GitHub's "Files changed" sidebar). */
function fileTree(entries: ChangeSetReport["entries"], go: (path: string) => void): HTMLElement {
  type Dir = { dirs: Map<string, Dir>; files: { name: string; i: number }[] };
  const top: Dir = { dirs: new Map(), files: [] };
  entries.forEach((e, i) => {
    const parts = e.path.split("/");
    let d = top;
    for (const p of parts.slice(0, -1)) {
      if (!d.dirs.has(p)) d.dirs.set(p, { dirs: new Map(), files: [] });
      d = d.dirs.get(p)!;
    }
    d.files.push({ name: parts.at(-1)!, i });
  });
  // A big change set's folders start closed, each built when first opened: 10,000 files are not 10,000 buttons at once.
  const lazy = entries.length > TREE_OPEN;
  const list = (d: Dir): HTMLElement =>
    h(
      "ul",
      {},
      ...[...d.dirs.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, sub]) => {
          // A folder with one folder in it and nothing else reads as one step (src/ui/web), as GitHub shows it.
          let label = name;
          let inner = sub;
          while (inner.files.length === 0 && inner.dirs.size === 1) {
            const [n, s] = [...inner.dirs.entries()][0]!;
            label += `/${n}`;
            inner = s;
          }
          if (!lazy) return h("li", { class: "dir" }, h("span", { class: "dir-name" }, `${label}/`), list(inner));
          const folder = h("details", { class: "dir-fold" }, h("summary", { class: "dir-name" }, `${label}/ `, h("span", { class: "muted" }, `${countFiles(inner)}`)));
          folder.addEventListener("toggle", () => {
            if (folder.open && folder.children.length === 1) folder.append(list(inner));
          });
          return h("li", { class: "dir" }, folder);
        }),
      ...d.files
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((f) => {
          const e = entries[f.i]!;
          return h("li", {}, h("button", { type: "button", class: `file ${e.change}`, "data-file": f.i, title: e.path, onclick: () => go(e.path) }, h("span", { class: `dot ${e.change}` }), f.name));
        }),
    );
  return h("nav", { class: "tree", "aria-label": "changed files" }, list(top));
}

/** Bytes asked for in the same turn of the page: sent as one `/api/contents`, so a page of diffs is a request, not two an entry. */
let contentAsks: { ref: string; resolve: (c: Content) => void; reject: (e: unknown) => void }[] = [];
/** States a request: 50 pairs of hashes keep its address under 7 KB, well inside a server's 16 KB of headers (the server takes up to 100). */
const CONTENTS_AT_ONCE = 50;

function contentOf(sha256: string | null | undefined, oid: string | null | undefined): Promise<Content> {
  return new Promise((resolve, reject) => {
    if (contentAsks.length === 0) setTimeout(() => void askContents(), 0);
    contentAsks.push({ ref: `${sha256 ?? ""}:${oid ?? ""}`, resolve, reject });
  });
}

async function askContents(): Promise<void> {
  const asks = contentAsks;
  contentAsks = [];
  for (let i = 0; i < asks.length; i += CONTENTS_AT_ONCE) {
    const some = asks.slice(i, i + CONTENTS_AT_ONCE);
    try {
      const r = await api<{ contents: (Content | { error: { code: string; message: string; hint: string | null }; status: number })[] }>("/api/contents", {
        refs: some.map((a) => a.ref).join(","),
      });
      for (const [k, a] of some.entries()) {
        const c = r.contents[k];
        if (c && !("error" in c)) {
          a.resolve(c);
          continue;
        }
        const e = new Error(c?.error.message ?? "no answer for this content") as ApiError;
        e.status = c?.status ?? 500;
        e.code = c?.error.code ?? "E_HTTP";
        e.hint = c?.error.hint ?? null;
        a.reject(e);
      }
    } catch (e) {
      for (const a of some) a.reject(e);
    }
  }
}

/** One side of a diff: its text, or why it has none (absent, binary, over the cap, not kept). */
async function side(s: State | null, path?: string): Promise<{ text: string | null; note: string | null }> {
  if (s === null) return { text: "", note: null };
  if (s.kind === "toolarge") return { text: null, note: `over the size cap: ${bytes(s.size ?? 0)}, sha256 ${short(s.sha256, 16)} (bytes not kept)` };
  if (s.kind === "gitlink") return { text: null, note: `submodule at commit ${s.oid ?? "?"}` };
  if (s.kind === "unknown") return { text: null, note: "never captured" };
  if (!s.sha256 && !s.oid) return { text: null, note: "no bytes recorded" };
  let c: Content;
  try {
    c = await contentOf(s.sha256, s.oid);
  } catch (e) {
    // A snapshot's change set up to the work tree names the files as they are now, whose bytes no record keeps: read them from the work tree.
    if ((e as ApiError).status !== 404 || path === undefined) throw e;
    const now = await api<Content & { kind: string }>("/api/current", { path });
    if (now.sha256 !== (s.sha256 ?? now.sha256) || now.oid !== (s.oid ?? now.oid)) return { text: null, note: "the work tree changed since this list was made: open it again" };
    c = now;
  }
  const hash = `${bytes(c.size)}, ${c.oid ? `git ${short(c.oid)}` : `sha256 ${short(c.sha256 ?? "", 16) || "-"}`}`;
  if (c.binary) return { text: null, note: `binary: ${hash}` };
  if (c.tooLarge) return { text: null, note: `too large to show: ${hash}` };
  return { text: s.kind === "symlink" ? `→ ${c.text}` : c.text, note: null };
}

async function renderEntryDiff(
  pre: State | null,
  post: State | null,
  body: HTMLElement,
  path: string,
  o: { hunks?: HunkLike[] | null; takeBack?: ((n: number) => void) | undefined } = {},
): Promise<void> {
  clear(body, h("p", { class: "muted" }, "Loading…"));
  try {
    const [a, b] = await Promise.all([side(pre), side(post, path)]);
    if (a.text !== null && b.text !== null) {
      clear(body, renderDiff(a.text, b.text, state.mode, { hunks: o.hunks ?? null, lang: languageOf(path), takeBack: o.takeBack }));
      if (pre?.mode && post?.mode && pre.mode !== post.mode) body.prepend(h("div", { class: "muted" }, `mode ${pre.mode} → ${post.mode}`));
    } else
      clear(
        body,
        h(
          "div",
          { class: "binary" },
          h("div", {}, h("strong", {}, "before: "), pre === null ? "absent" : (a.note ?? `${bytes(pre.size ?? 0)} of text`)),
          h("div", {}, h("strong", {}, "after: "), post === null ? "absent" : (b.note ?? `${bytes(post.size ?? 0)} of text`)),
        ),
      );
  } catch (e) {
    clear(body, errorBox(e));
  }
}

// ---------------------------------------------------------------- previews and apply

type Options = {
  force?: boolean;
  merge?: boolean;
  /** A call and every later call of its session (`--from-call`). */
  fromHere?: boolean;
  /** A run's review and deny paths only (`--safe-only`). */
  safeOnly?: boolean;
  /** One path, and of it only these hunks (`--path P --hunk N`). */
  path?: string;
  hunks?: number[];
  /** With `hunks`: the change's before and after, to show what taking them back leaves. */
  states?: { pre: State | null; post: State | null };
};

/** The undo's scope and narrowing, as the API takes them (the same fields as the library's). */
function undoArgs(t: Target, o: Options): Record<string, string> {
  const scope = o.fromHere && t.kind === "call" ? { fromCall: t.id, session: t.session } : scopeParams(t);
  return { ...scope, ...(o.path ? { path: o.path } : {}) };
}

function undoTitle(o: Options): string {
  if (o.hunks) return `Take back hunk ${o.hunks.join(", ")} of ${o.path}`;
  if (o.fromHere) return "Undo from this call on";
  if (o.safeOnly) return "Safe-only undo";
  return "Undo";
}

async function showUndoPreview(t: Target, box: HTMLElement, o: Options): Promise<void> {
  const q = { ...undoArgs(t, o), hunks: o.hunks?.join(","), safeOnly: o.safeOnly ? "1" : undefined, force: o.force ? "1" : undefined, merge: o.merge ? "1" : undefined };
  await showPlan(box, undoTitle(o), () => api<UndoReport>("/api/plan", q), {
    options: { force: true, merge: !o.hunks },
    hunk: o.hunks && o.states ? { ...o.states, hunks: o.hunks } : undefined,
    current: o,
    again: (n) => void showUndoPreview(t, box, n),
    apply: (digest) =>
      api<UndoReport>(
        "/api/undo",
        {},
        { ...undoArgs(t, o), ...(o.hunks ? { hunks: o.hunks } : {}), ...(o.safeOnly ? { safeOnly: true } : {}), force: Boolean(o.force), merge: Boolean(o.merge), plan: digest },
      ),
  });
  box.scrollIntoView({ block: "nearest" });
}

/** A run's cleanup, previewed: which of its recorded processes would be ended (each only while its pid and start time match). */
async function showCleanup(id: string, box: HTMLElement): Promise<void> {
  clear(box, h("p", { class: "muted" }, "Looking for the run's processes…"));
  let c: CleanupReport;
  try {
    c = await api<CleanupReport>("/api/cleanup-plan", { run: id });
  } catch (e) {
    clear(box, errorBox(e));
    return;
  }
  const result = h("div", { id: "apply-result" });
  const live = c.processes.filter((p) => p.outcome === "still-running");
  const apply = h("button", { id: "apply", class: "primary danger", disabled: live.length === 0 }, live.length ? `End ${live.length} process${live.length === 1 ? "" : "es"}` : "Nothing to end");
  apply.addEventListener("click", async () => {
    apply.disabled = true;
    try {
      const done = await api<CleanupReport>("/api/cleanup", {}, { run: id });
      clear(result, h("div", { class: "done", role: "status" }, h("strong", {}, "Cleanup done"), ` · ${done.processes.map((p) => `${p.comm} ${p.pid}: ${p.outcome}`).join(", ") || "no processes"}`));
    } catch (e) {
      clear(result, errorBox(e));
    }
  });
  clear(
    box,
    h(
      "section",
      { class: "plan" },
      h("h3", {}, "Cleanup preview"),
      h("p", { class: "summary" }, `${c.processes.length} recorded process${c.processes.length === 1 ? "" : "es"} · nothing has been ended yet`),
      h("table", { class: "items" }, h("tbody", {}, ...c.processes.map((p) => h("tr", {}, h("td", { class: "action" }, p.outcome), h("td", {}, h("code", {}, `${p.comm} (pid ${p.pid})`)))))),
      h("div", { class: "actions" }, apply),
      result,
    ),
  );
}

async function showRestorePreview(id: string, box: HTMLElement, o: Options): Promise<void> {
  await showPlan(box, "restore", () => api<UndoReport>("/api/restore-plan", { snapshot: id, force: o.force ? "1" : undefined }), {
    options: { force: true, merge: false },
    current: o,
    again: (n) => void showRestorePreview(id, box, n),
    apply: (digest) => api<UndoReport>("/api/restore", {}, { snapshot: id, force: Boolean(o.force), plan: digest }),
  });
}

/** Who started an apply, as a receipt records it (nothing for one older than that record). */
function byText(by: ReceiptSummary["by"]): string {
  if (!by) return "";
  return ` · by ${by.client}${by.session ? ` ${by.session}` : ""}`;
}

async function showReceipt(id: string): Promise<void> {
  const pane = $("detail");
  const r = state.timeline?.receipts.find((x) => x.id === id);
  const box = h("div", { id: "preview" });
  clear(
    pane,
    h(
      "header",
      { class: "detail-head" },
      h("h2", {}, `receipt ${id}`),
      r ? h("div", { class: "muted" }, `${r.kind} of ${r.scope.kind} ${r.scope.id} · ${countsText(r.counts)}${byText(r.by)} · ${ago(r.at)}${r.recovered ? " · finished after a crash" : ""}`) : null,
      h("p", {}, "Redo takes this back: every path it wrote goes back to what it held just before, under the same conflict rules. Each path's diff below is what redo would change."),
    ),
    box,
  );
  const again = () => void showRedoPreview(id, box);
  again();
}

async function showRedoPreview(id: string, box: HTMLElement): Promise<void> {
  await showPlan(box, "redo", () => api<UndoReport>("/api/redo-plan", { receipt: id }), {
    options: { force: false, merge: false },
    current: {},
    again: () => void showRedoPreview(id, box),
    apply: (digest) => api<UndoReport>("/api/redo", {}, { receipt: id, plan: digest }),
  });
}

interface PlanUi {
  /** A hunk preview: the change's states and the hunks taken back, to show the file without them. */
  hunk?: { pre: State | null; post: State | null; hunks: number[] } | undefined;
  options: { force: boolean; merge: boolean };
  current: Options;
  again: (o: Options) => void;
  apply: (digest: string) => Promise<UndoReport>;
}

async function showPlan(box: HTMLElement, verb: string, load: () => Promise<UndoReport>, ui: PlanUi): Promise<void> {
  clear(box, h("p", { class: "muted" }, `Planning: ${verb.toLowerCase()}…`));
  let p: UndoReport;
  try {
    p = await load();
  } catch (e) {
    clear(box, errorBox(e));
    return;
  }
  const acting = p.counts.restore + p.counts.delete + p.counts.merge;
  const opt = (k: "force" | "merge", label: string) =>
    h("label", { class: "opt" }, h("input", { type: "checkbox", id: `opt-${k}`, checked: Boolean(ui.current[k]), onchange: () => ui.again({ ...ui.current, [k]: !ui.current[k] }) }), label);
  const result = h("div", { id: "apply-result" });
  const summary = h("p", { class: "summary" }, `${countsText(p.counts)} · nothing has been changed yet`);
  const title = h("span", {}, `${verb[0]!.toUpperCase()}${verb.slice(1)} preview`);
  const applyBtn = h("button", { id: "apply", class: "primary danger", disabled: acting === 0 }, acting === 0 ? "Nothing to apply" : `Apply this plan (${p.plan.slice(0, 12)})`);
  applyBtn.addEventListener("click", async () => {
    applyBtn.disabled = true;
    clear(result, h("p", { class: "muted" }, "Applying…"));
    try {
      const done = await ui.apply(p.plan);
      // The preview above is now what was done: it says so, not "nothing has been changed yet".
      title.textContent = `${verb[0]!.toUpperCase()}${verb.slice(1)} applied`;
      summary.textContent = `${countsText(done.counts)} · ${done.receipt ? `done: receipt ${done.receipt}` : "nothing needed writing, so no receipt"}`;
      applyBtn.textContent = "Applied";
      clear(
        result,
        h(
          "div",
          { class: "done", role: "status" },
          h("strong", {}, done.receipt ? `Applied: receipt ${done.receipt}` : "Nothing was written"),
          ` · ${countsText(done.counts)}`,
          done.partial ? " · some paths were left alone (see above)" : "",
          h("div", { class: "hint" }, "Redo it from its receipt in the timeline."),
        ),
      );
      void loadTimeline();
      void loadStatus();
    } catch (e) {
      const changed = (e as ApiError).code === "E_PLAN_CHANGED";
      clear(result, errorBox(e, changed ? { label: "Preview again", run: () => ui.again(ui.current) } : undefined));
      if (changed) result.prepend(h("p", { class: "stale" }, "The plan changed since this preview (a file was saved, an agent wrote, or a receipt was added), so nothing was done."));
    }
  });
  clear(
    box,
    h(
      "section",
      { class: "plan" },
      h("h3", {}, title, h("span", { class: "digest", title: p.plan }, ` plan ${p.plan.slice(0, 12)}`)),
      summary,
      ui.options.force || ui.options.merge
        ? h(
            "div",
            { class: "opts" },
            ui.options.merge ? opt("merge", " Merge (take back only this work's lines)") : null,
            ui.options.force ? opt("force", " Force (overwrite later edits; the receipt keeps them)") : null,
          )
        : null,
      h("table", { class: "items" }, h("tbody", {}, ...p.items.map((i) => planRow(i, acting <= 3, ui.hunk)))),
      h("div", { class: "actions" }, applyBtn),
      result,
    ),
  );
}

function planRow(i: ReportItem, open: boolean, hunk: PlanUi["hunk"]): HTMLElement {
  const words = i.reason ? REASONS[i.reason] : null;
  return h(
    "tr",
    { class: `item ${i.action}` },
    h("td", { class: `action ${i.action}` }, i.action),
    h(
      "td",
      {},
      h("div", { class: "path" }, i.path),
      h(
        "div",
        { class: "muted" },
        `now ${nowShort(i.now)} → after: ${i.action === "restore" || i.action === "merge" ? stateShort(i.pre) : i.action === "delete" ? "absent" : "as now"}`,
        " · ",
        ACTIONS[i.action],
      ),
      words && i.reason !== "unchanged"
        ? h("div", { class: "reason" }, h("strong", {}, `${i.reason}: `), words.why, i.detail ? h("div", { class: "detail-line" }, i.detail) : null, h("div", { class: "todo" }, words.todo))
        : null,
      i.action === "conflict" && (i.now.kind === "file" || i.now.kind === "symlink") ? sinceView(i) : null,
      i.action === "restore" || i.action === "delete" || (i.action === "merge" && hunk) ? changeView(i, open, hunk) : null,
    ),
  );
}

/**
 * What applying does to a path, as a diff: what it holds now against what
 * it will hold (the bytes a restore writes back, nothing for a delete; for
 * a hunk taken back, the change's result against it without that hunk).
 * Opened at once on a short plan, so a redo or hunk preview shows text,
 * not hashes.
 */
function changeView(i: ReportItem, open: boolean, hunk: PlanUi["hunk"]): HTMLElement {
  const body = h("div", { class: "entry-body" });
  const d = h("details", { class: "what", open }, h("summary", {}, "What this changes"), body);
  let loaded = false;
  const load = async () => {
    if (!d.open || loaded) return;
    loaded = true;
    clear(body, h("p", { class: "muted" }, "Loading…"));
    try {
      if (i.action === "merge" && hunk) {
        const [pre, post] = await Promise.all([side(hunk.pre), side(hunk.post, i.path)]);
        const target = pre.text !== null && post.text !== null ? revertHunks(pre.text, post.text, hunk.hunks) : null;
        if (post.text === null || target === null) clear(body, h("p", { class: "muted" }, post.note ?? pre.note ?? "not text"));
        else clear(body, h("p", { class: "muted" }, "The change without this hunk; every later edit of the file stays."), renderDiff(post.text, target, state.mode, { lang: languageOf(i.path) }));
        return;
      }
      const now = i.now.kind === "file" || i.now.kind === "symlink" ? await api<Content & { kind: string }>("/api/current", { path: i.path }) : null;
      const before = now === null ? "" : now.text === null ? null : now.kind === "symlink" ? `→ ${now.text}` : now.text;
      const after = i.action === "delete" ? { text: "", note: null } : await side(i.pre, i.path);
      if (before !== null && after.text !== null) clear(body, renderDiff(before, after.text, state.mode, { lang: languageOf(i.path) }));
      else clear(body, h("p", { class: "muted" }, after.note ?? `now: ${now?.binary ? "binary" : "not shown"}, ${bytes(now?.size ?? 0)}`));
    } catch (e) {
      clear(body, errorBox(e));
    }
  };
  d.addEventListener("toggle", () => void load());
  if (open) queueMicrotask(() => void load());
  return d;
}

/** A conflict's "what changed since": the bytes this work left (the record) against what the path holds now. */
function sinceView(i: ReportItem): HTMLElement {
  const body = h("div", { class: "entry-body" });
  const d = h("details", { class: "since" }, h("summary", {}, "What changed since this work"), body);
  let loaded = false;
  d.addEventListener("toggle", async () => {
    if (!d.open || loaded) return;
    loaded = true;
    clear(body, h("p", { class: "muted" }, "Loading…"));
    try {
      const [left, now] = await Promise.all([side(i.post, i.path), api<Content & { kind: string }>("/api/current", { path: i.path })]);
      const planned = i.now.kind === "file" || i.now.kind === "symlink" ? i.now.sha256 : null;
      const moved = now.sha256 !== planned ? h("p", { class: "stale" }, "It changed again since this preview: preview again before applying.") : null;
      if (left.text !== null && now.text !== null) clear(body, moved, renderDiff(left.text, now.kind === "symlink" ? `→ ${now.text}` : now.text, state.mode));
      else
        clear(
          body,
          moved,
          h(
            "div",
            { class: "binary" },
            h("div", {}, h("strong", {}, "this work left: "), left.note ?? "text"),
            h(
              "div",
              {},
              h("strong", {}, "now: "),
              `${now.kind}, ${bytes(now.size ?? 0)}${now.binary ? ", binary" : ""}${now.oid ? `, git ${short(now.oid)}` : now.sha256 ? `, sha256 ${short(now.sha256, 16)}` : ""}`,
            ),
          ),
        );
    } catch (e) {
      clear(body, errorBox(e));
    }
  });
  return d;
}

function nowShort(n: ReportItem["now"]): string {
  if (n.kind === "file") return short(n.oid ?? n.sha256);
  if (n.kind === "symlink") return `symlink ${short(n.oid ?? n.sha256)}`;
  if (n.kind === "blocked") return `blocked at ${n.at}`;
  return n.kind;
}

// ---------------------------------------------------------------- status, verify, live

async function loadStatus(): Promise<void> {
  const box = $("status");
  try {
    const s = await api<StatusReport>("/api/status");
    clear(
      box,
      h("span", {}, `${s.sessions} session${s.sessions === 1 ? "" : "s"}`),
      h("span", {}, `${s.snapshots} snapshot${s.snapshots === 1 ? "" : "s"}`),
      h("span", {}, `${s.receipts} receipt${s.receipts === 1 ? "" : "s"}`),
      h("span", {}, `store ${bytes(s.bytes)}`),
      s.errorCount > 0
        ? h("span", { class: "bad", title: s.errors.map((e) => JSON.stringify(e)).join("\n") }, `${s.errorCount} capture error${s.errorCount === 1 ? "" : "s"} (unwind status)`)
        : h("span", { class: "good" }, "no capture errors"),
      s.damagedRecords > 0 ? h("span", { class: "bad" }, `${s.damagedRecords} damaged records`) : null,
      // Installed hooks that never ran record nothing and say nothing: the bar says it, with the client's next steps on hover.
      ...s.hooks.map((k) => {
        const problems = [...(k.commandFound ? [] : [`${k.program} is not there`]), ...(k.missing.length > 0 ? [`no hook on ${k.missing.join(", ")}`] : [])];
        const fix = [...problems.map((p) => `${p}: run unwind init --${k.harness} again`), ...k.next.map((n) => `next: ${n}`)].join("\n");
        if (k.lastFired === null) return h("span", { class: "bad", title: fix }, `${k.harness} hooks never ran`);
        return h("span", { class: problems.length > 0 ? "bad" : "good", title: fix || k.file }, `${k.harness} hooks ran ${ago(k.lastFired)}${problems.length > 0 ? ` (${problems.join("; ")})` : ""}`);
      }),
    );
    // The work tree's name; its full path on hover (and out of screenshots).
    $("root").textContent = s.root.split("/").pop() || s.root;
    $("root").title = s.root;
  } catch (e) {
    clear(box, errorBox(e));
  }
}

async function runVerify(): Promise<void> {
  const box = $("verify-result");
  clear(box, "verifying…");
  try {
    const v = await api<VerifyReport>("/api/verify");
    clear(
      box,
      v.ok
        ? h("span", { class: "good" }, `verified: ${v.blobs} blobs, ${v.records} records, ${v.receipts} receipts, ${v.snapshots} snapshots intact`)
        : h(
            "span",
            { class: "bad", title: v.problems.map((p) => `${p.kind} ${p.id}: ${p.message}`).join("\n") },
            `${v.problems.length} problem${v.problems.length === 1 ? "" : "s"}: ${v.problems[0]?.message ?? ""}`,
          ),
    );
  } catch (e) {
    clear(box, errorBox(e));
  }
}

/** Follows the record's stamp; what it returns is told the stamp of the page's first load once that lands. */
function live(): (loaded: string | undefined) => void {
  const dot = $("live");
  let last = "";
  let pending: number | undefined;
  // An EventSource sends no header: the cookie, valid under the app's path alone, carries the token.
  const es = new EventSource("./api/events");
  es.addEventListener("open", () => {
    dot.className = "live on";
    dot.title = "live: the timeline follows the record";
  });
  es.addEventListener("error", () => {
    dot.className = "live off";
    dot.title = "not live: the server is not answering (stopped?)";
  });
  const reload = () => {
    // Several captures in a burst: one reload.
    clearTimeout(pending);
    pending = window.setTimeout(() => {
      void loadTimeline();
      void loadStatus();
    }, 150);
  };
  es.addEventListener("stamp", (ev) => {
    const stamp = (ev as MessageEvent<string>).data;
    if (stamp === last) return;
    last = stamp;
    // The page's first load is still on its way: it is compared with this stamp when it lands, not loaded twice at once.
    if (firstLoad) return;
    if (state.timeline?.stamp !== stamp) reload();
  });
  return (loaded) => {
    if (last !== "" && loaded !== last) reload();
  };
}

// ---------------------------------------------------------------- keys

function clearPathFilter(): void {
  ($("f-path") as HTMLInputElement).value = "";
  if (state.filter.path === "") return;
  state.filter.path = "";
  refine();
  renderTimeline();
}

function keys(e: KeyboardEvent): void {
  const tag = (e.target as HTMLElement).tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") {
    if (e.key === "Escape") {
      // The browser empties a search box on Escape without an input event: the filter goes with its text.
      if ((e.target as HTMLElement).id === "f-path") clearPathFilter();
      (e.target as HTMLElement).blur();
    }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const move = (d: number) => {
    e.preventDefault();
    state.cursor = Math.min(Math.max(0, state.cursor + d), state.rows.length - 1);
    markCursor(true);
  };
  if (e.key === "j" || e.key === "ArrowDown") move(1);
  else if (e.key === "k" || e.key === "ArrowUp") move(-1);
  else if (e.key === "Enter" && ((e.target as HTMLElement).closest("#timeline") || e.target === document.body)) {
    const r = state.rows[state.cursor];
    if (r) {
      e.preventDefault();
      openTarget(r);
    }
  } else if (e.key === "/") {
    e.preventDefault();
    $("f-path").focus();
  } else if (e.key === "?") $("keys").toggleAttribute("open");
}

function main(): void {
  for (const id of ["f-session", "f-task"]) {
    $(id).addEventListener("change", (e) => {
      state.filter[id === "f-session" ? "session" : "task"] = (e.target as HTMLSelectElement).value;
      refine();
      renderTimeline();
    });
  }
  $("f-run").addEventListener("change", async (e) => {
    const id = (e.target as HTMLSelectElement).value;
    if (id && !state.runSessions.has(id)) {
      try {
        state.runSessions.set(id, (await api<RunShow>("/api/run", { run: id })).sessions);
      } catch {
        state.runSessions.set(id, []);
      }
    }
    state.filter.run = id;
    renderTimeline();
  });
  $("f-path").addEventListener("input", (e) => {
    state.filter.path = (e.target as HTMLInputElement).value.trim();
    refine();
    renderTimeline();
  });
  // A search box's own clear button (and Escape) sends "search", not always "input".
  $("f-path").addEventListener("search", (e) => {
    state.filter.path = (e.target as HTMLInputElement).value.trim();
    refine();
    renderTimeline();
  });
  $("verify").addEventListener("click", () => void runVerify());
  document.addEventListener("keydown", keys);
  clear($("detail"), h("p", { class: "muted" }, "Open an item of the timeline (click, or j/k and Enter) to see what it changed and preview its undo."));
  const landed = live();
  void loadTimeline().then(() => {
    firstLoad = false;
    markCursor(true);
    landed(state.timeline?.stamp);
    // What the status bar shows is not needed for the first paint: asked for once the timeline is on screen.
    void loadStatus();
  });
}

main();
