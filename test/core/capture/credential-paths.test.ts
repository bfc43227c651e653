import t from 'tap';
import { isCredentialLikeName, isCredentialLikePath } from '../../../core/capture/credential-paths.js';

const credentialPaths = [
  '.env',
  '.env.local',
  '.env.production',
  '.envrc',
  'app/.ENV',
  '.ssh/config',
  'home/.ssh/authorized_keys',
  '.aws/credentials',
  '.gnupg/pubring.kbx',
  '.netrc',
  '_netrc',
  '.npmrc',
  'pkg/.npmrc',
  '.pypirc',
  '.git-credentials',
  '.docker/config.json',
  '.kube/config',
  '.git/config',
  'vendor/lib/.git/HEAD',
  'certs/server.pem',
  'certs/server.PEM',
  'tls/private.key',
  'store.p12',
  'store.pfx',
  'id_rsa',
  'id_rsa.pub',
  'keys/id_ed25519',
  'keys/id_ed25519_sk',
  'id_ecdsa',
  'id_dsa',
  '.config/gcloud/application_default_credentials.json',
  '.config/gh/hosts.yml',
  'infra/terraform.tfstate',
  '.pgpass',
];

const ordinaryPaths = [
  'README.md',
  'tools/search.json',
  'skills/review.md',
  'src/environment.ts',
  'docs/ssh.md',
  'key/notes.md',
  'keys.json',
  'config.json',
  '.docker/Dockerfile',
  '.config/app.toml',
  'github/workflow.yml',
  '.gitignore',
  '.github/workflows/ci.yml',
  'monkey.txt',
  'pem/notes.txt',
];

t.test('credential-like paths match a rule', async (t) => {
  for (const path of credentialPaths) t.ok(isCredentialLikePath(path.split('/')), path);
});

t.test('ordinary paths match no rule', async (t) => {
  for (const path of ordinaryPaths) t.notOk(isCredentialLikePath(path.split('/')), path);
});

t.test('pairs match only as consecutive components, and names case-insensitively', async (t) => {
  t.notOk(isCredentialLikePath(['.docker', 'x', 'config.json']));
  t.notOk(isCredentialLikePath(['config.json', '.docker']));
  t.ok(isCredentialLikePath(['.DOCKER', 'Config.JSON']));
  t.ok(isCredentialLikeName('.SSH'));
  t.ok(isCredentialLikeName('Server.Key'));
  t.notOk(isCredentialLikeName('server.keys'));
});
