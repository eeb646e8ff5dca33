import { describe, expect, it } from "vitest";
import { check, type Gate } from "../../../src/ui/guard.js";

// The request rules as a function, case by case; test/e2e/ui-server.test.ts
// checks the same rules against the real process and its disk.

const gate: Gate = { port: 4321, token: "a".repeat(64) };
const host = "127.0.0.1:4321";
const q = (s = "") => new URLSearchParams(s);
const verdict = (method: string, path: string, headers: Record<string, string>, query = "") => check(gate, method, path, q(query), { host, ...headers });

describe("ui guard", () => {
  it("lets the page's own requests through (the controls)", () => {
    expect(verdict("GET", "/", {}, `token=${gate.token}`)).toEqual({ ok: true, firstLoad: true });
    // The printed URL opened from the opener's file, a file: page: cross-site, and still the first load.
    expect(verdict("GET", "/", { "sec-fetch-site": "cross-site" }, `token=${gate.token}`)).toEqual({ ok: true, firstLoad: true });
    expect(verdict("GET", "/api/status", { "x-unwind-token": gate.token })).toEqual({ ok: true, firstLoad: false });
    expect(verdict("GET", "/app.js", { cookie: `other=1; unwind-4321=${gate.token}` })).toEqual({ ok: true, firstLoad: false });
    expect(verdict("POST", "/api/undo", { "x-unwind-token": gate.token, "content-type": "application/json", origin: "http://localhost:4321", "sec-fetch-site": "same-origin" })).toEqual({
      ok: true,
      firstLoad: false,
    });
  });

  it("refuses a foreign Host, a foreign Origin, a cross-site fetch, a missing or wrong token, a cookie-only or non-JSON POST, another method", () => {
    const refused = (v: ReturnType<typeof verdict>) => (v.ok ? 200 : v.status);
    expect(refused(check(gate, "GET", "/api/status", q(), { host: "evil.example:4321", "x-unwind-token": gate.token }))).toBe(403);
    expect(refused(check(gate, "GET", "/api/status", q(), { "x-unwind-token": gate.token }))).toBe(403); // no Host at all
    expect(refused(verdict("GET", "/api/status", { "x-unwind-token": gate.token, origin: "http://127.0.0.1:4322" }))).toBe(403);
    expect(refused(verdict("GET", "/api/status", { "x-unwind-token": gate.token, "sec-fetch-site": "cross-site" }))).toBe(403);
    expect(refused(verdict("GET", "/", { "x-unwind-token": gate.token, "sec-fetch-site": "cross-site" }))).toBe(403); // the exemption is for the printed URL alone
    expect(refused(verdict("GET", "/api/status", { "sec-fetch-site": "cross-site" }, `token=${gate.token}`))).toBe(403);
    expect(refused(verdict("GET", "/api/status", {}))).toBe(401);
    expect(refused(verdict("GET", "/api/status", { "x-unwind-token": "b".repeat(64) }))).toBe(401);
    expect(refused(verdict("GET", "/api/status", { "x-unwind-token": "a" }))).toBe(401); // another length: no throw from timingSafeEqual
    expect(refused(verdict("GET", "/api/status", {}, `token=${gate.token}`))).toBe(401); // the query is for the first page only
    expect(refused(verdict("GET", "/", { cookie: `unwind-4322=${gate.token}` }))).toBe(401); // another port's cookie
    expect(refused(verdict("POST", "/api/undo", { cookie: `unwind-4321=${gate.token}`, "content-type": "application/json" }))).toBe(403);
    expect(refused(verdict("POST", "/api/undo", { "x-unwind-token": gate.token, "content-type": "text/plain" }))).toBe(415);
    for (const m of ["PUT", "DELETE", "OPTIONS", "PATCH"]) expect(refused(verdict(m, "/api/undo", { "x-unwind-token": gate.token }))).toBe(405);
  });
});
