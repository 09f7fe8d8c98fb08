/**
 * Issue 29 item 2, durability of a branch switch: kill -9 of the real process at the moment that
 * matters. After a switch the thread still stands on the other branch's head; the next turn first
 * records the move (thread_branch, and the head of the branch it leaves), then its run writes the
 * first checkpoint from the active branch's head. The process is killed in between: PostgreSQL's
 * connection goes through a TCP proxy that, armed, never forwards the run's first checkpoint write
 * and kills the process instead. After a restart the next turn must go on from the branch the
 * conversation shows (its words: never the other branch's edit), and nothing is lost of what was
 * committed.
 * Part of the fault suite (`npm run test:faults`): prints fault, outcome, data lost.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { threadReader, type ThreadReader } from '../helpers/thread-reader.ts';

const table = createFaultTable('branch-move-kill');
/** A checkpoint write of the saver (its blobs or its row): the run's first, once the move is recorded. */
const CHECKPOINT_WRITE = /INSERT INTO \S*checkpoint(s|_blobs) \(thread_id/;

let db: TestDatabase;
let proxy: TcpProxy;
let dataDir: string;
let reader: ThreadReader;
const started: MainProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const target = new URL(inject('databaseUrl'));
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-branch-kill-'));
  reader = threadReader(db);
});

afterAll(async () => {
  table.print();
  for (const p of started) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await reader?.close();
  await proxy?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(): Promise<MainProcess> {
  const main = await startMain([], { DATABASE_URL: proxy.urlFor(db.url), DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: 'branch-kill-secret-0123456789', LEASE_TTL_S: '2' });
  started.push(main);
  return main;
}

/** Until no run of the conversation is running (the restarted process finished the dead one). */
async function untilSettled(id: string, deadlineMs = 30_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  const running = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE conversation_id = $1 AND status = 'running'`, [id])).rows[0].n;
  while ((await running()) > 0) {
    if (Date.now() > until) throw new Error(`the dead run of ${id} was not finished within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kill -9 between recording a branch move and the first checkpoint of its run', () => {
  it('the next start goes on from the branch shown, never from the branch the thread stood on', async () => {
    const first = await start();
    const token = await login(first.url, 'admin');
    const client = await connectChat(first.url, token);
    const send = (text: string, conversationId: string, action = '', messageId = '') =>
      collect(client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId, action, message_id: messageId }));
    const opened = await send('hello one', 'new');
    const id = String(opened.final!.metadata.conversation_id);
    await send('hello two', id);
    const history = async (url: string) =>
      (await (await fetch(`${url}/api/assistant/history?conversation_id=${id}&limit=200`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        active_branch: number;
        items: Array<{ id: string; role: string; content: string }>;
      };
    const two = (await history(first.url)).items.findLast((m) => m.role === 'user')!;
    expect((await send('hello 2b', id, 'edit', two.id)).status).toBe('complete');
    const switched = await fetch(`${first.url}/api/agent/conversations/${id}/branch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ branch: 0 }),
    });
    expect(switched.status).toBe(200);
    // The thread still stands on branch 1 (hello 2b); the conversation shows branch 0 (hello two).
    expect(await reader.humans(id)).toEqual(['hello one', 'hello 2b']);

    const killed = proxy.trigger(CHECKPOINT_WRITE, () => first.child.kill('SIGKILL'));
    const dying = send('thanks', id).catch((error: unknown) => error);
    await killed;
    await first.exited;
    await dying;
    client.close();
    const moved = (await db.pool.query('SELECT thread_branch, active_branch FROM conversations WHERE id = $1', [id])).rows[0];
    // The moment: the move is recorded, and the thread's newest checkpoint is still branch 1's.
    expect(moved).toEqual({ thread_branch: 0, active_branch: 0 });
    expect(await reader.humans(id)).toEqual(['hello one', 'hello 2b']);

    const second = await start();
    await untilSettled(id);
    const again = await connectChat(second.url, token);
    const after = await collect(again.submit('/chat', { message: { text: 'and now?', files: [] }, conversation_id: id, action: '', message_id: '' }));
    again.close();
    expect(after.status).toBe('complete');
    const humans = await reader.humans(id);
    // Branch 0's words, then the new message: "thanks" never reached the thread (the kill came
    // before its first checkpoint) and branch 1's edit is not in it.
    expect(humans).toEqual(['hello one', 'hello two', 'and now?']);
    const shown = await history(second.url);
    expect(shown.active_branch).toBe(0);
    const words = shown.items.filter((m) => m.role === 'user').map((m) => m.content);
    // "thanks" is in history when its commit beat the checkpoint write the kill stopped (they run
    // side by side); its submit was never answered either way. Branch 1's edit is never shown.
    const kept = words.includes('thanks');
    expect(words.filter((w) => w !== 'thanks')).toEqual(['hello one', 'hello two', 'and now?']);
    table.record({
      fault: 'kill -9 after a branch move, before its first checkpoint',
      outcome: `next turn on the branch shown (${humans.join(' / ')}); the killed message ${kept ? 'kept in history' : 'never committed (its submit failed)'}; process restarted`,
      lost: 0,
    });
  }, 120_000);
});
