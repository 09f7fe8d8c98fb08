/** Database access: pool, migrations, embedded server. Table modules live beside this file. */
export { createPool, CONNECT_TIMEOUT_MS, guardClients, releaseOnce, withTransaction, withSnapshot, withAdvisoryLock, isUniqueViolation, poolOf } from './pool.ts';
export type { Queryable, Pool, PoolClient } from './pool.ts';
export { runMigrations, loadMigrations } from './migrate.ts';
export { isDatabaseUnavailable } from './unavailable.ts';
export { rememberSessionConversation, sessionConversation, SESSION_IDLE_MS } from './gradio-sessions.ts';
export type { Migration } from './migrate.ts';
export { startEmbeddedPostgres, freePort } from './embedded.ts';
export { runningEmbeddedUrl } from './embedded-attach.ts';
export type { EmbeddedDatabase } from './embedded.ts';
