/**
 * unwind as a library (SPEC section 11): `open()` gives every operation as a
 * typed function resolving to the same data as the command's `--json`;
 * failures are `UnwindError { code, message, hint, exit }`. The command
 * line, the hook and every other client are built on this.
 */
export { open, type OpenOptions, type Unwind } from "./ops/open.js";
export { UnwindError, Exit, type ErrorCode, type ExitCode } from "./domain/errors.js";
export type { ChangeEntry, ChangeKind, Counts, StartedBy, Reason, Action, Scope, State, StateKind } from "./domain/types.js";
export type { IdRef } from "./domain/ids.js";
export type { ScopeInput, ScopeOptions } from "./scope/resolve.js";
export type { UndoReport, ReportItem, NowState } from "./ops/take-back.js";
export type { UndoOptions, RestoreOptions, RedoOptions } from "./ops/undo.js";
export type { ChangeSetReport } from "./ops/changes.js";
export type { ContentRef, ContentReport, CurrentReport } from "./ops/content.js";
export type { DiffReport, DiffFile, SnapshotInfo, SnapshotsOptions } from "./ops/snapshot.js";
export type { SnapshotLabels } from "./capture/snapshot.js";
export type { SessionSummary, CallSummary } from "./ops/sessions.js";
export type { ReceiptSummary } from "./ops/receipts.js";
export type { VerifyReport, Problem } from "./ops/verify.js";
export type { StatusReport } from "./ops/status.js";
export type { GcReport } from "./ops/gc.js";
export type { ListOptions } from "./ops/list.js";
export type { RecordOptions, RecordReport } from "./ops/record.js";
export type { BaselineCaptureReport, BaselineSummary } from "./ops/baseline.js";
export type { RevertCheckResult, RevertCheckOptions, RevertCheckDecision, RevertCheckReason, RevertCheckEdit } from "./ops/revert-check.js";

export type { RunOptions, RunReport } from "./ops/run.js";
export type { RunSummary, RunShow, CleanupReport } from "./ops/runs.js";
export type { Decision, Policy } from "./domain/policy.js";
export type { Capsule, CapsuleEntry, ProcessRecord, EndOutcome, RunResult } from "./store/capsules.js";
export type { PushOptions, PushReport, PushedSession, FetchReport } from "./ops/share.js";
