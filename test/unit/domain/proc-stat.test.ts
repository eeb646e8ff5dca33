import { describe, expect, it } from "vitest";
import { hasExited, parseProcStat } from "../../../src/domain/proc-stat.js";

/** A stat line as the kernel writes it: pid (comm) state ppid pgrp session tty tpgid flags … field 22 is the start time. */
const line = (comm: string, start = "987654", state = "S") =>
  `4242 (${comm}) ${state} 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ${start} 2000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n`;

describe("/proc/<pid>/stat", () => {
  it("reads pid, parent, group, session and the start time (field 22)", () => {
    expect(parseProcStat(line("sleep"))).toEqual({ pid: 4242, comm: "sleep", state: "S", ppid: 17, pgrp: 4242, session: 4242, start: "987654" });
  });
  it("counts fields from the last ')': a command name may hold spaces and parentheses", () => {
    for (const comm of ["a b", "x) S 1 2 3 (y", "((", ") ) )"]) {
      const s = parseProcStat(line(comm, "123"));
      expect(s?.comm).toBe(comm);
      expect(s?.start).toBe("123");
      expect(s?.ppid).toBe(17);
    }
  });
  it("negative control: counting from the first ')' would read the wrong field", () => {
    const text = line("x) S 1 2 3 (y", "123");
    expect(text.slice(text.indexOf(")") + 2).split(" ")[19]).not.toBe("123");
  });
  it("refuses what is not a stat line", () => {
    for (const bad of ["", "4242", "4242 (x)", "x (y) S 1 2 3", line("a").replace(" 987654 ", " x ")]) expect(parseProcStat(bad)).toBeNull();
  });
  it("a zombie has exited; a sleeping process has not", () => {
    expect(hasExited(parseProcStat(line("a", "1", "Z"))!)).toBe(true);
    expect(hasExited(parseProcStat(line("a", "1", "S"))!)).toBe(false);
  });
});
