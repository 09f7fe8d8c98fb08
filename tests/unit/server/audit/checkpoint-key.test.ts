/**
 * The audit checkpoint key and signed heads, pure (issue 36 item 3): the key is a function of the
 * KEK secret alone (nothing to store); a checkpoint verifies with its public JWK only, not with any
 * other key, not with altered claims or another typ; the chain walk with signed heads names a
 * rewrite whose later hashes and head were recomputed, and a signed head whose row is gone.
 */
import { CompactSign, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { chainWalker, genesisHash, rowHash, verdictLine, type ChainRow, type SignedHead } from '../../../../server/audit/chain.ts';
import { checkpointSigner, NoCheckpointKeyError, signedHeadsOf, verifyCheckpoint } from '../../../../server/audit/checkpoint-key.ts';

const SECRET = 'a-key-encryption-key-of-forty-characters';

/** Rows 1..n of one tenant, chained; row `changed` (if any) with other arguments, everything after it recomputed. */
function chain(n: number, changed?: number): ChainRow[] {
  let prev = genesisHash('0');
  return Array.from({ length: n }, (_, i) => {
    const id = i + 1;
    const row = {
      id: String(id), tenant: 'acme', at: new Date(Date.UTC(2026, 11, 7, 0, 0, id)).toISOString(), service_actor: null, user_id: null, username: 'u',
      user_role: null, operation: 'op', method: 'POST', path: '/x', arguments: { id, rewritten: id === changed }, outcome: 'success', status_code: 200,
      error_code: null, tool_call_id: null, conversation_id: null, duration_ms: null, policy_action: null, policy_scope: null, policy_matched: null, prev_hash: prev,
    };
    prev = rowHash(row);
    return { ...row, hash: prev };
  });
}

function walk(rows: ChainRow[], signed: SignedHead[]): string {
  const w = chainWalker({ genesis: '0', signed });
  for (const row of rows) if (w.push(row)) break;
  return verdictLine(w.end([{ tenant: 'acme', last_id: rows.at(-1)!.id, hash: rows.at(-1)!.hash! }]));
}

describe('the checkpoint key', () => {
  it('is derived from the KEK alone, and only its public JWK verifies a checkpoint', async () => {
    const signer = await checkpointSigner(SECRET);
    expect((await checkpointSigner(SECRET)).publicJwk).toEqual(signer.publicJwk);
    const other = await checkpointSigner(`${SECRET}!`);
    expect(other.kid).not.toBe(signer.kid);
    expect(signer.publicJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'Ed25519' });
    expect(signer.publicJwk).not.toHaveProperty('d');
    const jws = await signer.sign({ tenant: 'acme', last_id: '9', hash: 'h' }, new Date(0));
    expect(await verifyCheckpoint(jws, signer.publicJwk)).toEqual({ tenant: 'acme', last_id: '9', hash: 'h', iat: 0 });
    expect(await verifyCheckpoint(jws, other.publicJwk)).toBeNull();
    const [header, , sig] = jws.split('.');
    const altered = Buffer.from(JSON.stringify({ tenant: 'acme', last_id: '9', hash: 'other', iat: 0 })).toString('base64url');
    expect(await verifyCheckpoint(`${header}.${altered}.${sig}`, signer.publicJwk)).toBeNull();
  });

  it('refuses a JWS of another typ, and heads with no key to check them', async () => {
    const { privateKey } = await generateKeyPair('Ed25519');
    const foreign = await new CompactSign(new TextEncoder().encode('{}')).setProtectedHeader({ alg: 'Ed25519' }).sign(privateKey);
    const signer = await checkpointSigner(SECRET);
    expect(await verifyCheckpoint(foreign, signer.publicJwk)).toBeNull();
    await expect(signedHeadsOf([{ id: '1', tenant: 'acme', last_id: '3', jws: foreign }], null)).rejects.toBeInstanceOf(NoCheckpointKeyError);
    expect(await signedHeadsOf([{ id: '1', tenant: 'acme', last_id: '3', jws: foreign }], signer.publicJwk)).toEqual({
      failed: { ok: false, id: '3', what: 'signed head 1: not signed by the checkpoint key' },
    });
    expect(await signedHeadsOf([], null)).toEqual({ heads: [] });
  });
});

describe('the chain walk with signed heads', () => {
  const good = chain(10);
  const heads: SignedHead[] = [
    { id: '1', tenant: 'acme', last_id: '4', hash: good[3].hash! },
    { id: '2', tenant: 'acme', last_id: '8', hash: good[7].hash! },
  ];

  it('holds for the chain they signed', () => {
    expect(walk(good, heads)).toBe('ok 10 rows');
  });

  it('names a rewrite with every later hash and the head recomputed: the first row after the head that holds', () => {
    const rewritten = chain(10, 6);
    expect(walk(rewritten, [])).toBe('ok 10 rows'); // the attack, without signed heads
    expect(walk(rewritten, heads)).toBe('tampered: row 5 (signed head 2)');
    expect(walk(chain(10, 2), heads)).toBe('tampered: row 1 (signed head 1)');
    expect(walk(chain(10, 9), heads)).toBe('ok 10 rows'); // after the newest signed head: only a copy outside shows it
  });

  it('names a signed head whose row is gone', () => {
    expect(walk(good.slice(0, 6), heads)).toBe('tampered: row 8 (signed head 2: its row is gone)');
  });
});
