/**
 * How a call is named where it shares a change or writes after another:
 * `<session> <call>` for an agent's tool call, `run <id>` for a run, which
 * the attribution fold reads as a window of session `run:<id>`.
 */
export const runSession = (id: string) => `run:${id}`;

/** The run a window stands for, or null for a call's. */
export const runOf = (w: { session: string; call: string }): string | null => (w.session === runSession(w.call) ? w.call : null);

export function callName(c: { session: string; call: string }): string {
  const run = runOf(c);
  return run !== null ? `run ${run}` : `${c.session} ${c.call}`;
}
