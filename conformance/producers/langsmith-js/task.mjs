// LangSmith JS: wrapOpenAI around the OpenAI client, each task a traceable chain.
import OpenAI from "openai";
import { traceable } from "langsmith/traceable";
import { wrapOpenAI } from "langsmith/wrappers";
import { Client } from "langsmith";
import { openaiTask } from "./openai_task.mjs";

const lsClient = new Client();
const client = wrapOpenAI(new OpenAI({ timeout: 1000, maxRetries: 0 }), { client: lsClient });
const span = (name, fn) => traceable(fn, { name, run_type: "chain", client: lsClient })();
const toolSpan = (name, fn) => traceable(fn, { name, run_type: "tool", client: lsClient })();
await openaiTask(client, span, toolSpan);
await lsClient.awaitPendingTraceBatches();
