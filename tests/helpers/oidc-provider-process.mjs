// A real OpenID provider for the tests (issue 39): panva's oidc-provider (certified), started as a
// process once per test file, with its own people and groups. The interaction (the provider's
// login page) is `GET /interaction/:uid/as/:account`, which signs that account in; consent is
// granted for our one first-party client. It listens first and prints `listening <issuer>`; the
// client's redirect URIs (which name Airlock's port) then come as one JSON line on stdin, and
// requests wait until the provider is made from them (so no port is guessed ahead).
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import Provider from 'oidc-provider';

const PEOPLE = {
  alice: { preferred_username: 'Alice', email: 'alice@example.com', name: 'Alice Smith', groups: ['oncall'] },
  root: { preferred_username: 'root.admin@example.com', email: 'root@example.com', name: 'Rae Root', groups: ['ops-admins', 'oncall'] },
  mallory: { preferred_username: 'mallory', email: 'mallory@example.com', name: 'Mallory', groups: ['marketing'] },
  operator: { preferred_username: 'operator', email: 'op@example.com', name: 'Olive Op', groups: ['oncall'] },
};

const server = createServer();
let made;
const ready = new Promise((resolve) => (made = resolve));
server.on('request', async (req, res) => (await ready)(req, res));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
process.stdout.write(`listening ${issuer}\n`);
const lines = createInterface({ input: process.stdin });
const client = JSON.parse(await new Promise((resolve) => lines.once('line', resolve)));

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.CLIENT_ID,
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris ?? [],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  cookies: { keys: ['test-provider-cookie-key-0123456789'] },
  // The ID token carries the scopes' claims (groups among them), as Entra, Okta and Keycloak send them.
  conformIdTokenClaims: false,
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'], groups: ['groups'] },
  scopes: ['openid', 'profile', 'email', 'groups'],
  features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, id) => (PEOPLE[id] ? { accountId: id, claims: () => ({ sub: id, ...PEOPLE[id] }) } : undefined),
  // Our one first-party client: consent is given (skip_consent recipe).
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid profile email groups');
    grant.addOIDCClaims(['name', 'preferred_username', 'email', 'groups']);
    await grant.save();
    return grant;
  },
});

const callback = provider.callback();
made(async (req, res) => {
  const as = /^\/interaction\/([^/]+)\/as\/([^/?]+)$/.exec(req.url ?? '');
  if (!as) return callback(req, res);
  try {
    if (!PEOPLE[as[2]]) throw new Error(`no account ${as[2]}`);
    await provider.interactionFinished(req, res, { login: { accountId: as[2] } }, { mergeWithLastSubmission: false });
  } catch (error) {
    res.statusCode = 400;
    res.end(String(error?.message ?? error));
  }
});
process.stdout.write(`ready ${issuer}\n`);
