/**
 * Roles of the embedded cluster, set up at every start by its superuser: the application role is
 * a plain LOGIN role that owns its database and every object in it (so migrations and LangGraph's
 * setup run as it), and can neither run programs (`COPY ... TO PROGRAM`) nor read server files.
 * Legacy clusters (superuser airlock/airlock, objects owned by it) are upgraded in place.
 * @module
 */
import pg from 'pg';
import { APP_ROLE, type Credentials } from './layout.ts';

type Client = pg.Client;

/** Connects with the first password that works; returns the client and that password. */
export async function connectAs(urls: string[]): Promise<{ client: Client; url: string }> {
  let last: unknown;
  for (const url of urls) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    try {
      await client.connect();
      return { client, url };
    } catch (error) {
      last = error;
      await client.end().catch(() => {});
      if ((error as { code?: string }).code !== '28P01') break; // only a wrong password tries the next
    }
  }
  throw new Error(`cannot connect to the embedded database as its superuser: ${(last as Error)?.message ?? last}`);
}

/** Sets a role's password; the literal is escaped by the server (no parameter binding in DDL). */
export async function setPassword(client: Client, role: string, password: string): Promise<void> {
  await client.query(`ALTER ROLE ${client.escapeIdentifier(role)} PASSWORD ${client.escapeLiteral(password)}`);
}

/** The application role exists, is no superuser, and has the current password. */
export async function ensureAppRole(client: Client, password: string): Promise<void> {
  const role = client.escapeIdentifier(APP_ROLE);
  const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
  if (!rowCount) await client.query(`CREATE ROLE ${role} LOGIN`);
  await client.query(`ALTER ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
  await setPassword(client, APP_ROLE, password);
}

/** The database exists and belongs to the application role. */
export async function ensureDatabase(client: Client, database: string): Promise<void> {
  const name = client.escapeIdentifier(database);
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (!rowCount) await client.query(`CREATE DATABASE ${name} OWNER ${client.escapeIdentifier(APP_ROLE)}`);
  else await client.query(`ALTER DATABASE ${name} OWNER TO ${client.escapeIdentifier(APP_ROLE)}`);
  // Nobody else needs the maintenance database; the app connects only to its own.
  await client.query(`REVOKE CONNECT ON DATABASE postgres FROM PUBLIC`);
}

/**
 * Hands every object of the user schemas of the connected database to the application role:
 * schemas, tables (their owned sequences follow), free sequences, functions and types. REASSIGN
 * OWNED cannot do this for the bootstrap superuser, hence the explicit walk. A no-op once done.
 */
export const REASSIGN_SQL = `
DO $$
DECLARE r record; app text := ${"'" + APP_ROLE + "'"};
BEGIN
  FOR r IN SELECT n.nspname FROM pg_namespace n
           WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg\\_%'
             AND pg_get_userbyid(n.nspowner) <> app AND pg_get_userbyid(n.nspowner) <> 'pg_database_owner'
  LOOP EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, app); END LOOP;
  FOR r IN SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
             AND n.nspname NOT LIKE 'pg\\_%' AND pg_get_userbyid(c.relowner) <> app
  LOOP EXECUTE format('ALTER TABLE %I.%I OWNER TO %I', r.nspname, r.relname, app); END LOOP;
  FOR r IN SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
             AND pg_get_userbyid(c.relowner) <> app
             AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i'))
  LOOP EXECUTE format('ALTER SEQUENCE %I.%I OWNER TO %I', r.nspname, r.relname, app); END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS sig, p.prokind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
             AND pg_get_userbyid(p.proowner) <> app
  LOOP EXECUTE format('ALTER %s %s OWNER TO %I', CASE r.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, r.sig, app); END LOOP;
  FOR r IN SELECT t.oid::regtype AS typ, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
           WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
             AND t.typtype IN ('e', 'd', 'c', 'r') AND pg_get_userbyid(t.typowner) <> app
             AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
  LOOP EXECUTE format('ALTER %s %s OWNER TO %I', CASE WHEN r.typtype = 'd' THEN 'DOMAIN' ELSE 'TYPE' END, r.typ, app); END LOOP;
END $$;`;

export async function reassignOwnership(client: Client): Promise<void> {
  await client.query(REASSIGN_SQL);
}

/**
 * Run by the superuser at every start: retire a legacy fixed password (saved first, so a crash
 * in between still finds a password that works), then the app role, its database and ownership.
 * Returns the credentials as they now stand.
 */
export async function prepareRoles(args: {
  credentials: Credentials;
  database: string;
  urlFor: (user: string, password: string, database: string) => string;
  save: (credentials: Credentials) => Promise<void>;
}): Promise<Credentials> {
  let credentials = args.credentials;
  const { superuser, superuserPassword, legacyPassword } = credentials;
  const passwords = [superuserPassword, ...(legacyPassword ? [legacyPassword] : [])];
  const { client } = await connectAs(passwords.map((p) => args.urlFor(superuser, p, 'postgres')));
  try {
    if (legacyPassword) {
      await setPassword(client, superuser, superuserPassword);
      const { legacyPassword: _, ...upgraded } = credentials;
      await args.save((credentials = upgraded));
    }
    await ensureAppRole(client, credentials.appPassword);
    await ensureDatabase(client, args.database);
  } finally {
    await client.end();
  }
  const { client: inDatabase } = await connectAs([args.urlFor(superuser, superuserPassword, args.database)]);
  try {
    await reassignOwnership(inDatabase);
  } finally {
    await inDatabase.end();
  }
  return credentials;
}
