/**
 * Hook payloads: one harness's hook payload (stdin JSON text) in, one
 * harness-neutral CaptureEvent out (SPEC sections 2 and 8), read by the
 * rules of each harness (claude.ts, codex.ts, gemini.ts, qwen.ts, copilot.ts).
 *
 * Pure on purpose: no fs, no git, no clock, no environment. The hook runs on
 * every tool call, so this module pulls in nothing but node:crypto (and the
 * rules, which are plain data); the settings merge of `unwind init` lives in
 * settings.ts, out of the hook's way. It never throws; anything wrong with
 * the payload comes back as a one-line error for the capture error log.
 */
import { createHash } from "node:crypto";

import type { CaptureEvent, ParseResult, Target } from "../event.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { copilot } from "./copilot.js";
import { gemini } from "./gemini.js";
import { opencode } from "./opencode.js";
import { cline } from "./cline.js";
import { qwen } from "./qwen.js";
import { isObject, TAKING_BACK_TOOLS, type Harness, type HarnessRules, type Json, type JsonObject } from "./rules.js";

export const HARNESSES: Readonly<Record<Harness, HarnessRules>> = { claude, codex, gemini, qwen, copilot, opencode, cline };

/** `event`: what the hook command names after the harness, for a harness whose payload has no event name (Copilot CLI). */
export function parseHookEvent(harness: string, raw: string, event?: string): ParseResult {
  try {
    return parse(harness, raw, event);
  } catch (err) {
    // Nothing above should throw; this is the "never throw" backstop (e.g. a
    // pathologically deep tool_input overflowing the stack while hashing).
    return fail(`cannot read payload: ${oneLine(err instanceof Error ? err.message : String(err))}`);
  }
}

function parse(harness: string, raw: string, argEvent: string | undefined): ParseResult {
  if (!isHarness(harness)) return fail(`unknown harness ${oneLine(String(harness))}`);
  if (typeof raw !== "string") return fail("input is not text");
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === "") return fail("empty input");

  let payload: Json;
  try {
    payload = JSON.parse(text) as Json;
  } catch (err) {
    return fail(`malformed JSON: ${oneLine(err instanceof Error ? err.message : String(err))}`);
  }
  if (!isObject(payload)) return fail(`payload is not a JSON object (got ${describe(payload)})`);

  const rules = HARNESSES[harness];
  if (rules.payload !== undefined) {
    const read = rules.payload(payload, argEvent);
    if (typeof read === "string") return fail(read);
    payload = read;
  }
  const sessionId = nonEmptyString(payload.session_id);
  if (sessionId === undefined) return fail("payload has no session_id (a non-empty string)");
  const eventName = nonEmptyString(payload.hook_event_name);
  if (eventName === undefined) return fail("payload has no hook_event_name");
  const phase = Object.hasOwn(rules.events, eventName) ? rules.events[eventName] : undefined;
  if (phase === undefined) return fail(`unsupported event ${oneLine(eventName)}`);
  const tool = nonEmptyString(payload.tool_name);
  if (tool === undefined) return fail("payload has no tool_name");
  const cwd = nonEmptyString(payload.cwd);
  if (cwd === undefined) return fail("payload has no cwd (a non-empty string)");

  const toolInput = payload.tool_input;
  const target = classify(rules, tool, toolInput);
  if ("error" in target) return fail(target.error);

  const session = `${harness}:${sessionId}`;
  const id = nonEmptyString(payload.tool_use_id);
  const call = id ?? syntheticCallId(session, tool, toolInput);

  const event: CaptureEvent = { harness, session, phase, tool, call, cwd, target };
  if (id === undefined) event.pairing = "key";
  const agent = nonEmptyString(payload.agent_id);
  if (agent !== undefined) event.agent = agent;
  const agentType = nonEmptyString(payload.agent_type);
  if (agentType !== undefined) event.agentType = agentType;
  if (target.kind === "tree" && isObject(toolInput) && rules.background.some((f) => inBackground(toolInput, f))) event.background = true;
  const prefix = rules.mcp?.prefix;
  const own = prefix !== undefined && tool.startsWith(prefix) ? tool.slice(prefix.length) : undefined;
  if (own !== undefined && TAKING_BACK_TOOLS.includes(own)) event.unwindTool = own;
  return { ok: true, event };
}

/** Whether `input` starts its command in the background by `flag`: a field that is true, or `field=value`. */
function inBackground(input: JsonObject, flag: string): boolean {
  const eq = flag.indexOf("=");
  if (eq < 0) return input[flag] === true;
  return input[flag.slice(0, eq)] === flag.slice(eq + 1);
}

function classify(rules: HarnessRules, tool: string, input: Json | undefined): Target | { error: string } {
  if (rules.readOnly.has(tool)) return { kind: "ignore" };

  const field = Object.hasOwn(rules.fileTools, tool) ? rules.fileTools[tool] : undefined;
  if (field !== undefined) {
    const path = isObject(input) ? nonEmptyString(input[field]) : undefined;
    if (path === undefined) return { error: `${tool} payload has no ${field}` };
    return { kind: "files", paths: [path] };
  }

  return rules.classify?.(tool, input) ?? { kind: "tree" };
}

/**
 * The pairing key for harnesses that give no tool-use id (Gemini): the same
 * for the pre and post payloads of one call, whatever their key order. Two
 * identical calls share it; the capture tells them apart (pairing "key").
 */
function syntheticCallId(session: string, tool: string, input: Json | undefined): string {
  const digest = createHash("sha256")
    .update(`${session}\0${tool}\0${stableStringify(input)}`)
    .digest("hex");
  return `h-${digest.slice(0, 16)}`;
}

/** JSON text with object keys sorted at every depth; an absent value reads as null. */
export function stableStringify(value: Json | undefined): string {
  if (value === undefined || value === null) return "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i > 0 ? "," : "") + stableStringify(value[i]);
    return `${out}]`;
  }
  if (typeof value === "object") {
    const keys = Object.keys(value).sort();
    let out = "{";
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      out += `${i > 0 ? "," : ""}${JSON.stringify(key)}:${stableStringify(value[key])}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}

function isHarness(value: string): value is Harness {
  return (Object.keys(HARNESSES) as readonly string[]).includes(value);
}

function nonEmptyString(value: Json | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function describe(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function fail(error: string): ParseResult {
  return { ok: false, error };
}
