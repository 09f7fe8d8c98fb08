import { describe, expect, it } from 'vitest';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../../../../server/auth/password.ts';

const FAST = { N: 1024, r: 8, p: 1 };

describe('scrypt password hashing', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery staple', FAST);
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts: the same password hashes differently each time', async () => {
    const [a, b] = await Promise.all([hashPassword('same', FAST), hashPassword('same', FAST)]);
    expect(a).not.toBe(b);
  });

  it('uses the default cost when none is given', async () => {
    expect(await hashPassword('x')).toMatch(/^scrypt\$16384\$8\$1\$/);
  });

  it('treats malformed or foreign hashes as a mismatch, never a throw', async () => {
    for (const stored of ['', 'plain', 'bcrypt$2b$10$abc', 'scrypt$0$8$1$aa$bb', 'scrypt$1024$8$1$aa$', 'scrypt$x$y$z$a$b']) {
      expect(await verifyPassword('x', stored)).toBe(false);
    }
    expect(await verifyPassword('anything', DUMMY_HASH)).toBe(false);
  });

  it('normalises unicode, so composed and decomposed forms match', async () => {
    const hash = await hashPassword('caf\u00e9', FAST);
    expect(await verifyPassword('cafe\u0301', hash)).toBe(true);
  });
});
