/**
 * Where the embedded PostgreSQL keeps its files and secrets, and how the app reaches it.
 *
 *   <dir>/credentials.json  0600, owner of node: random passwords, the cluster's location
 *   <dir>/owner.json        which node process runs this cluster (a second start is refused)
 *   <cluster>/pgdata        the database files (owned by the server's user)
 *   <cluster>/run           the Unix socket and the server log (0700, the server's user)
 *
 * `<cluster>` is `<dir>` itself unless the server's unprivileged user cannot reach `<dir>` (root
 * starting from a 0700 home): then it lives under /var/lib/airlock/<random>, recorded in the
 * credentials, so the database user never needs to enter the operator's private folders.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** The application's role: owns its database, never a superuser. */
export const APP_ROLE = 'airlock_app';
/** The superuser of clusters this version creates; only used to set up roles and ownership. */
export const SUPERUSER = 'airlock_admin';
/** Clusters created before random passwords: superuser airlock/airlock. */
export const LEGACY = { user: 'airlock', password: 'airlock' } as const;
/** Socket mode needs no free port: the socket folder is private to the cluster. */
export const SOCKET_PORT = 5432;
/** sun_path holds 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;
/** Where clusters go when the server's user cannot reach DATA_DIR (root, 0700 folders). */
export const SHARED_CLUSTER_ROOT = '/var/lib/airlock';

const CredentialsSchema = z.object({
  version: z.literal(1),
  superuser: z.string().min(1),
  superuserPassword: z.string().min(16),
  /** Set while a legacy cluster's superuser may still have the old fixed password. */
  legacyPassword: z.string().optional(),
  appPassword: z.string().min(16),
  clusterDir: z.string().min(1),
});
export type Credentials = z.infer<typeof CredentialsSchema>;

export function randomSecret(): string {
  return randomBytes(24).toString('hex'); // hex: safe inside a URL and a conf file without escaping
}

export const credentialsPath = (dir: string) => join(dir, 'credentials.json');
export const pgdataOf = (clusterDir: string) => join(clusterDir, 'pgdata');
export const runDirOf = (clusterDir: string) => join(clusterDir, 'run');
export const socketPathOf = (clusterDir: string) => join(runDirOf(clusterDir), `.s.PGSQL.${SOCKET_PORT}`);

/** Whether the server's Unix socket path fits in sun_path; otherwise the server listens on loopback. */
export function socketFits(clusterDir: string): boolean {
  return Buffer.byteLength(socketPathOf(clusterDir)) <= MAX_SOCKET_PATH_BYTES;
}

export async function readCredentials(dir: string): Promise<Credentials | null> {
  let text: string;
  try {
    text = await readFile(credentialsPath(dir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const parsed = CredentialsSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${credentialsPath(dir)} is damaged (${parsed.error.issues[0]?.message}); restore it from a backup`);
  return parsed.data;
}

/** Writes atomically (temp file, then rename), mode 0600 from the first byte. */
export async function writeCredentials(dir: string, credentials: Credentials): Promise<void> {
  const path = credentialsPath(dir);
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/** Connection string for `user` over the socket (when it fits) or loopback TCP. */
export function connectionUrl(args: { user: string; password: string; database: string; clusterDir: string; port: number; socket: boolean }): string {
  const base = `postgres://${args.user}:${args.password}@localhost:${args.port}/${encodeURIComponent(args.database)}`;
  return args.socket ? `${base}?host=${encodeURIComponent(runDirOf(args.clusterDir))}` : base.replace('@localhost:', '@127.0.0.1:');
}
