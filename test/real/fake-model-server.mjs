// A fake model server for the real-client suite (test/real): answers the
// Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex), the
// OpenAI Chat Completions API (Qwen Code, GitHub Copilot CLI) and the Gemini
// API (Gemini CLI) on 127.0.0.1, serving a SCRIPT of tool calls,
// one per model turn, then a final text answer. Node only, no dependencies.
//
// Which step to serve is read from the conversation the client sends (how
// many tool results it already holds), not from a counter: the clients make
// side requests of their own (titles, routing, next-speaker checks) that must
// not consume a step, and a retried request must get the same answer.
//
// A script: { steps: [{ tool: "<name>", input: {...} }, ...], final: "text" }.
// For a Codex custom tool (apply_patch as a freeform tool) `input` is the raw
// text; for a function tool it is the arguments object.
//
// Subagents (Anthropic only): `agents: { "<marker>": { steps, final } }`. A
// conversation whose first user message holds the marker (the prompt the
// parent's Agent call handed its subagent) is served that script instead, with
// its own count of tool results; every other conversation gets `steps`. A
// step's `delayMs` holds its answer back that long (the parent's next call
// then lands while its subagent's is under way).
import { createServer } from "node:http";

/** Every request, in order: what the client asked and what it got. */
function makeLog() {
  const entries = [];
  return {
    entries,
    add(entry) {
      entries.push({ t: new Date().toISOString(), ...entry });
    },
  };
}

function sse(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
  for (const [event, data] of events) {
    if (event !== null) res.write(`event: ${event}\n`);
    // Chat Completions ends its stream with a bare `data: [DONE]`.
    res.write(`data: ${data === "[DONE]" ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function json(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

// ---------------------------------------------------------------- Anthropic

function anthropicDone(body) {
  let n = 0;
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) if (b?.type === "tool_result") n++;
  }
  return n;
}

/** The text of a conversation's first user message (a string, or its text blocks joined). */
function anthropicFirstUser(body) {
  const first = (body.messages ?? []).find((m) => m?.role === "user");
  if (first === undefined) return "";
  if (typeof first.content === "string") return first.content;
  return (Array.isArray(first.content) ? first.content : []).map((b) => (b?.type === "text" ? b.text : "")).join("\n");
}

/** The script for this conversation: a subagent's, when its first user message holds that agent's marker. */
function anthropicScript(body, script) {
  const first = anthropicFirstUser(body);
  for (const [marker, sub] of Object.entries(script.agents ?? {})) if (first.includes(marker)) return { script: sub, agent: marker };
  return { script, agent: undefined };
}

function anthropic(req, res, body, top, log) {
  const url = req.url ?? "";
  if (url.includes("count_tokens")) {
    log.add({ api: "anthropic", url, answer: "count_tokens" });
    return json(res, 200, { input_tokens: 100 });
  }
  const tools = (body.tools ?? []).map((t) => t.name);
  const hasTools = tools.length > 0;
  const { script, agent } = anthropicScript(body, top);
  const done = anthropicDone(body);
  const step = hasTools ? script.steps[done] : undefined;
  const model = body.model ?? "claude-fake";
  const id = `msg_fake_${done}_${Math.random().toString(36).slice(2, 8)}`;
  const usage = { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  let content;
  let stop;
  if (step !== undefined) {
    // A subagent's calls get ids of their own (`toolu_fake_<marker>_00`), apart from the parent's.
    const prefix = agent === undefined ? "toolu_fake_" : `toolu_fake_${agent}_`;
    content = [{ type: "tool_use", id: `${prefix}${String(done).padStart(2, "0")}`, name: step.tool, input: step.input }];
    stop = "tool_use";
  } else {
    content = [{ type: "text", text: hasTools ? script.final : "ok" }];
    stop = "end_turn";
  }
  log.add({
    api: "anthropic",
    url,
    stream: body.stream === true,
    model,
    tools: hasTools ? tools : undefined,
    ...(agent !== undefined ? { agent } : {}),
    done,
    answer: step ? `tool ${step.tool}` : "text",
  });
  if (body.stream !== true) {
    return json(res, 200, { id, type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage });
  }
  const events = [["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } }]];
  content.forEach((block, index) => {
    if (block.type === "tool_use") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }]);
    } else {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } }]);
  events.push(["message_stop", { type: "message_stop" }]);
  if (step?.delayMs > 0) return void setTimeout(() => sse(res, events), step.delayMs);
  return sse(res, events);
}

// ------------------------------------------------------ OpenAI Responses API

function responsesDone(body) {
  let n = 0;
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (item?.type === "function_call_output" || item?.type === "custom_tool_call_output") n++;
  }
  return n;
}

function responses(req, res, body, script, log) {
  const url = req.url ?? "";
  const offered = new Map();
  for (const t of body.tools ?? []) {
    const name = t.name ?? t.function?.name;
    if (name) offered.set(name, t.type);
  }
  const done = responsesDone(body);
  const step = offered.size > 0 ? script.steps[done] : undefined;
  const id = `resp_fake_${done}_${Math.random().toString(36).slice(2, 8)}`;
  let item;
  if (step !== undefined) {
    const callId = `call_fake_${String(done).padStart(2, "0")}`;
    if (offered.get(step.tool) === "custom") {
      item = { type: "custom_tool_call", id: `ctc_${callId}`, call_id: callId, name: step.tool, input: typeof step.input === "string" ? step.input : JSON.stringify(step.input), status: "completed" };
    } else {
      item = { type: "function_call", id: `fc_${callId}`, call_id: callId, name: step.tool, arguments: JSON.stringify(step.input), status: "completed" };
    }
  } else {
    item = { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: offered.size > 0 ? script.final : "ok", annotations: [] }] };
  }
  log.add({ api: "responses", url, model: body.model, tools: [...offered.entries()].map(([n, t]) => `${n}:${t}`), done, answer: step ? `tool ${step.tool} (${item.type})` : "text" });
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
  const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), status: "completed", model: body.model, output: [item], usage };
  if (body.stream === false) return json(res, 200, response);
  return sse(res, [
    ["response.created", { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", sequence_number: 1, output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", sequence_number: 2, output_index: 0, item }],
    ["response.completed", { type: "response.completed", sequence_number: 3, response }],
  ]);
}

// ------------------------------------------------ OpenAI Chat Completions API

function chatDone(body) {
  let n = 0;
  for (const m of body.messages ?? []) if (m?.role === "tool") n++;
  return n;
}

function chat(req, res, body, script, log) {
  const url = req.url ?? "";
  const tools = (body.tools ?? []).map((t) => t.function?.name ?? t.name).filter(Boolean);
  const done = chatDone(body);
  const step = tools.length > 0 ? script.steps[done] : undefined;
  const id = `chatcmpl-fake-${done}-${Math.random().toString(36).slice(2, 8)}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? "fake-model";
  const call = step === undefined ? undefined : { id: `call_fake_${String(done).padStart(2, "0")}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(step.input) } };
  const text = tools.length > 0 ? script.final : "ok";
  const finish = call ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  log.add({ api: "chat", url, stream: body.stream === true, model, tools: tools.length > 0 ? tools : undefined, done, answer: step ? `tool ${step.tool}` : "text" });
  if (body.stream !== true) {
    const message = call ? { role: "assistant", content: null, tool_calls: [call] } : { role: "assistant", content: text };
    return json(res, 200, { id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const chunk = (delta, finishReason, extra = {}) => [null, { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra }];
  const delta = call ? { role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] } : { role: "assistant", content: text };
  return sse(res, [chunk(delta, null), chunk({}, finish, { usage }), [null, "[DONE]"]]);
}

// ---------------------------------------------------------------- Gemini API

function geminiDone(body) {
  let n = 0;
  for (const c of body.contents ?? []) for (const p of c.parts ?? []) if (p?.functionResponse) n++;
  return n;
}

function geminiTools(body) {
  const names = [];
  for (const t of body.tools ?? []) for (const f of t.functionDeclarations ?? []) names.push(f.name);
  return names;
}

/**
 * A value that fits a JSON schema: Gemini CLI's side requests (model routing,
 * next-speaker checks) ask for JSON of a given shape and complain loudly on
 * stderr when it does not fit.
 */
function fromSchema(schema) {
  if (schema === undefined || schema === null || typeof schema !== "object") return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? "object")).toLowerCase();
  if (type === "object") {
    const out = {};
    for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = fromSchema(v);
    return out;
  }
  if (type === "array") return [];
  if (type === "string") return "fake";
  if (type === "number" || type === "integer") return 1;
  if (type === "boolean") return false;
  return null;
}

function gemini(req, res, body, script, log) {
  const url = req.url ?? "";
  if (url.includes(":countTokens")) {
    log.add({ api: "gemini", url, answer: "countTokens" });
    return json(res, 200, { totalTokens: 100 });
  }
  if (url.includes(":embedContent") || url.includes(":batchEmbedContents")) {
    log.add({ api: "gemini", url, answer: "embedding" });
    return json(res, 200, { embedding: { values: [0] }, embeddings: [{ values: [0] }] });
  }
  const tools = geminiTools(body);
  const done = geminiDone(body);
  const step = tools.length > 0 ? script.steps[done] : undefined;
  let parts;
  if (step !== undefined) parts = [{ functionCall: { name: step.tool, args: step.input } }];
  else if (body.generationConfig?.responseMimeType === "application/json")
    parts = [{ text: JSON.stringify(fromSchema(body.generationConfig.responseJsonSchema ?? body.generationConfig.responseSchema)) }];
  else parts = [{ text: tools.length > 0 ? script.final : "ok" }];
  log.add({
    api: "gemini",
    url,
    tools: tools.length > 0 ? tools : undefined,
    json: body.generationConfig?.responseMimeType === "application/json" || undefined,
    done,
    answer: step ? `tool ${step.tool}` : "text",
  });
  const chunk = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: "gemini-fake",
  };
  if (url.includes(":streamGenerateContent")) return sse(res, [[null, chunk]]);
  return json(res, 200, chunk);
}

// ----------------------------------------------------------------- the server

/**
 * Starts the server on 127.0.0.1 (an ephemeral port unless `port` is given).
 * Resolves to { port, log, close }: `log.entries` holds every request.
 */
export function startFakeModelServer(script, { port = 0, onUnknown = (e) => process.stderr.write(`fake-model-server: unknown request ${JSON.stringify(e)}\n`) } = {}) {
  const log = makeLog();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body = {};
      try {
        body = raw === "" ? {} : JSON.parse(raw);
      } catch {
        body = {};
      }
      const url = req.url ?? "";
      const path = url.split("?")[0] ?? "";
      try {
        if (req.method === "POST" && /\/v1\/messages(\/count_tokens)?$/.test(path)) return anthropic(req, res, body, script, log);
        if (req.method === "POST" && path.endsWith("/responses")) return responses(req, res, body, script, log);
        if (req.method === "POST" && path.endsWith("/chat/completions")) return chat(req, res, body, script, log);
        if (req.method === "POST" && /\/models\/[^/]+:(stream)?[gG]enerateContent$|:countTokens$|:embedContent$|:batchEmbedContents$/.test(path)) return gemini(req, res, body, script, log);
        // Side endpoints (model lists, telemetry, update checks): something harmless, and on the record.
        const entry = { api: "other", method: req.method, url, bytes: raw.length };
        log.add(entry);
        onUnknown(entry);
        if (req.method === "GET" && /\/models\/?$/.test(path)) return json(res, 200, { object: "list", data: [], models: [] });
        return json(res, 404, { error: { type: "not_found_error", message: `fake model server: no ${req.method} ${path}` } });
      } catch (e) {
        log.add({ api: "error", url, error: String(e) });
        return json(res, 500, { error: { message: String(e) } });
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : port,
        log,
        close: () =>
          new Promise((r) => {
            server.close(() => r(undefined));
            server.closeAllConnections();
          }),
      });
    });
  });
}
