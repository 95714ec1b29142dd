// The reference OpenID Connect provider for the single sign-on tests: oidc-provider (npm,
// OpenID Certified), in its default configuration but for what every deployment must
// say: its one client, its accounts, and the claims its email and profile scopes carry.
// As OpenID Connect Core 5.4 has it for the code flow, those claims are served at the
// UserInfo endpoint, not put in the ID token.
//
// node oidc_provider.mjs NODE_MODULES PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI
//
// Anyone signs in with any password; the login names the account:
//   NAME            NAME@example.org, verified, called "NAME Example"
//   unverified-NAME NAME@example.org, not verified
//   anonymous-NAME  no address at all
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [modules, port, clientId, clientSecret, redirect] = process.argv.slice(2);
const { default: Provider } = await import(pathToFileURL(join(modules, 'oidc-provider', 'lib', 'index.js')).href);

function claimsOf(login) {
  const [kind, name] = login.includes('-') ? login.split(/-(.*)/s) : ['', login];
  switch (kind) {
    case 'unverified':
      return { email: `${name}@example.org`, email_verified: false };
    case 'anonymous':
      return {};
    default:
      return { email: `${name}@example.org`, email_verified: true, name: `${name} Example` };
  }
}

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirect] }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  async findAccount(ctx, id) {
    return { accountId: id, async claims() { return { sub: id, ...claimsOf(id) }; } };
  },
});
provider.listen(Number(port), '127.0.0.1', () => console.log(`listening on ${port}`));
