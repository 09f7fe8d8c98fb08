/**
 * A bus replica as a real child process, so a test can SIGKILL it: starts a PostgreSQL bus on
 * BUS_DATABASE_URL, joins the event BUS_EVENT of session BUS_SESSION, prints "ready <replica>"
 * and waits to be killed. With BUS_ATTACH it also holds that session's stream, as a replica
 * serving a client's `/queue/data` would; with BUS_MAILBOX it holds a mailbox of that key (owner
 * alice), as a replica holding an MCP `/sse` stream does.
 */
import { createPool } from '../../server/db/index.ts';
import { PgSessionBus } from '../../server/gradio/index.ts';

const pool = createPool(process.env.BUS_DATABASE_URL!);
const bus = await PgSessionBus.start({ pool, orphanMessage: (eventId) => ({ eventId, frame: `orphan:${eventId}`, terminal: true }) });
await bus.addEvent(process.env.BUS_SESSION!, process.env.BUS_EVENT!, { owner: 'alice', sessionHash: 'client-session' });
if (process.env.BUS_ATTACH) {
  for (let i = 0; i < 200 && !(await bus.attach(process.env.BUS_ATTACH, () => {})); i++) await new Promise((r) => setTimeout(r, 10));
}
if (process.env.BUS_MAILBOX) await bus.openMailbox(process.env.BUS_MAILBOX, 'alice', () => {});
process.stdout.write(`ready ${bus.replica}\n`);
setInterval(() => {}, 60_000);
