/**
 * Attacks on approvals (security issue, finding 1): one Confirm must approve one action, the one
 * shown. Real server, real @gradio/client, real PostgreSQL; effects read from the deployments table.
 */
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { actionHash } from '../../server/approvals/rules.ts';
import { collect, connectChat, DEMO_PASSWORD, login, type Turn, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  client = await connectChat(server.url, await login(server.url, 'admin'));
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await db?.drop();
});

function decide(conversationId: string, action: 'confirm' | 'deny', approvalId: string | null): Promise<Turn> {
  return collect(client.submit('/chat', { message: action, conversation_id: conversationId, action, approval_id: approvalId }));
}

async function deployments(version: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ service: string }>('SELECT service FROM deployments WHERE version = $1 ORDER BY service', [version]);
  return rows.map((r) => r.service);
}

const cards = (turn: Turn) => turn.messages.filter((m) => m.metadata.type === 'confirm_required');
const byService = (turn: Turn, service: string) => cards(turn).find((m) => (m.metadata.input as { service: string }).service === service)!;
const idOf = (m: WireMessage) => m.metadata.approval_id as string;

/** Two deploys in one message: two cards in one paused batch. */
async function twoDeploys(version: string) {
  const pause = await collect(client.submit('/chat', { message: { text: `deploy checkout-api ${version} to staging; deploy payments-api ${version} to staging`, files: [] }, conversation_id: 'new' }));
  expect(cards(pause)).toHaveLength(2);
  return { conversationId: pause.final!.metadata.conversation_id, checkout: idOf(byService(pause, 'checkout-api')), payments: idOf(byService(pause, 'payments-api')) };
}

describe('one decision, one action', () => {
  it('Confirm on the first card deploys nothing else; the run resumes when the second is decided', async () => {
    const { conversationId, checkout, payments } = await twoDeploys('9.0.1');

    const first = await decide(conversationId, 'confirm', checkout);
    expect(first.messages.map((m) => [m.metadata.type, m.metadata.approval_id ?? null])).toEqual([['confirm_resolved', checkout]]);
    expect(await deployments('9.0.1')).toEqual([]); // nothing ran: the batch waits for its second decision
    const { rows } = await db.pool.query('SELECT id, status FROM approvals WHERE conversation_id = $1 ORDER BY status', [conversationId]);
    expect(rows).toEqual([{ id: checkout, status: 'approved' }, { id: payments, status: 'pending' }]);

    const second = await decide(conversationId, 'deny', payments);
    expect(second.messages[0].metadata).toMatchObject({ type: 'confirm_resolved', result: 'denied', approval_id: payments });
    expect(second.types).toContain('tool_end');
    expect(await deployments('9.0.1')).toEqual(['checkout-api']);
  });

  it('a bare confirm while two are pending is refused, naming both ids, and resolves nothing', async () => {
    const { conversationId, checkout, payments } = await twoDeploys('9.0.2');
    const turn = await collect(client.submit('/chat', { message: 'confirm', conversation_id: conversationId, action: 'confirm' }));
    expect(turn.final!.metadata).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    expect(turn.final!.metadata.detail).toContain(checkout);
    expect(turn.final!.metadata.detail).toContain(payments);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM approvals WHERE conversation_id = $1 AND status = 'pending'`, [conversationId]);
    expect(rows[0].n).toBe(2);
    expect(await deployments('9.0.2')).toEqual([]);
  });

  it("an approval id from another conversation cannot decide this one's", async () => {
    const mine = await twoDeploys('9.0.3');
    const other = await twoDeploys('9.0.4');
    const turn = await decide(mine.conversationId, 'confirm', other.checkout);
    expect(turn.final!.metadata).toMatchObject({ type: 'error', code: 'APPROVAL_NOT_FOUND' });
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM approvals WHERE status = 'pending' AND id = ANY($1::uuid[])`, [
      [mine.checkout, mine.payments, other.checkout, other.payments],
    ]);
    expect(rows[0].n).toBe(4);
  });

  it('a confirm never runs a different action than the one shown (the decision is bound to tool + arguments + user)', async () => {
    const pause = await collect(client.submit('/chat', { message: { text: 'deploy checkout-api 9.0.5 to staging', files: [] }, conversation_id: 'new' }));
    const card = cards(pause)[0];
    const conversationId = pause.final!.metadata.conversation_id;
    // The card the user saw said production; the paused call says staging (a swapped interrupt).
    const shown = { service: 'checkout-api', version: '9.0.5', environment: 'production' };
    const { rows: [row] } = await db.pool.query<{ requested_by: string }>('SELECT requested_by FROM approvals WHERE id = $1', [idOf(card)]);
    await db.pool.query('UPDATE approvals SET args = $2, action_hash = $3 WHERE id = $1', [
      idOf(card), JSON.stringify(shown), actionHash({ tool: 'deploy_service', args: shown, userId: row.requested_by }),
    ]);
    const turn = await decide(conversationId, 'confirm', idOf(card));
    expect(turn.messages[0].metadata).toMatchObject({ type: 'confirm_resolved', result: 'confirmed' });
    expect(turn.messages.find((m) => m.metadata.type === 'tool_error')?.metadata).toMatchObject({ tool: 'deploy_service' });
    expect(turn.types).not.toContain('tool_end');
    expect(await deployments('9.0.5')).toEqual([]);
  });

  it('a user demoted between the pause and the confirm: the confirmed deploy is refused by the api, with its audit row', async () => {
    await db.pool.query('INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3)', ['demoted-lead', await hashPassword(DEMO_PASSWORD), 'admin']);
    const lead = await connectChat(server.url, await login(server.url, 'demoted-lead'));
    try {
      const pause = await collect(lead.submit('/chat', { message: { text: 'deploy checkout-api 9.0.6 to staging', files: [] }, conversation_id: 'new' }));
      const card = cards(pause)[0];
      await db.pool.query(`UPDATE users SET role = 'viewer' WHERE username = 'demoted-lead'`);
      const turn = await collect(lead.submit('/chat', { message: 'confirm', conversation_id: pause.final!.metadata.conversation_id, action: 'confirm', approval_id: idOf(card) }));
      expect(turn.messages.find((m) => m.metadata.type === 'tool_error')?.metadata).toMatchObject({ tool: 'deploy_service', code: 'FORBIDDEN' });
      expect(await deployments('9.0.6')).toEqual([]);
      // The permission check before the pause ran once (the resumed call is not checked twice);
      // the call itself reached the api and was refused there, on the role the user has now.
      const { rows } = await db.pool.query(`SELECT operation, outcome, status_code FROM audit_log WHERE username = 'demoted-lead' ORDER BY id`);
      expect(rows).toEqual([
        { operation: 'show_capabilities', outcome: 'success', status_code: 200 },
        // the card's preview, read (no effect) before the pause while the user was still a lead
        { operation: 'deploy_service', outcome: 'preview', status_code: 200 },
        { operation: 'approval.approve', outcome: 'success', status_code: 200 },
        { operation: 'deploy_service', outcome: 'denied', status_code: 403 },
      ]);
    } finally {
      lead.close();
    }
  });
});
