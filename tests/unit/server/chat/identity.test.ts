import { describe, expect, it } from 'vitest';
import { createChatAuthenticator } from '../../../../server/chat/identity.ts';

describe('createChatAuthenticator', () => {
  const verify = async (token: string) => {
    if (token !== 'good') throw new Error('invalid');
    return { userId: 'u1', username: 'ann', role: 'operator' };
  };
  const authenticate = createChatAuthenticator(verify);

  it('takes Authorization, or X-HF-Authorization (the Python client\'s token=)', async () => {
    expect(await authenticate({ authorization: 'Bearer good' })).toEqual({ userId: 'u1', username: 'ann', role: 'operator', token: 'good' });
    expect(await authenticate({ 'x-hf-authorization': 'Bearer good' })).toMatchObject({ userId: 'u1', token: 'good' });
  });

  it('answers null (401) for a missing or invalid token', async () => {
    expect(await authenticate({})).toBeNull();
    expect(await authenticate({ authorization: 'Bearer bad' })).toBeNull();
  });
});
