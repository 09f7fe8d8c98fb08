/**
 * `./airlock users …` (issue 39): the command line's door to user management, with the rules of
 * server/identity (the admin API's). Changes are audited as `cli`.
 *   users add NAME --role ROLE [--password-stdin]   the password from one line of standard input,
 *                                                    otherwise generated and printed once
 *   users list                                      username, role, source, state, last sign-in (tab-separated)
 *   users set-role NAME ROLE | disable NAME | enable NAME | reset-password NAME
 * A refused change prints one line and exits 1; bad usage exits 2.
 * @module
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { addUser, CLI_ACTOR, listUsers, resetPassword, setDisabled, setRole, type ManagedUser } from '../server/identity/index.ts';
import { isAirlockError } from '../server/errors.ts';
import { createPool, runMigrations } from '../server/db/index.ts';
import { CliError, openCliDatabase } from './cli-database.ts';

export const USERS_USAGE = `       ./airlock users add NAME --role ROLE [--password-stdin]
       ./airlock users list | set-role NAME ROLE | disable NAME | enable NAME | reset-password NAME`;

async function readPasswordLine(): Promise<string> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) return line;
  return '';
}

const listLine = (u: ManagedUser) =>
  [u.username, u.role, u.source, u.disabled_at ? 'disabled' : 'enabled', u.last_sign_in_at ? u.last_sign_in_at.toISOString() : '-'].join('\t');

/** Runs one users command; returns the exit code. `usage` exits 2. */
export async function usersCommand(args: string[], usage: (message?: string) => never): Promise<number> {
  const [command, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { role: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  });
  const [name, role] = positionals;
  const needs = { add: 1, list: 0, 'set-role': 2, disable: 1, enable: 1, 'reset-password': 1 } as Record<string, number>;
  if (command === undefined || !(command in needs)) usage(command ? `unknown users command: ${command}` : undefined);
  if (positionals.length !== needs[command]) usage(`users ${command} takes ${needs[command]} argument(s)`);
  if (command === 'add' && !values.role) usage('users add needs --role viewer|operator|admin');
  const password = command === 'add' && values['password-stdin'] ? await readPasswordLine() : undefined;

  // The one way the CLI finds its database (cli-database.ts: DATABASE_URL, or DATA_DIR's embedded
  // one, a running server's as it runs); migrated first, so a change works on a database no server
  // has started on yet.
  const database = await openCliDatabase().catch((error: unknown) => {
    if (!(error instanceof CliError)) throw error;
    process.stderr.write(`users ${command}: ${error.message}\n`);
    return null;
  });
  if (!database) return 2;
  const db = { pool: createPool(database.url, { max: 2 }), close: async () => {} };
  db.close = async () => (await db.pool.end(), await database.close());
  await runMigrations(db.pool);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    if (command === 'list') for (const u of await listUsers(db.pool)) out(listLine(u));
    if (command === 'add') {
      const { user, generatedPassword } = await addUser(db.pool, CLI_ACTOR, { username: name, role: values.role!, password });
      out(`added ${user.username} (${user.role})`);
      if (generatedPassword) out(`password (shown once): ${generatedPassword}`);
    }
    if (command === 'set-role') out(`${(await setRole(db.pool, CLI_ACTOR, { username: name }, role)).username} is now ${role}`);
    if (command === 'disable' || command === 'enable') {
      const user = await setDisabled(db.pool, CLI_ACTOR, { username: name }, command === 'disable');
      out(`${user.username} is ${user.disabled_at ? 'disabled' : 'enabled'}`);
    }
    if (command === 'reset-password') {
      const { user, password: fresh } = await resetPassword(db.pool, CLI_ACTOR, { username: name });
      out(`new password for ${user.username} (shown once): ${fresh}`);
    }
    return 0;
  } catch (error) {
    if (!isAirlockError(error)) throw error;
    process.stderr.write(`refused: ${error.message}\n`);
    return 1;
  } finally {
    await db.close();
  }
}
