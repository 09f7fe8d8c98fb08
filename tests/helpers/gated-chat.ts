/**
 * A gateway whose model is held at will (model-gate.ts), on a database of its own, with the admin
 * signed in through the real @gradio/client: the setup of every test that needs "while the answer
 * runs" without timing (queued input, partials).
 */
import type { Client } from '@gradio/client';
import { connectChat, login } from './chat-client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { startModelGate, type ModelGate } from './model-gate.ts';
import { startTestServer, type TestServer } from './server.ts';

export interface GatedChat {
  db: TestDatabase;
  gate: ModelGate;
  server: TestServer;
  token: string;
  client: Client;
  close(): Promise<void>;
}

/** Starts it with these settings beside the gate's (the offline model's key, no retries). */
export async function startGatedChat(env: Record<string, string> = {}): Promise<GatedChat> {
  const db = await createTestDatabase();
  const gate = await startModelGate();
  const server = await startTestServer({ db, env: { OPENAI_BASE_URL: gate.url, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0', ...env } });
  const token = await login(server.url, 'admin');
  const client = await connectChat(server.url, token);
  return {
    db, gate, server, token, client,
    async close() {
      client.close();
      await server.close();
      await gate.close();
      await db.drop();
    },
  };
}
