// OpenAI Chat Completions for the fake model server (fake-model-server.mjs):
// `POST /v1/chat/completions`, streamed (SSE chunks with `tool_calls` deltas,
// then `[DONE]`) or not, for the clients that speak it (OpenCode and Cline
// with an OpenAI-compatible provider). Like the other APIs, the step served is
// read from the conversation: how many tool results (`role: "tool"`) it holds.

function done(body) {
  let n = 0;
  for (const m of body.messages ?? []) if (m?.role === "tool") n++;
  return n;
}

function toolNames(body) {
  return (body.tools ?? []).map((t) => t.function?.name ?? t.name).filter((n) => typeof n === "string");
}

export function chatCompletions(req, res, body, script, log) {
  const tools = toolNames(body);
  const n = done(body);
  const step = tools.length > 0 ? script.steps[n] : undefined;
  const id = `chatcmpl-fake-${n}-${Math.random().toString(36).slice(2, 8)}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? "fake-model";
  const call = step === undefined ? undefined : { index: 0, id: `call_fake_${String(n).padStart(2, "0")}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(step.input) } };
  const text = step === undefined ? (tools.length > 0 ? script.final : "ok") : undefined;
  const finish = call ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  log.add({ api: "chat", url: req.url ?? "", stream: body.stream === true, model, tools: tools.length > 0 ? tools : undefined, done: n, answer: step ? `tool ${step.tool}` : "text" });
  if (body.stream !== true) {
    const message = call ? { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: call.function }] } : { role: "assistant", content: text };
    const out = JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
    return res.end(out);
  }
  const chunk = (delta, finishReason, extra = {}) => ({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra });
  const chunks = [chunk({ role: "assistant", content: "" }, null), call ? chunk({ tool_calls: [call] }, null) : chunk({ content: text }, null), chunk({}, finish)];
  if (body.stream_options?.include_usage) chunks.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.write("data: [DONE]\n\n");
  return res.end();
}
