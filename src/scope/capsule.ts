import { UnwindError } from "../domain/errors.js";
import { pickId, type IdRef } from "../domain/ids.js";
import { decider, irreversible } from "../domain/policy.js";
import type { ChangeEntry, ChangeSet } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { Capsules, type Capsule, type CapsuleEntry } from "../store/capsules.js";

/** The run an id names (SPEC section 4: the id, a unique prefix or suffix of 6+ characters, or the newest), its seal checked. */
export async function resolveRun(ctx: Context, wanted: IdRef): Promise<{ capsule: Capsule; seal: string; capsules: Capsules }> {
  const capsules = new Capsules(ctx);
  // An id names its capsule by file name alone; only "the newest" needs every capsule read.
  const id = pickId(typeof wanted === "string" ? capsules.names().sort().reverse() : capsules.ids(), wanted, "run", "unwind runs");
  return { ...(await capsules.verified(id)), capsules };
}

/** A run's own word on a path: its policy's decision and whether it can be taken back. */
export type RunDecision = Pick<CapsuleEntry, "decision" | "reversible" | "why">;

/**
 * A run's change set: `attributed` (its window under SPEC section 2's
 * rules, src/scope/calls.ts), or for a fetched run, whose window cannot be
 * placed among this machine's records, before -> after as its capsule
 * holds it. Each path gets its decision from the run's own policy, kept in
 * the sealed capsule. `safeOnly` marks the `allow` paths retained (SPEC
 * section 9): they stay in the set, so the report names them, and the
 * planner keeps them as they are. A run recorded without rollback kept no
 * earlier bytes: taking it back is refused (exit 3), reading it is not.
 */
export function runChangeSet(
  capsule: Capsule,
  opts: { taking: boolean; safeOnly: boolean },
  attributed?: ChangeEntry[],
): { cs: ChangeSet; retained: Set<string>; decisions: Map<string, RunDecision> } {
  if (opts.taking && !capsule.rollback) {
    throw new UnwindError(
      "E_NOT_REVERSIBLE",
      `run ${capsule.id} was recorded without rollback (its policy says "rollback": false, or --no-rollback): no earlier bytes were kept, so it cannot be taken back`,
      {
        hint: "see what it changed with: unwind changes --run " + capsule.id,
      },
    );
  }
  const decide = decider(capsule.policy.rules);
  const retained = new Set<string>();
  const decisions = new Map<string, RunDecision>();
  const entries = attributed ?? capsule.entries.map((e) => ({ path: e.path, change: e.change, pre: e.pre, post: e.post, by: [capsule.id] }));
  for (const e of entries) {
    const why = irreversible(e, capsule.rollback);
    const decision = decide(e.path);
    decisions.set(e.path, { decision, reversible: why === null, why });
    if (opts.safeOnly && decision === "allow") retained.add(e.path);
  }
  return { cs: { scope: { kind: "run", id: capsule.id }, entries }, retained, decisions };
}
