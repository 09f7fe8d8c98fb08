/**
 * What an MCP call tells an HTTP tool server about who calls (issue 30). A tool server is a third
 * party: it never gets Airlock's service token nor the user's own JWT, either of which works
 * against our api (a "read-only" tool once used them to approve a deploy). By default it gets no
 * identity at all; an entry with `identity: "token"` gets `Authorization: Bearer <token>`, a token
 * minted per call for that server alone (server/auth/mcp-token.ts), which Airlock itself refuses.
 *
 * One connection serves every user at once, so the token cannot be a header fixed when the
 * transport is built: each call runs inside `withCallHeaders`, and the transport's fetch reads it
 * from AsyncLocalStorage. Outside a call (connect, tools/list) there is no user and nothing
 * identity-bearing is sent. Tokens live only in that header: never in the tool's arguments (so
 * never in the model's context, the events, the transcript or the checkpoint) and never in logs.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpServerConfig } from './tools-file.ts';

/** Mints the per-call token of an `identity: "token"` server (the gateway signs with Airlock's key). */
export type McpTokenMinter = (call: { server: string; userId: string; tool: string }) => Promise<string>;

/** The headers one call adds to what the tools file sets. */
export type CallHeaders = Readonly<Record<string, string>>;

const store = new AsyncLocalStorage<CallHeaders>();

/** Runs `fn` (one MCP request) with its call's headers attached. */
export function withCallHeaders<T>(headers: CallHeaders, fn: () => Promise<T>): Promise<T> {
  return store.run(headers, fn);
}

/**
 * The headers a call of `tool` for `userId` carries to the server of `config`: none unless the
 * entry opted in with `identity: "token"`; then a freshly minted token. No user, no token.
 */
export async function callHeaders(config: McpServerConfig, call: { userId: string | null; tool: string }, mint?: McpTokenMinter): Promise<CallHeaders> {
  if (config.transport !== 'http' || config.identity !== 'token') return {};
  if (!call.userId) throw new Error(`the MCP server "${config.name}" wants a user token, and this call has no user`);
  if (!mint) throw new Error(`the MCP server "${config.name}" wants a user token, and this gateway cannot mint one`);
  return { authorization: `Bearer ${await mint({ server: config.name, userId: call.userId, tool: call.tool })}` };
}

/**
 * A fetch that adds the tools file's static headers, then the call's own (the minted token wins,
 * so a static header cannot stand in for it). Outside a call only the static headers go.
 */
export function identityFetch(options: { staticHeaders: Record<string, string>; fetch?: typeof fetch }): typeof fetch {
  const doFetch = options.fetch ?? fetch;
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(options.staticHeaders)) headers.set(k, v);
    for (const [k, v] of Object.entries(store.getStore() ?? {})) headers.set(k, v);
    return doFetch(input, { ...init, headers });
  };
}
