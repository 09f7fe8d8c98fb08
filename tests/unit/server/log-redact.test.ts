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
  ])('%s', (url, expected) => expect(redactUrl(url)).toBe(expected));
});
