/**
 * The one id shortener and the one matcher every command resolves ids with:
 * what `shortIds` shows must name its id alone under `idMatches`, and be no
 * longer than it needs to be. Checked against a brute force over real-shaped
 * ids (Claude sessions and calls, receipts) and over crafted collisions.
 */
import { describe, expect, it } from "vitest";
import { idMatches, idTable, MIN_ID, pickId, shortIds, shortOf, withIds } from "../../../src/domain/ids.js";
import { claudeCall, claudeUuid, HEX, pick, rng } from "../../real-ids.js";

const claudeSession = (r: () => number) => `claude:${claudeUuid(r)}`;
const receipt = (r: () => number, k: number) => `r-20261203T0${String(k % 60).padStart(2, "0")}000Z-${pick(r, HEX, 8)}`;

/** What a person typing `s` gets: every id it names (an exact id or name after the harness wins, as in the resolvers). */
function named(ids: readonly string[], s: string): string[] {
  const exact = ids.filter((o) => o === s || o.slice(o.indexOf(":") + 1) === s);
  return exact.length === 1 ? exact : ids.filter((o) => idMatches(o, s));
}

/** The brute force: the shortest tail of 6+ characters naming the id alone, else the whole id. */
function slow(ids: readonly string[], id: string): string {
  const name = id.slice(id.indexOf(":") + 1);
  if (name.length <= 12 && ids.filter((o) => o.slice(o.indexOf(":") + 1) === name).length === 1) return name;
  for (let n = MIN_ID; n < id.length; n++) {
    const s = id.slice(-n);
    const hits = named(ids, s);
    if (hits.length === 1 && hits[0] === id) return s;
  }
  return id;
}

function check(ids: readonly string[]): Map<string, string> {
  const m = shortIds(ids);
  for (const id of ids) {
    const s = m.get(id)!;
    expect(named(ids, s), `${s} names ${id} alone`).toEqual([id]);
    expect(s, id).toBe(slow(ids, id));
  }
  return m;
}

describe("shortIds", () => {
  it("real-shaped Claude sessions and calls, and receipts: each tail names its id alone, and is the shortest that does", () => {
    const r = rng(31);
    const sessions = Array.from({ length: 400 }, () => claudeSession(r));
    const calls = Array.from({ length: 400 }, () => claudeCall(r));
    const receipts = Array.from({ length: 400 }, (_, k) => receipt(r, k));
    for (const ids of [sessions, calls, receipts]) {
      const m = check(ids);
      // 400 random ids rarely need more than 7 characters; a 44-character session is shown in a handful.
      expect(Math.max(...[...m.values()].map((s) => s.length))).toBeLessThanOrEqual(8);
    }
    expect(shortIds(sessions).get(sessions[0]!)).toBe(sessions[0]!.slice(-6));
  });

  it("ids sharing a tail, an id ending another, a tail that starts another id's part", () => {
    const ids = [
      "claude:aaaa-0000-1234567890ab",
      "claude:bbbb-0000-ff34567890ab", // the same last 10 characters
      "0000-1234567890ab", // all of it ends another id: shown whole
      "claude:cccc-0000-90abcd", // its tail starts with "90abcd", which ends none but starts this one's
      "call-0000000000990abcd", // ends with the previous one's last 6
      "short",
      "toolu_01XfYk",
      "90abcdef-1111-2222-3333-444455556666", // starts with 90abcd: any other id's tail "90abcd" would be ambiguous
    ];
    const m = check(ids);
    expect(m.get("0000-1234567890ab")).toBe("0000-1234567890ab");
    expect(m.get("short")).toBe("short");
    expect(m.get("claude:aaaa-0000-1234567890ab")).toBe("-0000-1234567890ab");
    // Negative control: the last six characters alone would name two ids here.
    expect(named(ids, "7890ab").length).toBeGreaterThan(1);
    expect(named(ids, "90abcd").length).toBeGreaterThan(1);
  });

  it("a table kept and added to gives what shortIds of every id gives, a kept id's short lengthened by a new one", () => {
    const r = rng(5);
    const sessions = Array.from({ length: 300 }, () => claudeSession(r));
    const calls = Array.from({ length: 300 }, () => claudeCall(r));
    // New ids that collide with kept ones: one ends as a kept call does, two have a part that starts with a kept call's tail, one names a short name again.
    const crafted = [`toolu_99${calls[0]!.slice(-9)}`, `${calls[1]!.slice(-6)}-bbbb`, `claude:${calls[2]!.slice(-6)}xyz`, "claude:agent-1", "record:agent-1"];
    const kept = [...sessions.slice(0, 280), ...calls.slice(0, 280), "claude:agent-1x"];
    // Few enough to be put in place (more than an eighth of the table makes it again).
    const added = [...sessions.slice(280), ...calls.slice(280), ...crafted, kept[0]!];
    expect(added.length * 8).toBeLessThan(kept.length);
    const t = withIds(idTable(kept), added);
    const all = shortIds([...kept, ...added]);
    for (const id of new Set([...kept, ...added])) expect(shortOf(t, id), id).toBe(all.get(id));
    // Negative control: the kept call's short id from the kept table alone is shorter than the one the new id forces.
    for (const c of calls.slice(0, 3)) expect(shortOf(idTable(kept), c).length).toBeLessThan(all.get(c)!.length);
    expect(shortOf(idTable(["claude:agent-1"]), "claude:agent-1")).toBe("agent-1");
    expect(all.get("claude:agent-1")).not.toBe("agent-1");
    // Many new ids at once: the table is made again, with the same answers.
    const many = withIds(idTable(calls.slice(0, 10)), calls.slice(10));
    for (const id of calls) expect(shortOf(many, id)).toBe(shortIds(calls).get(id));
  });

  it("a duplicate is one id; an empty list is an empty map", () => {
    expect([...shortIds(["run-20261203T000000Z-9af83b7d", "run-20261203T000000Z-9af83b7d"])]).toEqual([["run-20261203T000000Z-9af83b7d", "f83b7d"]]);
    expect(shortIds([]).size).toBe(0);
  });

  it("what it shows is what pickId takes back, and a shorter tail is refused", () => {
    const r = rng(7);
    const ids = Array.from({ length: 50 }, (_, k) => receipt(r, k));
    const m = shortIds(ids);
    for (const id of ids) expect(pickId(ids, m.get(id)!, "receipt", "unwind receipts")).toBe(id);
    expect(() => pickId(ids, ids[0]!.slice(-5), "receipt", "unwind receipts")).toThrow(/needs 6\+ characters/);
  });
});
