// Vercel AI SDK with its OpenTelemetry telemetry (experimental_telemetry), OpenAI chat provider.
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, tool, stepCountIs, registerTelemetry } from "ai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { z } from "zod";
import { ERROR_MODELS, getCurrentWeather } from "./openai_task.mjs";

const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
provider.register();
registerTelemetry(new OpenTelemetry());
const tracer = trace.getTracer("conformance.task");
const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const telemetry = { functionId: "conformance" };
const common = (model) => ({ model: openai.chat(model), maxRetries: 0, abortSignal: AbortSignal.timeout(1000), telemetry });
const span = (name, fn) => tracer.startActiveSpan(name, async (s) => { try { return await fn(); } finally { s.end(); } });

await span("weather", async () => {
  await generateText({ ...common("gpt-4o-mini"), prompt: "Say this is a test" });
  await generateText({
    ...common("gpt-4o-mini-tool"), prompt: "What's the weather in Seattle today?", stopWhen: stepCountIs(2),
    tools: { get_current_weather: tool({ description: "Get the current weather in a given location", inputSchema: z.object({ location: z.string() }), execute: async ({ location }) => getCurrentWeather(location) }) },
  });
  const r = streamText({ ...common("gpt-4o-mini-stream"), prompt: "Say this is a test" });
  for await (const _ of r.textStream) { /* drain */ }
  await r.usage;
});
await span("failures", async () => {
  for (const m of ERROR_MODELS) {
    try { await generateText({ ...common(m), prompt: "Say this is a test" }); }
    catch (e) { console.log(`  ${e.constructor.name}: ${String(e.message).slice(0, 80)}`); }
  }
});
await provider.shutdown();
