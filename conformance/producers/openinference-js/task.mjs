// OpenInference's OpenAI instrumentation for JS (manuallyInstrument, as its README shows for ESM).
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import OpenAI from "openai";
import { openaiTask } from "./openai_task.mjs";

const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
provider.register();
const instrumentation = new OpenAIInstrumentation();
instrumentation.setTracerProvider(provider);
instrumentation.manuallyInstrument(OpenAI);
const tracer = trace.getTracer("conformance.task");
const span = (name, fn, attrs) => tracer.startActiveSpan(name, { attributes: attrs }, async (s) => { try { return await fn(); } finally { s.end(); } });
const task = (name, fn) => span(name, fn, { "openinference.span.kind": "AGENT" });
const tool = (name, fn) => span(name, fn, { "openinference.span.kind": "TOOL", "tool.name": name });
await openaiTask(new OpenAI({ timeout: 1000, maxRetries: 0 }), task, tool);
await provider.shutdown();
