import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../../server/log-redact.ts';

describe('redactUrl', () => {
  it.each([
    ['/api/agent/gradio/gradio_api/queue/data?session_hash=abc123', '/api/agent/gradio/gradio_api/queue/data?session_hash=[redacted]'],
    ['/x?a=1&session_hash=abc&b=2', '/x?a=1&session_hash=[redacted]&b=2'],
    ['/x?SESSION_HASH=abc', '/x?SESSION_HASH=[redacted]'],
    ['/x?session%5Fhash=abc', '/x?session%5Fhash=[redacted]'],
    ['/x?token=t&access_token=u', '/x?token=[redacted]&access_token=[redacted]'],
    ['/api/agent/gradio/gradio_api/heartbeat/abc123', '/api/agent/gradio/gradio_api/heartbeat/[redacted]'],
    ['/api/agent/gradio/gradio_api/heartbeat/abc123?x=1', '/api/agent/gradio/gradio_api/heartbeat/[redacted]?x=1'],
    ['/api/assistant/history?conversation_id=1&before=2', '/api/assistant/history?conversation_id=1&before=2'],
    ['/x?%E0%A4%A=1', '/x?%E0%A4%A=1'],
    ['/plain', '/plain'],
    // Decision-link tokens (issue 36 item 6): the page and the API, with and without an action or query.
    ['/approve/Zm9vYmFyYmF6cXV4LXRva2VuLTAxMjM0NTY3ODk', '/approve/[redacted]'],
    ['/approve/Zm9vYmFy/__data.json?x-sveltekit-invalidated=01', '/approve/[redacted]/__data.json?x-sveltekit-invalidated=01'],
    ['/api/agent/v1/approve/Zm9vYmFy', '/api/agent/v1/approve/[redacted]'],
    ['/api/agent/v1/approve/Zm9vYmFy/approve', '/api/agent/v1/approve/[redacted]/approve'],
    ['/api/agent/v1/approve/Zm9vYmFy/deny?x=1', '/api/agent/v1/approve/[redacted]/deny?x=1'],
    ['/api/agent/v1/approvals/0b5c/approve', '/api/agent/v1/approvals/0b5c/approve'],
  ])('%s', (url, expected) => expect(redactUrl(url)).toBe(expected));
});
