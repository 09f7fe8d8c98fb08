/**
 * Integration tests use DATABASE_URL when set (CI: the local server, database `test`) and an
 * embedded PostgreSQL otherwise. Each test file then works in a schema of its own.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../server/db/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide('databaseUrl', process.env.DATABASE_URL);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'airlock-pg-'));
  await chmod(dir, 0o777); // as root the binaries run as an unprivileged user that must write here
  const db = await startEmbeddedPostgres(dir, 'test', { tcp: true }); // TCP: fault tests proxy it
  project.provide('databaseUrl', db.url);
  return async () => {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
