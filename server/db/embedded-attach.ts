/**
 * The command line next to a running server (issue 39: `./airlock users …` "with the server
 * running"). The server claims its data folder, so the command line cannot start the cluster a
 * second time; while the folder's owner is alive it connects to that owner's cluster, as the same
 * application role, with `credentials.json`, and never starts or stops it.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_ROLE, connectionUrl, pgdataOf, readCredentials, SOCKET_PORT, socketFits } from './embedded-layout.ts';
import { ownerAlive, readOwner } from './embedded-lock.ts';

/** The URL of the cluster a live Airlock process runs from `dir`, or null when none runs it. */
export async function runningEmbeddedUrl(dir: string, database = 'airlock'): Promise<string | null> {
  const owner = await readOwner(dir);
  if (!owner || !ownerAlive(owner)) return null;
  const credentials = await readCredentials(dir);
  if (!credentials) return null;
  const { clusterDir } = credentials;
  const socket = socketFits(clusterDir);
  // On loopback TCP the port was free at that start: postmaster.pid's fourth line says which.
  const port = socket ? SOCKET_PORT : Number((await readFile(join(pgdataOf(clusterDir), 'postmaster.pid'), 'utf8')).split('\n')[3]);
  if (!Number.isInteger(port) || port <= 0) return null;
  return connectionUrl({ user: APP_ROLE, password: credentials.appPassword, database, clusterDir, port, socket });
}
