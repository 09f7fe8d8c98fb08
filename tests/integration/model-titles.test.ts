/**
 * A real model's conversation titles (issue 29, item 3): after the first answer the rule's title is
 * written at once, then the model is asked once and its reply (cleaned) replaces it, unless the
 * user renamed the conversation meanwhile; a model that fails leaves the rule's title. The "real"
 * model is the model proxy in front of the offline model (OPENAI_BASE_URL set), which answers the
 * title prompt itself as each test says; the real @gradio/client, gateway and PostgreSQL.
 */
import type { ServerResponse } from 'node:http';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { TITLE_MAX_TOKENS } from '../../server/agent/title-model.ts';
import type { ModelTitleOutcome } from '../../server/engine/index.ts';
import { MODEL_TITLE_SYSTEM } from '../../server/engine/model-title.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startModelProxy, type ModelProxy } from '../helpers/model-proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

type TitleRequest = { model: string; max_tokens?: number; stream?: boolean; tools?: unknown; messages: Array<{ role: string; content: string }> };

let db: TestDatabase;
let offline: Awaited<ReturnType<typeof startOfflineModelServer>>;
let model: ModelProxy;
let server: TestServer;
let token: string;
let client: Client;
/** Every ask the gateway made, in order, as its outcome. */
const asks: Promise<ModelTitleOutcome>[] = [];
/** The title prompts the model received. */
const titleRequests: TitleRequest[] = [];
/** How the model answers the next title prompts (each test sets it). */
let answerTitle: (res: ServerResponse) => Promise<void>;

/** A chat completion whose message is `content`, as an OpenAI-compatible server sends it. */
function completion(res: ServerResponse, content: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'chatcmpl-title', object: 'chat.completion', created: 0, model: 'airlock-offline-1', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
}

/** The model's answer held until the test lets it go; `asked` resolves when the prompt arrived. */
function heldAnswer(content: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const asked = new Promise<void>((resolve) => (arrived = resolve));
  answerTitle = async (res) => {
    arrived();
    await released;
    completion(res, content);
  };
  // Bounded: a gateway that never asks fails here, not at the test's timeout.
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the model was not asked for a title')), 10_000).unref());
  return { asked: Promise.race([asked, timeout]), release };
}

beforeAll(async () => {
  db = await createTestDatabase();
  offline = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  model = await startModelProxy(offline.baseUrl, async (req, res, raw) => {
    if (!req.url?.endsWith('/chat/completions') || raw.length === 0) return false;
    const body = JSON.parse(raw.toString()) as TitleRequest;
    if (body.messages[0]?.content !== MODEL_TITLE_SYSTEM) return false; // the agent's own calls
    titleRequests.push(body);
    await answerTitle(res);
    return true;
  });
  server = await startTestServer({ db, env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0' }, onModelTitle: (outcome) => asks.push(outcome) });
  token = await login(server.url, 'admin');
  client = await connectChat(server.url, token);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await model?.close();
  await offline?.close();
  await db?.drop();
});

beforeEach(() => {
  asks.length = 0;
  titleRequests.length = 0;
});

async function titleOf(id: string): Promise<string> {
  const res = await fetch(`${server.url}/api/assistant/conversations/${id}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { title: string }).title;
}

/** A first message answered: its conversation id (the answer ended done). */
async function firstAnswer(message: string): Promise<string> {
  const turn = await collect(chat(client, message));
  expect(turn.status).toBe('complete');
  expect(turn.types).not.toContain('error');
  return turn.messages[0].metadata.conversation_id;
}

describe("a real model's conversation titles", () => {
  it("shows the rule's title at once, then the model's reply, cleaned; asked once, with capped input and output", async () => {
    const held = heldAnswer('Title: "Payments API health check."');
    const id = await firstAnswer(`can you check the health of all services? ${'x'.repeat(2000)}`);
    await held.asked;
    // The turn ended while the model was still asked: the rule's title was there already.
    expect(await titleOf(id)).toBe('Health of all services');
    held.release();
    expect(asks).toHaveLength(1);
    expect(await asks[0]).toBe('written');
    expect(await titleOf(id)).toBe('Payments API health check');

    const [request] = titleRequests;
    expect(request.max_tokens).toBe(TITLE_MAX_TOKENS);
    expect(request.stream).toBeFalsy();
    expect(request.tools).toBeUndefined();
    expect(request.messages[1].content).toMatch(/^First message:\ncan you check the health of all services\?/);
    expect(request.messages[1].content.length).toBeLessThan(1400); // the 2000-character message was cut

    // A later answer asks nothing more and keeps the model's title.
    const later = await collect(chat(client, "what's the health of payments-api", id));
    expect(later.status).toBe('complete');
    expect(asks).toHaveLength(1);
    expect(await titleOf(id)).toBe('Payments API health check');
  });

  it("never overwrites the user's rename made while the model was asked", async () => {
    const held = heldAnswer('Payments API health check');
    const id = await firstAnswer('check health of all services in staging');
    await held.asked;
    const renamed = await fetch(`${server.url}/api/assistant/conversations/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'My staging check' }),
    });
    expect(renamed.status).toBe(200);
    held.release();
    expect(await asks[0]).toBe('kept');
    expect(await titleOf(id)).toBe('My staging check');
  });

  it("keeps the rule's title when the model fails or answers nothing, and the turn ends done all the same", async () => {
    answerTitle = async (res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
    };
    const failed = await firstAnswer('list open incidents');
    expect(await asks[0]).toBe('failed');
    expect(await titleOf(failed)).toBe('Open incidents');

    answerTitle = async (res) => completion(res, ' "" ');
    const empty = await firstAnswer('show me the payments latency dashboards');
    expect(await asks[1]).toBe('failed');
    expect(await titleOf(empty)).toBe('Payments latency dashboards');
    const { rows } = await db.pool.query<{ status: string }>('SELECT status FROM runs WHERE conversation_id = ANY($1::uuid[])', [[failed, empty]]);
    expect(rows.map((r) => r.status)).toEqual(['done', 'done']);
  });
});
