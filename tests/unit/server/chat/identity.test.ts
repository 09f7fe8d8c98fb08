import { describe, expect, it } from 'vitest';
import { AuthError } from '../../../../server/auth/index.ts';
import { createChatAuthenticator } from '../../../../server/chat/identity.ts';
import { ServiceUnavailableError } from '../../../../server/gradio/index.ts';

describe('createChatAuthenticator', () => {
  const verify = async (token: string) => {
    if (token !== 'good') throw new AuthError('TOKEN_INVALID', 'invalid');
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

describe('createChatAuthenticator when the verifier cannot decide', () => {
  const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  it('throws a 503 SERVICE_UNAVAILABLE (never null, which would be a 401)', async () => {
    const authenticate = createChatAuthenticator(async () => {
      throw down;
    });
    const error = await authenticate({ authorization: 'Bearer good' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({
      status: 503,
      body: { detail: expect.stringMatching(/temporarily unavailable/), error: { code: 'SERVICE_UNAVAILABLE', retryable: true } },
      cause: down,
    });
  });

  it('still answers null for an AuthError (a token that is really invalid)', async () => {
    const authenticate = createChatAuthenticator(async () => {
      throw new AuthError('TOKEN_INVALID', 'bad');
    });
    expect(await authenticate({ authorization: 'Bearer x' })).toBeNull();
  });
});
