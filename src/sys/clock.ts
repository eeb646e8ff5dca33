/**
 * The time gc measures ages against. UNWIND_NOW (an ISO time) moves it, so
 * retention can be tested and reproduced without waiting or forging records.
 */
export function now(): Date {
  const e = process.env.UNWIND_NOW;
  if (e) {
    const d = new Date(e);
    if (!Number.isNaN(d.getTime())) return d;
  }
  return new Date();
}
