/**
 * A TCP proxy in front of the shared PostgreSQL, so a test can take "the database" away from a
 * real server process and give it back, without stopping the server other tests use:
 * - `refuse()`: stop listening and cut every open connection (a crashed or stopped server);
 * - `hang()`: accept connections but forward nothing, and cut the open ones (a host that stopped
 *   answering: only timeouts can notice);
 * - `restore()`: forward again on the same port;
 * - `trigger(pattern, onMatch)`: the first client bytes that match (a statement's text: PostgreSQL
 *   sends it in the clear on loopback) are never forwarded; `onMatch` runs instead (a test kills
 *   the server at the moment it was about to write).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `url` with host and port replaced by the proxy's. */
  urlFor(url: string): string;
  refuse(): Promise<void>;
  hang(): Promise<void>;
  restore(): Promise<void>;
  /** Arms the trigger; resolves once it fired. */
  trigger(pattern: RegExp, onMatch: () => void): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'forward' | 'hang' = 'forward';
  let armed: { pattern: RegExp; fire: () => void } | null = null;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'hang') return; // accepted, never answered
    const upstream = createConnection(target);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (armed?.pattern.test(chunk.toString('latin1'))) {
        const { fire } = armed;
        armed = null;
        client.pause(); // this chunk, and whatever follows it on this connection, goes nowhere
        fire();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const cut = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));

  await listen(0);
  const port = (server.address() as { port: number }).port;
  return {
    port,
    urlFor(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async refuse() {
      const closed = stopListening();
      cut();
      await closed;
    },
    async hang() {
      mode = 'hang';
      cut();
      if (!server.listening) await listen(port);
    },
    trigger(pattern, onMatch) {
      return new Promise<void>((resolve) => {
        armed = {
          pattern,
          fire: () => {
            onMatch();
            resolve();
          },
        };
      });
    },
    async restore() {
      mode = 'forward';
      cut(); // hung connections never forwarded anything: drop them
      if (!server.listening) await listen(port);
    },
    async close() {
      const closed = stopListening();
      cut();
      await closed;
    },
  };
}
