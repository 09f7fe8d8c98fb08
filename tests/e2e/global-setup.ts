/**
 * Playwright global setup: the product behind the real nginx. The test command has already run
 * `vite build`; this builds nothing. Two deployments share one database (a fresh schema of
 * DATABASE_URL, or an embedded PostgreSQL, whose base URL the state hands on to specs that start
 * processes of their own):
 * - main: the defaults a user gets, with a quick offline model;
 * - expiry: APPROVAL_TIMEOUT_S=8, for the approval-expiry journey, and SESSION_ACCESS_TTL_S=5 for
 *   the silent renewal of browser access tokens.
 * The main deployment also loads the real MCP filesystem server (stdio) on a notes folder through a
 * TOOLS_FILE, as "Bring your own tools" in the README shows, and an organization's own API as an
 * OpenAPI source (tests/helpers/openapi-backend.ts, checking both JWTs against the main JWKS), as
 * "Your own APIs as tools" shows.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPool, startEmbeddedPostgres } from '../../server/db/index.ts';
import { freePort, startNginx } from '../helpers/nginx.ts';
import { E2E_SERVICE_SECRET, EXPIRY_ACCESS_TTL_S, startProduct, stopProduct, readState, writeState, type E2EState } from './support/product.ts';
import { jobSchemaFor } from '../../server/v1/job-queue.ts';
import { startOpenApiBackend } from '../helpers/openapi-backend.ts';

function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

export default async function globalSetup() {
  if (!existsSync('build/handler.js')) throw new Error('The UI is not built: run `vite build` before Playwright.');
  const dir = await mkdtemp(join(tmpdir(), 'airlock-e2e-'));
  const logDir = resolve('test-results/e2e-logs');
  mkdirSync(logDir, { recursive: true });
  for (const name of ['main.log', 'expiry.log']) writeFileSync(join(logDir, name), '');
  const password = process.env.DEMO_PASSWORD ?? 'demo-password-1';

  let serverUrl: string; // the server's base URL, for specs that make schemas of their own
  let databaseUrl: string; // the two deployments' URL
  let cleanupDb: () => Promise<void>;
  if (process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL;
    const schema = `e2e_${randomBytes(5).toString('hex')}`;
    const admin = createPool(process.env.DATABASE_URL, { max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    databaseUrl = withSearchPath(process.env.DATABASE_URL, schema);
    cleanupDb = async () => {
      const admin = createPool(process.env.DATABASE_URL!, { max: 1 });
      await admin.query(`DROP SCHEMA IF EXISTS ${schema}, ${jobSchemaFor(schema)} CASCADE`);
      await admin.end();
    };
  } else {
    // As root, PostgreSQL runs as an unprivileged user that must be able to enter the temp folder.
    await chmod(dir, 0o755);
    const embedded = await startEmbeddedPostgres(join(dir, 'pg'), 'e2e');
    // The deployments use its public schema; the app role owns the database, so specs can still
    // create schemas of their own beside it.
    serverUrl = embedded.url;
    databaseUrl = embedded.url;
    cleanupDb = () => embedded.stop();
  }

  const common = {
    DATABASE_URL: databaseUrl,
    DEMO_USERS: 'true', // off by default when DATABASE_URL is set
    DEMO_PASSWORD: password,
    SERVICE_CLIENT_SECRET: E2E_SERVICE_SECRET,
    // Both deployments sign with the one key in the shared database, so they share its sealing key.
    KEY_ENCRYPTION_KEY: 'e2e-key-encryption-key-0123456789abcdef',
    OFFLINE_MODEL_DELAY_MS: '30',
    // Two gateways on one database: without it the second refuses to start (issue 23 item 8).
    REPLICAS: 'true',
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
  };
  const notesDir = join(dir, 'notes');
  mkdirSync(notesDir);
  writeFileSync(join(notesDir, 'readme.txt'), 'Airlock e2e notes: the door opens inward.\n');
  const toolsFile = join(dir, 'tools.json');
  const fsServer = resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
  const billing = await startOpenApiBackend();
  writeFileSync(toolsFile, JSON.stringify({ servers: [
    { name: 'filesystem', command: process.execPath, args: [fsServer, notesDir] },
    { name: 'billing', openapi: `${billing.url}/openapi.json`, base_url: billing.url, identity: 'dual_jwt', audience: 'billing' },
  ] }));

  // What starts is stopped again, newest first, when a later step fails (nginx missing, a port
  // taken): a failed setup leaves no product, nginx or PostgreSQL running (as startCluster).
  const undo: Array<() => Promise<unknown>> = [cleanupDb, () => rm(dir, { recursive: true, force: true }), () => billing.close()];
  const started = async <T>(start: Promise<T>, stop: (t: T) => Promise<unknown>): Promise<T> => {
    const thing = await start;
    undo.unshift(() => stop(thing));
    return thing;
  };
  let main: Awaited<ReturnType<typeof startProduct>>, expiry: typeof main, nginxMain: Awaited<ReturnType<typeof startNginx>>, nginxExpiry: typeof nginxMain;
  try {
    const mainPort = await freePort();
    main = await started(startProduct(mainPort, { ...common, DATA_DIR: join(dir, 'main'), TOOLS_FILE: toolsFile }, join(logDir, 'main.log')), (p) => stopProduct(p.pid));
    const expiryPort = await freePort();
    // Its in-memory access tokens live 5 s, so every journey on it renews them from the refresh cookie.
    expiry = await started(
      startProduct(expiryPort, { ...common, DATA_DIR: join(dir, 'expiry'), APPROVAL_TIMEOUT_S: '8', SESSION_ACCESS_TTL_S: String(EXPIRY_ACCESS_TTL_S) }, join(logDir, 'expiry.log')),
      (p) => stopProduct(p.pid),
    );
    billing.trust(`http://127.0.0.1:${mainPort}`, 'airlock', 'billing');
    nginxMain = await started(startNginx({ upstream: mainPort }), (n) => n.stop());
    nginxExpiry = await started(startNginx({ upstream: expiryPort }), (n) => n.stop());
  } catch (error) {
    for (const step of undo) await step().catch(() => undefined);
    throw error;
  }

  process.env.E2E_STATE = join(dir, 'state.json');
  const state: E2EState = {
    main: { ...main, url: nginxMain.url },
    expiry: { ...expiry, url: nginxExpiry.url },
    password,
    logDir,
    notesDir,
    databaseUrl: serverUrl,
  };
  writeState(state);
  process.env.E2E_BASE_URL = nginxMain.url;

  return async () => {
    const final = readState(); // the restart journey replaces the main pid
    await stopProduct(final.main.pid);
    await stopProduct(final.expiry.pid);
    await nginxMain.stop();
    await nginxExpiry.stop();
    await billing.close();
    await cleanupDb().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
}
