/**
 * Security headers on every response, so that the app is safe served alone as well as behind
 * nginx (which adds the same headers only where a response lacks them, e.g. its own 403/429/502).
 *
 * - API and Gradio responses get the strictest CSP (`default-src 'none'; frame-ancestors 'none'`):
 *   JSON and event streams never need to load anything.
 * - Pages replace that CSP with SvelteKit's own (`kit.csp` in svelte.config.js, hash mode, so its
 *   inline bootstrap script runs): the adapter-node handler sets its header after this one, and
 *   `setHeader` replaces the value rather than adding a second policy.
 * - HSTS only when the request arrived over TLS as this server sees it: its own socket is TLS, or a
 *   TRUST_PROXY peer says `X-Forwarded-Proto: https` (Fastify's `request.protocol`). A client's own
 *   X-Forwarded-Proto is ignored, and plain-HTTP deployments never pin themselves to HTTPS.
 *
 * Headers are set on the raw response in `onRequest`, so hijacked replies (the SvelteKit handler,
 * SSE streams) carry them too.
 * @module
 */
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/** The CSP of every non-page response. */
export const API_CSP_DIRECTIVES = {
  'default-src': ["'none'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
};

export const HSTS_VALUE = 'max-age=31536000; includeSubDomains';
export const PERMISSIONS_POLICY = 'camera=(), microphone=(), geolocation=()';

/** Whether a response to a request seen with this protocol should pin HTTPS. Pure. */
export function wantsHsts(protocol: string | undefined): boolean {
  return protocol === 'https';
}

/** Registers helmet (global) plus HSTS and Permissions-Policy. */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: API_CSP_DIRECTIVES },
    // Decided per request below: helmet's would be sent over plain HTTP too.
    strictTransportSecurity: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    // Gradio clients on other origins may load file= URLs (CORS fetches are not affected anyway).
    crossOriginResourcePolicy: { policy: 'same-site' },
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.raw.setHeader('permissions-policy', PERMISSIONS_POLICY);
    // A decision link's page (issue 26): its token never leaves in a Referer.
    if (request.url.startsWith('/approve/')) reply.raw.setHeader('referrer-policy', 'no-referrer');
    if (wantsHsts(request.protocol)) reply.raw.setHeader('strict-transport-security', HSTS_VALUE);
  });
}
