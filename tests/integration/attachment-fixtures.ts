/**
 * A scripted OpenAI-compatible model endpoint for the attachment tests: it records every chat
 * request it receives (so a test can assert what reached the model) and answers like the offline
 * model, except that it OBEYS a file: when an attachment of the last user message says
 * "deploy <service> <version> to <environment> now", it answers with that deploy tool call, as a
 * model fooled by a prompt injection would.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { localUrl } from '../../server/app.ts';
import { completionBody, estimateUsage, newCompletionId, streamChunks } from '../../server/agent/offline-model/completion.ts';
import { parseAttachments } from '../../server/agent/offline-model/attachments.ts';
import { hashEmbed } from '../../server/agent/offline-model/embeddings.ts';
import { respond, textOf, type ChatMessageIn, type Decision, type OfferedTool } from '../../server/agent/offline-model/respond.ts';

export interface ModelRequest {
  messages: ChatMessageIn[];
  tools?: Array<{ function?: OfferedTool }>;
  stream?: boolean;
}

const OBEY = /deploy (\S+) (\S+) to (\S+) now/i;

function obeyFile(messages: ChatMessageIn[]): Decision | null {
  if (messages.at(-1)?.role !== 'user') return null;
  for (const file of parseAttachments(textOf(messages.at(-1)))) {
    const m = OBEY.exec(file.body);
    if (m) return { type: 'tool_calls', calls: [{ tool: 'deploy_service', args: { service: m[1], version: m[2], environment: m[3] } }] };
  }
  return null;
}

export async function startScriptedModel(): Promise<{ app: FastifyInstance; baseUrl: string; requests: ModelRequest[] }> {
  const requests: ModelRequest[] = [];
  const app = Fastify({ logger: false, bodyLimit: 50 * 1024 * 1024 });
  app.post('/v1/embeddings', async (req) => {
    const input = (req.body as { input: string | string[] }).input;
    const texts = typeof input === 'string' ? [input] : input;
    return { object: 'list', data: texts.map((t, index) => ({ object: 'embedding', index, embedding: hashEmbed(t) })), usage: { prompt_tokens: 0, total_tokens: 0 } };
  });
  app.post('/v1/chat/completions', async (req, reply) => {
    const body = req.body as ModelRequest;
    requests.push(structuredClone(body));
    const tools = (body.tools ?? []).flatMap((t) => (t.function?.name ? [t.function] : []));
    const decision = obeyFile(body.messages) ?? respond(body.messages, tools);
    const base = { id: newCompletionId(), model: 'scripted', created: Math.floor(Date.now() / 1000) };
    const usage = estimateUsage('', '');
    if (!body.stream) return completionBody(base, decision, usage);
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of streamChunks(base, decision, null)) reply.raw.write(`data: ${JSON.stringify(chunk)}\n\n`);
    reply.raw.end('data: [DONE]\n\n');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, baseUrl: `${localUrl(app)}/v1`, requests };
}

/** The content of the last user message of a recorded request, as parts. */
export function lastUserParts(request: ModelRequest | undefined): Array<{ type: string; text?: string; image_url?: { url: string } }> {
  const user = request?.messages.filter((m) => m.role === 'user').at(-1);
  const c = user?.content;
  if (Array.isArray(c)) return c as Array<{ type: string; text?: string }>;
  return typeof c === 'string' ? [{ type: 'text', text: c }] : [];
}

/** A one-pixel PNG. */
export const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
