/**
 * An audit writer as a real child process (a replica's share of the audit): on AUDIT_DATABASE_URL,
 * appends AUDIT_ROWS rows, AUDIT_PARALLEL at a time on a pool of its own, for the users in
 * AUDIT_USERS (comma-separated ids, taken in turn; empty = `_system` rows), then prints "done" and exits.
 */
import { appendAudit, type AuditEntry } from '../../server/db/audit.ts';
import { createPool } from '../../server/db/index.ts';

const pool = createPool(process.env.AUDIT_DATABASE_URL!, { max: Number(process.env.AUDIT_PARALLEL) });
const users = (process.env.AUDIT_USERS ?? '').split(',').filter(Boolean);
const total = Number(process.env.AUDIT_ROWS);
const entry = (i: number): AuditEntry => ({
  serviceActor: 'writer', userId: users.length ? users[i % users.length] : null, username: null, userRole: null,
  operation: 'test.write', method: 'POST', path: '/test', arguments: { writer: process.pid, i, nested: { z: 1, a: [1.5, 'x'] } },
  outcome: 'success', statusCode: 200, errorCode: null, toolCallId: null, conversationId: null, durationMs: i,
});
let next = 0;
await Promise.all(
  Array.from({ length: Number(process.env.AUDIT_PARALLEL) }, async () => {
    while (next < total) {
      const i = next++;
      // Every other write is a batch of two, as the api's group commit writes them.
      await appendAudit(pool, i % 2 ? [entry(i)] : [entry(i), entry(i + total)]);
    }
  }),
);
await pool.end();
process.stdout.write('done\n');
