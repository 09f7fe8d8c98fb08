/**
 * `GET /api/agent/v1/capabilities`: clients ask instead of guessing from versions. Additive only.
 * @module
 */
import { createRequire } from 'node:module';
import { EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX } from './schemas.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

export function capabilities(settings: { heartbeatMs: number; drainRetryAfterMs: number }) {
  return {
    apiVersion: 'v1',
    serviceVersion: `airlock/${version}`,
    features: {
      'events.page': true,
      'events.stream': true,
      'events.resume': true,
      // Opt-in (seed 001): `partials=1` on events/stream; `snapshot=1` adds the answer so far once.
      partials: true,
      'partials.snapshot': true,
      drain: true,
      'chat.request_id': true,
      'runs.cancel': true,
      approvals: true,
      // POST /api/agent/ag-ui: AG-UI runs, approvals as interrupts, Last-Event-ID reconnect.
      'ag-ui': true,
      'ag-ui.resume': true,
      // POST /api/agent/conversations/{id}/events (seed 001's edge write of user.message).
      'events.write': true,
    },
    limits: {
      eventsPageDefault: EVENTS_PAGE_DEFAULT,
      eventsPageMax: EVENTS_PAGE_MAX,
      heartbeatMs: settings.heartbeatMs,
      drainRetryAfterMs: settings.drainRetryAfterMs,
    },
  };
}
