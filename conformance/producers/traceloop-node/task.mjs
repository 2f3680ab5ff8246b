// Traceloop's Node SDK (OpenLLMetry JS): withWorkflow / withTool around the instrumented client.
import * as traceloop from "@traceloop/node-server-sdk";
import OpenAI from "openai";
import { openaiTask } from "./openai_task.mjs";

traceloop.initialize({
  appName: "conformance-traceloop-node", baseUrl: process.env.TRACELOOP_BASE_URL, apiKey: process.env.TRACELOOP_API_KEY,
  disableBatch: true, instrumentModules: { openAI: OpenAI },
});
const span = (name, fn) => traceloop.withWorkflow({ name }, fn);
const tool = (name, fn) => traceloop.withTool({ name }, fn);
await openaiTask(new OpenAI({ timeout: 1000, maxRetries: 0 }), span, tool);
await traceloop.forceFlush();
