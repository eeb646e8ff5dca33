/**
 * Fault injection for the crash-recovery tests: UNWIND_TEST_CRASH names a
 * point in apply ("intent", "write:N" after the Nth path, "receipt") where
 * the process kills itself with SIGKILL, exactly as a power cut or OOM kill
 * would stop it. Unset in normal use, it costs one env lookup.
 */
export function crashPoint(point: string): void {
  const want = process.env.UNWIND_TEST_CRASH;
  if (want !== undefined && want === point) process.kill(process.pid, "SIGKILL");
}
