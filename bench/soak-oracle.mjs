/**
 * The soak's oracle process (bench/soak.mjs): the library, opened once on
 * the soak's repository, answering `changes` of a scope over IPC. Apart
 * from the soak's own process so that process stays small: a process
 * spawns children at a cost that grows with its resident size, and the
 * soak spawns two hooks a call.
 *
 *   node bench/soak-oracle.mjs <library URL> <root>   (forked, with an IPC channel)
 */
const [lib, root] = process.argv.slice(2);
const u = await (await import(lib)).open({ root });
process.on("message", async (m) => {
  if (m.usage) {
    const r = process.resourceUsage();
    process.send({ id: m.id, usage: { maxRssKb: r.maxRSS, cpuSeconds: (r.userCPUTime + r.systemCPUTime) / 1e6 } });
    return;
  }
  try {
    process.send({ id: m.id, json: await u.changes(m.scope) });
  } catch (e) {
    process.send({ id: m.id, error: { exit: e.exit ?? -1, message: String(e.message ?? e) } });
  }
});
process.send({ ready: true });
