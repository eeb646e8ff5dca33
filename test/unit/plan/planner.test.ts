/**
 * The planner against SPEC section 3, rule by rule. Every rule has a case
 * where it fires and a negative control: the same setup with the one
 * triggering fact changed, showing a different outcome. Pure: no fs, no git.
 */
import { describe, expect, it } from "vitest";
import { countActions, isPartial } from "../../../src/domain/actions.js";
import { plan } from "../../../src/plan/planner.js";
import type { ChangeEntry, GitOid, Observed, PlanInput, PlanItem, PlanOptions, Reason, RepoPath, Scope, Sha256, State } from "../../../src/domain/types.js";

// ---------------------------------------------------------------- builders

const sha = (s: string) => `sha256-${s}` as Sha256;
const oid = (s: string) => `oid-${s}` as GitOid;

/** A recorded regular file. */
function file(content: string, mode = "100644", extra: Partial<State> = {}): State {
  return { kind: "file", mode, size: 10, sha256: sha(content), ...extra };
}
/** A recorded file known only by its git blob id (tree snapshots). */
function fileByOid(content: string, mode = "100644"): State {
  return { kind: "file", mode, size: 10, oid: oid(content) };
}
function symlinkState(target: string): State {
  return { kind: "symlink", mode: "120000", sha256: sha(`link:${target}`) };
}
function toolargeState(content?: string): State {
  return content === undefined ? { kind: "toolarge", size: 1e9 } : { kind: "toolarge", size: 1e9, sha256: sha(content) };
}

/** What is on disk now. */
const obs = {
  absent: (): Observed => ({ kind: "absent" }),
  file: (content: string, o: { mode?: string; size?: number; nlink?: number; text?: boolean; oid?: string; noSha?: boolean } = {}): Observed => ({
    kind: "file",
    mode: o.mode ?? "100644",
    size: o.size ?? 10,
    nlink: o.nlink ?? 1,
    sha256: sha(content),
    text: o.text ?? true,
    ...(o.oid !== undefined ? { oid: oid(o.oid) } : {}),
  }),
  symlink: (target: string): Observed => ({ kind: "symlink", target: Buffer.from(target), sha256: sha(`link:${target}`) }),
  dir: (): Observed => ({ kind: "dir" }),
  other: (): Observed => ({ kind: "other" }),
  blocked: (at: string): Observed => ({ kind: "blocked", at }),
};

function entry(path: string, pre: State | null, post: State | null): ChangeEntry {
  const change = pre === null ? "added" : post === null ? "deleted" : pre.kind !== post.kind ? "typechange" : "modified";
  return { path: path as RepoPath, change, pre, post, by: ["sess-1"] };
}

/** A plan input; the pre blob is readable unless said otherwise. */
function input(e: ChangeEntry, current: Observed, extra: Partial<Omit<PlanInput, "entry" | "current">> = {}): PlanInput {
  const needsBlob = e.pre !== null && (e.pre.kind === "file" || e.pre.kind === "symlink");
  return { entry: e, current, ...(needsBlob ? { preBlob: "ok" as const } : {}), ...extra };
}

const SCOPE: Scope = { kind: "session", id: "sess-1" };
const SIZE_CAP = 1000;
const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ force: false, merge: false, sizeCap: SIZE_CAP, ...o });

/** Plans one path through the public entry point and returns its item. */
function planFor(i: PlanInput, o: Partial<PlanOptions> = {}): PlanItem {
  const p = plan(SCOPE, [i], opts(o));
  expect(p.items).toHaveLength(1);
  return p.items[0]!;
}

/** The part of an item a table row decides. */
function outcome(i: PlanInput, o: Partial<PlanOptions> = {}): { action: string; reason: Reason | null } {
  const { action, reason } = planFor(i, o);
  return { action, reason };
}

const RESTORE = { action: "restore", reason: null };
const DELETE = { action: "delete", reason: null };
const UNCHANGED = { action: "skip", reason: "unchanged" };
const conflict = (reason: Reason) => ({ action: "conflict", reason });

// The standard modification: the scope turned A into B.
const A = file("A");
const B = file("B");
const modified = (path = "src/a.ts") => entry(path, A, B);
const added = (path = "src/new.ts") => entry(path, null, B);
const deleted = (path = "src/gone.ts") => entry(path, A, null);

// ------------------------------------------------------------ the table

describe("SPEC 3 table: current equals pre → skip / unchanged (idempotent)", () => {
  it.each([
    ["modified file back at pre", modified(), obs.file("A")],
    ["added file already gone", added(), obs.absent()],
    ["deleted file already back", deleted(), obs.file("A")],
  ])("%s → skip/unchanged", (_name, e, cur) => {
    expect(outcome(input(e, cur))).toEqual(UNCHANGED);
  });

  it("negative control: the same entries with current at post are not skipped", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
    expect(outcome(input(added(), obs.file("B")))).toEqual(DELETE);
    expect(outcome(input(deleted(), obs.absent()))).toEqual(RESTORE);
  });

  it("undo is idempotent: re-planning against the state a restore leaves gives skip, even with --force", () => {
    const e = modified();
    const first = planFor(input(e, obs.file("B")));
    expect(first.action).toBe("restore");
    // The applier wrote pre (A, 100644) back; plan again.
    const again = planFor(input(e, obs.file("A", { mode: "100644" })), { force: true });
    expect({ action: again.action, reason: again.reason }).toEqual(UNCHANGED);
  });

  it("a skip does not need the pre blob (nothing is written)", () => {
    expect(outcome(input(modified(), obs.file("A"), { preBlob: "missing" }))).toEqual(UNCHANGED);
    // control: at post, the missing blob matters
    expect(outcome(input(modified(), obs.file("B"), { preBlob: "missing" }))).toEqual(conflict("missing-blob"));
  });
});

describe("SPEC 3 table: current equals post → restore (pre present) / delete (pre absent)", () => {
  it("pre present → restore, and the item carries pre, post and the state to expect", () => {
    const e = modified();
    const cur = obs.file("B");
    const item = planFor(input(e, cur));
    expect(item).toMatchObject({ path: "src/a.ts", action: "restore", reason: null, pre: A, post: B });
    expect(item.expect).toEqual(cur);
    expect(item.detail).toBeUndefined();
  });

  it("pre absent (null) → delete", () => {
    expect(outcome(input(added(), obs.file("B")))).toEqual(DELETE);
  });

  it("post absent and current absent → restore the deleted file", () => {
    expect(outcome(input(deleted(), obs.absent()))).toEqual(RESTORE);
  });

  it("negative controls: current differs from post → conflict/changed-since", () => {
    expect(outcome(input(modified(), obs.file("C")))).toEqual(conflict("changed-since"));
    expect(outcome(input(added(), obs.file("C")))).toEqual(conflict("changed-since"));
    expect(outcome(input(deleted(), obs.file("C")))).toEqual(conflict("changed-since"));
    // someone removed the file the scope modified
    expect(outcome(input(modified(), obs.absent()))).toEqual(conflict("changed-since"));
  });

  it("a recorded symlink is restored when the link on disk is the recorded one", () => {
    const e = entry("ln", symlinkState("old"), symlinkState("new"));
    expect(outcome(input(e, obs.symlink("new")))).toEqual(RESTORE);
    // control: the link now points elsewhere
    expect(outcome(input(e, obs.symlink("elsewhere")))).toEqual(conflict("changed-since"));
  });
});

describe("SPEC 3 table: differs + another session's later write → conflict / later-write", () => {
  const later = { by: "sess-2", at: "2025-01-02T03:04:05Z" };

  it("fires, and the detail names the session and the time", () => {
    const item = planFor(input(modified(), obs.file("C"), { laterWrite: later }));
    expect({ action: item.action, reason: item.reason }).toEqual(conflict("later-write"));
    expect(item.detail).toContain("sess-2");
    expect(item.detail).toContain("2025-01-02T03:04:05Z");
  });

  it("negative control: no later write → changed-since", () => {
    expect(outcome(input(modified(), obs.file("C")))).toEqual(conflict("changed-since"));
  });

  it("a later write recorded and current back at post is still theirs: later-write (undo would overwrite their write); --force restores", () => {
    expect(outcome(input(modified(), obs.file("B"), { laterWrite: later }))).toEqual(conflict("later-write"));
    expect(outcome(input(modified(), obs.file("B"), { laterWrite: { by: null, at: "2026-12-01T00:00:00Z" } }))).toEqual(conflict("changed-since"));
    expect(outcome(input(modified(), obs.file("B"), { laterWrite: later }), { force: true })).toEqual(RESTORE);
  });
  it("negative control: no later write recorded, current at post → restore", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
  });
});

describe("SPEC 3 table: differs otherwise → conflict / changed-since", () => {
  it("fires with different content", () => {
    expect(outcome(input(modified(), obs.file("C")))).toEqual(conflict("changed-since"));
  });
  it("negative control: content equal to post → restore", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
  });
});

describe("SPEC 3 table: --merge", () => {
  const clean = { clean: true, sha256: sha("merged") };

  it("--merge with a clean three-way merge → merge, carrying the merged content", () => {
    const item = planFor(input(modified(), obs.file("C"), { merge: clean }), { merge: true });
    expect({ action: item.action, reason: item.reason }).toEqual({ action: "merge", reason: null });
    expect(item.merged).toBe(sha("merged"));
  });

  it("negative control: the same input without the --merge flag → conflict/changed-since", () => {
    const item = planFor(input(modified(), obs.file("C"), { merge: clean }), { merge: false });
    expect({ action: item.action, reason: item.reason }).toEqual(conflict("changed-since"));
    expect(item.merged).toBeUndefined();
  });

  it("negative control: --merge with an unclean merge → conflict", () => {
    const item = planFor(input(modified(), obs.file("C"), { merge: { clean: false } }), { merge: true });
    expect(item.action).toBe("conflict");
    expect(item.reason).toBe("changed-since");
    expect(item.merged).toBeUndefined();
  });

  it("negative control: --merge but no merge was computed → conflict/changed-since", () => {
    expect(outcome(input(modified(), obs.file("C")), { merge: true })).toEqual(conflict("changed-since"));
  });

  it("--merge does not turn a path at post into a merge: it is restored", () => {
    expect(outcome(input(modified(), obs.file("B"), { merge: clean }), { merge: true })).toEqual(RESTORE);
  });
});

describe("SPEC 3 table: --force", () => {
  const later = { by: "sess-2", at: "2025-01-02T03:04:05Z" };

  it.each([
    ["changed-since (content)", input(modified(), obs.file("C")), "changed-since", "restore"],
    ["changed-since (file removed since)", input(modified(), obs.absent()), "changed-since", "restore"],
    ["later-write", input(modified(), obs.file("C"), { laterWrite: later }), "later-write", "restore"],
    ["changed-since (added file)", input(added(), obs.file("C")), "changed-since", "delete"],
  ] as const)("overrides %s (without --force: conflict/%s; with it: %s)", (_name, i, reason, action) => {
    expect(outcome(i)).toEqual(conflict(reason));
    expect(outcome(i, { force: true })).toEqual({ action, reason: null });
  });

  it("with --force an unclean merge does not stop the restore", () => {
    expect(outcome(input(modified(), obs.file("C"), { merge: { clean: false } }), { force: true, merge: true })).toEqual(RESTORE);
  });
});

// ------------------------------------------------------------ refusals

describe("refusal: unsafe-path", () => {
  it.each([
    ["absolute", "/etc/passwd", "absolute"],
    ["windows drive", "C:\\Windows\\x", "absolute"],
    ["dotdot", "../outside", "dotdot"],
    ["dotdot inside", "src/../../outside", "dotdot"],
    [".git", ".git/config", "git-dir"],
    [".git hooks, any case", ".GIT/hooks/pre-commit", "git-dir"],
  ])("%s: %j → conflict/unsafe-path naming the problem", (_name, path, problem) => {
    const item = planFor(input(modified(path), obs.file("B")));
    expect({ action: item.action, reason: item.reason }).toEqual(conflict("unsafe-path"));
    expect(item.detail).toBe(problem);
  });

  it.each([["src/a.ts"], ["..foo/x"], [".gitignore"], [".github/workflows/ci.yml"]])("negative control: %j with the same state → restore", (path) => {
    expect(outcome(input(modified(path), obs.file("B")))).toEqual(RESTORE);
  });

  it("is checked even when current equals pre (no skip for a path that must not be touched)", () => {
    expect(outcome(input(modified(".git/config"), obs.file("A")))).toEqual(conflict("unsafe-path"));
  });
});

describe("refusal: symlink", () => {
  it("a symlink the record does not show → conflict/symlink", () => {
    expect(outcome(input(modified(), obs.symlink("/etc/passwd")))).toEqual(conflict("symlink"));
  });
  it("negative control: the record shows a symlink there → not refused (restore at post)", () => {
    const e = entry("src/a.ts", A, symlinkState("/etc/passwd"));
    expect(outcome(input(e, obs.symlink("/etc/passwd")))).toEqual(RESTORE);
  });
  it("negative control: a regular file at post → restore", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
  });

  it("a parent became a symlink → conflict/symlink naming the parent", () => {
    const item = planFor(input(modified("src/a.ts"), obs.blocked("src")));
    expect({ action: item.action, reason: item.reason }).toEqual(conflict("symlink"));
    expect(item.detail).toContain("src");
  });
  it("a submodule (gitlink) is never restored: conflict/not-regular, even with --force", () => {
    const gl = { kind: "gitlink" as const, mode: "160000", oid: "c".repeat(40) as never };
    expect(outcome(input(entry("sub", gl, null), obs.absent()), opts({ force: true }))).toEqual(conflict("not-regular"));
    expect(outcome(input(entry("sub", null, gl), obs.dir()), opts({ force: true }))).toEqual(conflict("not-regular"));
  });
});

describe("refusal: hardlink", () => {
  it("nlink 2 → conflict/hardlink", () => {
    const item = planFor(input(modified(), obs.file("B", { nlink: 2 })));
    expect({ action: item.action, reason: item.reason }).toEqual(conflict("hardlink"));
  });
  it("negative control: nlink 1 → restore", () => {
    expect(outcome(input(modified(), obs.file("B", { nlink: 1 })))).toEqual(RESTORE);
  });
  it("applies to delete too (nlink 3 → hardlink, nlink 1 → delete)", () => {
    expect(outcome(input(added(), obs.file("B", { nlink: 3 })))).toEqual(conflict("hardlink"));
    expect(outcome(input(added(), obs.file("B", { nlink: 1 })))).toEqual(DELETE);
  });
});

describe("refusal: not-regular", () => {
  it("a fifo / socket / device (kind other) → conflict/not-regular", () => {
    expect(outcome(input(modified(), obs.other()))).toEqual(conflict("not-regular"));
  });
  it("a directory where a file was → conflict/not-regular", () => {
    expect(outcome(input(modified(), obs.dir()))).toEqual(conflict("not-regular"));
    expect(outcome(input(added(), obs.dir()))).toEqual(conflict("not-regular"));
  });
  it("negative control: a regular file at post → restore / delete", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
    expect(outcome(input(added(), obs.file("B")))).toEqual(DELETE);
  });
});

describe("refusals: missing-blob and hash-mismatch (the pre bytes cannot be read back intact)", () => {
  it.each([
    ["missing", "missing-blob"],
    ["mismatch", "hash-mismatch"],
  ] as const)("preBlob %s → conflict/%s", (status, reason) => {
    expect(outcome(input(modified(), obs.file("B"), { preBlob: status }))).toEqual(conflict(reason));
  });
  it("negative control: preBlob ok → restore", () => {
    expect(outcome(input(modified(), obs.file("B"), { preBlob: "ok" }))).toEqual(RESTORE);
  });
  it("an unknown blob status is not treated as readable", () => {
    const i = input(modified(), obs.file("B"));
    delete i.preBlob;
    expect(outcome(i)).toEqual(conflict("missing-blob"));
  });
  it("a delete needs no blob: pre absent → delete whatever preBlob says", () => {
    expect(outcome(input(added(), obs.file("B"), { preBlob: "missing" }))).toEqual(DELETE);
  });
});

describe("refusal: toolarge", () => {
  it("pre is toolarge (only a hash was kept) → conflict/toolarge", () => {
    const e = entry("big.bin", toolargeState("A"), B);
    expect(outcome(input(e, obs.file("B")))).toEqual(conflict("toolarge"));
  });
  it("negative control: pre is a kept file → restore", () => {
    const e = entry("big.bin", A, B);
    expect(outcome(input(e, obs.file("B")))).toEqual(RESTORE);
  });

  it("current file bigger than sizeCap → conflict/toolarge (it could not be kept for redo)", () => {
    expect(outcome(input(modified(), obs.file("B", { size: SIZE_CAP + 1 })))).toEqual(conflict("toolarge"));
    expect(outcome(input(added(), obs.file("B", { size: SIZE_CAP + 1 })))).toEqual(conflict("toolarge"));
  });
  it("negative control: current file exactly at sizeCap → restore / delete", () => {
    expect(outcome(input(modified(), obs.file("B", { size: SIZE_CAP })))).toEqual(RESTORE);
    expect(outcome(input(added(), obs.file("B", { size: SIZE_CAP })))).toEqual(DELETE);
  });
  it("negative control: same big file, larger sizeCap → restore", () => {
    expect(outcome(input(modified(), obs.file("B", { size: SIZE_CAP + 1 })), { sizeCap: SIZE_CAP + 1 })).toEqual(RESTORE);
  });

  it("post recorded as toolarge with no hash: the file cannot be proven unchanged → conflict/toolarge", () => {
    const e = entry("big.bin", A, toolargeState());
    expect(outcome(input(e, obs.file("B")))).toEqual(conflict("toolarge"));
  });
  it("post toolarge even with a hash that matches: its change is never taken back (SPEC 2: over the size cap is not absent)", () => {
    expect(outcome(input(entry("big.bin", A, toolargeState("B")), obs.file("B")))).toEqual(conflict("toolarge"));
    expect(outcome(input(entry("big.bin", null, toolargeState("B")), obs.file("B")))).toEqual(conflict("toolarge"));
  });
  it("negative control: the same change recorded as a plain file → restore", () => {
    expect(outcome(input(entry("big.bin", A, file("B")), obs.file("B")))).toEqual(RESTORE);
  });
});

describe("--merge and the scope's mode change (issue 9, case 12)", () => {
  const clean = { clean: true, sha256: sha("merged") };
  it("a merge writes the scope's earlier mode where the mode is still the one it left", () => {
    const e = entry("run.sh", file("A", "100644"), file("B", "100755"));
    const item = planFor({ ...input(e, obs.file("C", { mode: "100755" })), merge: clean }, { merge: true });
    expect([item.action, item.mergedMode]).toEqual(["merge", "100644"]);
  });
  it("negative control: where the scope changed no mode, the mode on disk is kept", () => {
    const kept = planFor({ ...input(entry("x.sh", file("A", "100755"), file("B", "100755")), obs.file("C", { mode: "100644" })), merge: clean }, { merge: true });
    expect(kept.mergedMode).toBe("100644");
  });
});

describe("concurrent-call and not-captured (SPEC 2, attribution)", () => {
  const shared: ChangeEntry = { ...modified(), shared: [{ session: "claude:other", call: "toolu_9" }] };
  it("a path another call may have changed is a conflict naming it", () => {
    const item = planFor(input(shared, obs.file("B")));
    expect([item.action, item.reason]).toEqual(["conflict", "concurrent-call"]);
    expect(item.detail).toContain("claude:other toolu_9");
  });
  it("negative control: without another call, or with --force, it is restored", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
    expect(outcome(input(shared, obs.file("B")), { force: true })).toEqual(RESTORE);
  });
  it("already back at pre: a skip, shared or not", () => {
    expect(outcome(input(shared, obs.file("A")))).toEqual({ action: "skip", reason: "unchanged" });
  });
  it("a pre never captured is not-captured, even forced; a post never captured is not-captured unless forced", () => {
    const unknownPre: ChangeEntry = { ...modified(), pre: { kind: "unknown" } };
    expect(outcome(input(unknownPre, obs.file("B")))).toEqual(conflict("not-captured"));
    expect(outcome(input(unknownPre, obs.file("B")), { force: true })).toEqual(conflict("not-captured"));
    const unknownPost: ChangeEntry = { ...modified(), post: { kind: "unknown" } };
    expect(outcome(input(unknownPost, obs.file("B")))).toEqual(conflict("not-captured"));
    expect(outcome(input(unknownPost, obs.file("A")))).toEqual({ action: "skip", reason: "unchanged" });
    expect(outcome(input(unknownPost, obs.file("B")), { force: true })).toEqual(RESTORE);
  });
});

describe("--force never overrides a safety refusal", () => {
  const cases: [string, PlanInput, Reason][] = [
    ["unsafe-path (absolute)", input(modified("/etc/passwd"), obs.file("C")), "unsafe-path"],
    ["unsafe-path (..)", input(modified("a/../../x"), obs.file("C")), "unsafe-path"],
    ["unsafe-path (.git)", input(modified(".git/HEAD"), obs.file("C")), "unsafe-path"],
    ["symlink (path)", input(modified(), obs.symlink("/etc")), "symlink"],
    ["symlink (parent)", input(modified(), obs.blocked("src")), "symlink"],
    ["hardlink", input(modified(), obs.file("C", { nlink: 2 })), "hardlink"],
    ["not-regular (other)", input(modified(), obs.other()), "not-regular"],
    ["not-regular (dir)", input(modified(), obs.dir()), "not-regular"],
    ["missing-blob", input(modified(), obs.file("C"), { preBlob: "missing" }), "missing-blob"],
    ["hash-mismatch", input(modified(), obs.file("C"), { preBlob: "mismatch" }), "hash-mismatch"],
    ["toolarge (pre)", input(entry("big.bin", toolargeState("A"), B), obs.file("C")), "toolarge"],
    ["toolarge (current over cap)", input(modified(), obs.file("C", { size: SIZE_CAP + 1 })), "toolarge"],
  ];

  it.each(cases)("%s stays a conflict with --force", (_name, i, reason) => {
    expect(outcome(i, { force: true })).toEqual(conflict(reason));
  });

  it.each(cases)("%s stays a conflict with --force --merge and a clean merge", (_name, i, reason) => {
    const withMerge = { ...i, merge: { clean: true, sha256: sha("merged") } };
    expect(outcome(withMerge, { force: true, merge: true })).toEqual(conflict(reason));
  });

  it("negative control: the same changed file, safe on every count, is restored with --force", () => {
    expect(outcome(input(modified(), obs.file("C")), { force: true })).toEqual(RESTORE);
  });
});

// ------------------------------------------------------------ equality

describe("equality: mode is part of the state", () => {
  it("same content as post but mode 100755 instead of 100644 differs → conflict/changed-since", () => {
    expect(outcome(input(modified(), obs.file("B", { mode: "100755" })))).toEqual(conflict("changed-since"));
  });
  it("negative control: same content and mode 100644 → restore", () => {
    expect(outcome(input(modified(), obs.file("B", { mode: "100644" })))).toEqual(RESTORE);
  });

  it("a mode-only change: at post (100755) → restore", () => {
    const e = { ...entry("run.sh", file("S", "100644"), file("S", "100755")), change: "mode" as const };
    expect(outcome(input(e, obs.file("S", { mode: "100755" })))).toEqual(RESTORE);
  });
  it("negative control: a mode-only change already back at 100644 → skip/unchanged", () => {
    const e = { ...entry("run.sh", file("S", "100644"), file("S", "100755")), change: "mode" as const };
    expect(outcome(input(e, obs.file("S", { mode: "100644" })))).toEqual(UNCHANGED);
  });
});

describe("equality: by git oid when the recorded state has no sha256", () => {
  const e = entry("src/a.ts", fileByOid("A"), fileByOid("B"));

  it("current's oid equals post's oid → restore", () => {
    expect(outcome(input(e, obs.file("whatever", { oid: "B" })))).toEqual(RESTORE);
  });
  it("current's oid equals pre's oid → skip/unchanged", () => {
    expect(outcome(input(e, obs.file("whatever", { oid: "A" })))).toEqual(UNCHANGED);
  });
  it("negative control: a different oid → conflict/changed-since", () => {
    expect(outcome(input(e, obs.file("whatever", { oid: "C" })))).toEqual(conflict("changed-since"));
  });
  it("negative control: current has no oid → cannot be proven equal → conflict/changed-since", () => {
    expect(outcome(input(e, obs.file("B")))).toEqual(conflict("changed-since"));
  });
  it("sha256 wins over oid when the record has both", () => {
    const both = entry("src/a.ts", A, { ...B, oid: oid("B") });
    // oid agrees but the sha256 does not: not equal
    expect(outcome(input(both, obs.file("C", { oid: "B" })))).toEqual(conflict("changed-since"));
    expect(outcome(input(both, obs.file("B", { oid: "B" })))).toEqual(RESTORE);
  });
});

// ------------------------------------------------------------ order

/** Git's path order, computed independently: bytewise on UTF-8. */
function gitOrder(paths: string[]): string[] {
  return [...paths].sort((a, b) => {
    const x = new TextEncoder().encode(a);
    const y = new TextEncoder().encode(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return x.length - y.length;
  });
}

describe("output is in git path order (bytewise UTF-8), regardless of input order", () => {
  // "B" < "a" (uppercase first), "a-b" < "a.b" < "a/b" ('-' 0x2d, '.' 0x2e, '/' 0x2f),
  // "｡" (U+FF61, EF BD A1) < "😀" (U+1F600, F0 …): UTF-16 code-unit order says the opposite.
  const paths = ["é", "a/b", "a", "😀", "B", "a-b", "a.b", "Z", "｡", "a/b/c", "a0"];
  const expected = ["B", "Z", "a", "a-b", "a.b", "a/b", "a/b/c", "a0", "é", "｡", "😀"];

  it("the expected order is the bytewise one (and not JS's default or locale order)", () => {
    expect(gitOrder(paths)).toEqual(expected);
    expect([...paths].sort()).not.toEqual(expected);
    expect([...paths].sort((x, y) => x.localeCompare(y))).not.toEqual(expected);
  });

  it.each([
    ["as given", paths],
    ["reversed", [...paths].reverse()],
    ["already sorted", expected],
  ])("input %s", (_name, order) => {
    const p = plan(
      SCOPE,
      order.map((path) => input(modified(path), obs.file("B"))),
      opts(),
    );
    expect(p.items.map((i) => i.path)).toEqual(expected);
    expect(p.scope).toEqual(SCOPE);
  });

  it("each item keeps its own outcome after sorting", () => {
    const p = plan(SCOPE, [input(modified("z"), obs.file("C")), input(added("a"), obs.file("B")), input(modified("M"), obs.file("A"))], opts());
    expect(p.items.map((i) => [i.path, i.action, i.reason])).toEqual([
      ["M", "skip", "unchanged"],
      ["a", "delete", null],
      ["z", "conflict", "changed-since"],
    ]);
  });
});

// ------------------------------------------------------------ counts and exit

describe("countActions", () => {
  it("counts each action", () => {
    const items = [
      { action: "restore" },
      { action: "restore" },
      { action: "delete" },
      { action: "merge" },
      { action: "skip" },
      { action: "conflict" },
      { action: "conflict" },
      { action: "conflict" },
    ] as const;
    expect(countActions(items)).toEqual({ restore: 2, delete: 1, merge: 1, skip: 1, conflict: 3 });
  });
  it("an empty plan has every count, all zero", () => {
    expect(countActions([])).toEqual({ restore: 0, delete: 0, merge: 0, skip: 0, conflict: 0 });
  });
  it("counts a real plan", () => {
    const p = plan(SCOPE, [input(modified("a"), obs.file("B")), input(added("b"), obs.file("B")), input(modified("c"), obs.file("A")), input(modified("d"), obs.file("C"))], opts());
    expect(countActions(p.items)).toEqual({ restore: 1, delete: 1, merge: 0, skip: 1, conflict: 1 });
  });
});

describe("isPartial (exit 1: a conflict, or a skip other than unchanged)", () => {
  it.each([
    ["nothing", [], false],
    [
      "only done actions",
      [
        { action: "restore", reason: null },
        { action: "delete", reason: null },
        { action: "merge", reason: null },
      ],
      false,
    ],
    [
      "unchanged skips",
      [
        { action: "skip", reason: "unchanged" },
        { action: "restore", reason: null },
      ],
      false,
    ],
    [
      "a conflict",
      [
        { action: "restore", reason: null },
        { action: "conflict", reason: "changed-since" },
      ],
      true,
    ],
    ["a refusal", [{ action: "conflict", reason: "hardlink" }], true],
    ["a skip for another reason", [{ action: "skip", reason: "changed-since" }], true],
  ] as [string, Pick<PlanItem, "action" | "reason">[], boolean][])("%s → %s", (_name, items, partial) => {
    expect(isPartial(items)).toBe(partial);
  });

  it("on real plans: all at post → not partial; one path changed since → partial", () => {
    const ok = plan(SCOPE, [input(modified("a"), obs.file("B")), input(modified("b"), obs.file("A"))], opts());
    expect(isPartial(ok.items)).toBe(false);
    const bad = plan(SCOPE, [input(modified("a"), obs.file("B")), input(modified("b"), obs.file("C"))], opts());
    expect(isPartial(bad.items)).toBe(true);
  });
});

describe("planner additions: store paths and binary merges", () => {
  it("refuses a path inside the store; the same path is restored when the store lives elsewhere", () => {
    const i = input(entry("data/unwind-store/cas/x", A, B), obs.file("B"));
    expect(plan(SCOPE, [i], opts({ reserved: ["data/unwind-store"] })).items[0]).toMatchObject({ ...conflict("unsafe-path"), detail: "store" });
    expect(plan(SCOPE, [i], opts({ reserved: [] })).items[0]).toMatchObject(RESTORE);
  });
  it("refuses a path in a .unwind store at any depth, whoever's it is; a look-alike name is restored", () => {
    expect(outcome(input(entry("pkg/.unwind/journal/x.jsonl", A, B), obs.file("B")))).toEqual(conflict("unsafe-path"));
    expect(outcome(input(entry("pkg/.unwind", A, B), obs.file("B")))).toEqual(conflict("unsafe-path"));
    expect(outcome(input(entry("pkg/.unwind-notes/x", A, B), obs.file("B")))).toEqual(RESTORE);
  });

  it("never merges a binary file, even given a clean merge result; a text file with the same input merges", () => {
    const m = { clean: true, sha256: sha("merged") };
    const bin = { ...input(modified(), obs.file("C", { text: false })), merge: m };
    const txt = { ...input(modified(), obs.file("C", { text: true })), merge: m };
    expect(plan(SCOPE, [bin], opts({ merge: true })).items[0]).toMatchObject(conflict("changed-since"));
    expect(plan(SCOPE, [txt], opts({ merge: true })).items[0]).toMatchObject({ action: "merge" });
  });
});

describe("a run's allow path under --safe-only → skip / retained (SPEC section 9)", () => {
  it("is kept whatever the path holds, and is not a partial result", () => {
    for (const cur of [obs.file("B"), obs.file("C"), obs.absent()]) {
      const item = planFor(input(modified(), cur, { retained: true }));
      expect({ action: item.action, reason: item.reason }).toEqual({ action: "skip", reason: "retained" });
    }
    expect(isPartial([{ action: "skip", reason: "retained" }])).toBe(false);
  });
  it("negative control: the same path not retained, at post, is restored; another skip reason is partial", () => {
    expect(outcome(input(modified(), obs.file("B")))).toEqual(RESTORE);
    expect(isPartial([{ action: "skip", reason: "changed-since" }])).toBe(true);
  });
});

describe("a fetched record's path git ignores here → conflict / ignored-path (SPEC section 14)", () => {
  it("is never written: not restored, created, deleted or merged, even with --force or --merge", () => {
    const m = { clean: true, sha256: sha("merged") };
    const cases: [ChangeEntry, Observed][] = [
      [deleted("node_modules/.bin/jest"), obs.absent()],
      [modified("node_modules/x/index.js"), obs.file("B")],
      [added("build/out.js"), obs.file("B")],
      [modified("node_modules/x/index.js"), obs.file("C")],
    ];
    for (const [e, cur] of cases) {
      for (const o of [opts(), opts({ force: true }), opts({ merge: true })]) {
        const item = plan(SCOPE, [{ ...input(e, cur, { ignored: true }), merge: m }], o).items[0]!;
        expect([e.path, item.action, item.reason]).toEqual([e.path, "conflict", "ignored-path"]);
      }
    }
  });
  it("negative control: the same paths not ignored are written; one already at pre is a plain skip", () => {
    expect(outcome(input(deleted("node_modules/.bin/jest"), obs.absent()))).toEqual(RESTORE);
    expect(outcome(input(added("build/out.js"), obs.file("B")))).toEqual(DELETE);
    expect(outcome(input(modified(), obs.file("A"), { ignored: true }))).toEqual(UNCHANGED);
  });
});
