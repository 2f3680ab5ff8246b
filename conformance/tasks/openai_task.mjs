// The task on an OpenAI JS client (instrumented or wrapped by the producer): see common.py.
export const ERROR_MODELS = ["gpt-4o-mini-404", "gpt-4o-mini-429", "gpt-4o-mini-500", "gpt-4o-mini-timeout"];
export const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_current_weather",
    description: "Get the current weather in a given location",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false },
  },
};
export async function getCurrentWeather(location) {
  await new Promise((r) => setTimeout(r, 30));
  return location.includes("Seattle") ? "50 degrees and raining" : "70 degrees and sunny";
}
const nospan = async (name, fn) => fn();
export async function openaiTask(client, span = nospan, toolSpan = nospan) {
  const q = [{ role: "user", content: "Say this is a test" }];
  await span("weather", async () => {
    await client.chat.completions.create({ model: "gpt-4o-mini", messages: q });
    const ask = [{ role: "user", content: "What's the weather in Seattle today?" }];
    const first = await client.chat.completions.create({ model: "gpt-4o-mini-tool", messages: ask, tools: [WEATHER_TOOL] });
    const call = first.choices[0].message.tool_calls[0];
    const result = await toolSpan("get_current_weather", () => getCurrentWeather(JSON.parse(call.function.arguments).location));
    await client.chat.completions.create({
      model: "gpt-4o-mini-tool", tools: [WEATHER_TOOL],
      messages: [...ask, first.choices[0].message, { role: "tool", tool_call_id: call.id, content: result }],
    });
    const stream = await client.chat.completions.create({ model: "gpt-4o-mini-stream", messages: q, stream: true, stream_options: { include_usage: true } });
    for await (const _ of stream) { /* drain */ }
  });
  await span("failures", async () => {
    for (const model of ERROR_MODELS) {
      try { await client.chat.completions.create({ model, messages: q }); }
      catch (e) { console.log(`  ${e.constructor.name}: ${String(e.message).slice(0, 80)}`); }
    }
  });
}
