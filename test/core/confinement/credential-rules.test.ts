import { readFileSync } from 'node:fs';
import t from 'tap';
import { CREDENTIAL_PATTERNS, isCredentialLikePath } from '../../../core/confinement/credential-rules.js';

const credentialPaths = [
  '.env',
  '.env.local',
  '.env.production',
  '.envrc',
  'app/.ENV',
  '.ssh/config',
  'home/.ssh/authorized_keys',
  '.aws/credentials',
  '.azure/accessTokens.json',
  '.oci/config',
  '.oci/oci_api_key.pem',
  '.gnupg/pubring.kbx',
  '.password-store/mail.gpg',
  '.netrc',
  '_netrc',
  '.npmrc',
  'pkg/.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.dockercfg',
  '.boto',
  '.s3cfg',
  '.terraformrc',
  'credentials',
  'config/credentials.json',
  'credentials.toml',
  '.docker/config.json',
  '.kube/config',
  '.git/config',
  'vendor/lib/.git/HEAD',
  'certs/server.pem',
  'tls/private.key',
  'store.p12',
  'store.pfx',
  'java/app.jks',
  'release.keystore',
  '.keystore',
  'putty.ppk',
  'vault.kdbx',
  'id_rsa',
  'id_rsa.pub',
  'keys/id_ed25519',
  'keys/id_ed25519_sk',
  'id_ecdsa',
  'id_dsa',
  '.config/gcloud/application_default_credentials.json',
  '.config/gh/hosts.yml',
  '.config/hub',
  'infra/terraform.tfstate',
  'infra/terraform.tfstate.backup',
  '.pgpass',
  '.my.cnf',
  '.htpasswd',
  'web/.htpasswd',
  '.vault-token',
  '.lesshst',
  '.dbshell',
  '.bash_history',
  '.zsh_history',
  '.psql_history',
  '.mysql_history',
  '.python_history',
  '.node_repl_history',
  '.sqlite_history',
  '.sh_history',
  '.rediscli_history',
  '.history',
  '.local/share/fish/fish_history',
  'logs/command_history',
  '.terraform.d/credentials.tfrc.json',
  '.terraform.d/credentials',
  '.terraform.d/credentials.backup',
  'home/.terraform.d/credentials.tfrc.json',
];

/** Each differs from a rule only in a way the rule does not cover. */
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
  '.docker/x/config.json',
  'config.json/.docker',
  '.config/app.toml',
  '.config/gcloudx',
  'github/workflow.yml',
  '.gitignore',
  '.github/workflows/ci.yml',
  'monkey.txt',
  'pem/notes.txt',
  'server.keys',
  'history',
  'histories.txt',
  'history.md',
  'docs/history/intro.md',
  'shell_history.txt',
  '.history.md',
  '_history.md',
  'histories/.bash_history.md',
  'lesshst',
  '.lesshst.bak',
  'dbshell',
  'pgpass',
  'my.cnf',
  '.my.cnf.example',
  'htpasswd.md',
  'vault-token',
  '.oci.md',
  'oci/config',
  '.azure-pipelines.yml',
  'azure/config',
  'keystore',
  'jks/readme.md',
  'p12.txt',
  'store.p12.txt',
  'kdbx',
  'notes.pfx.md',
  'terraform.d/credentials.tfrc.json',
  '.terraform.d/plugins/provider',
  '.terraform.d/x/credentials.tfrc.json',
  '.terraform.d/creds.json',
  'x/credentials.tfrc.json',
  'credential/README.md',
];

t.test('credential-like paths match a rule', async (t) => {
  for (const path of credentialPaths) t.ok(isCredentialLikePath(path.split('/')), path);
});

t.test('ordinary paths, near misses included, match no rule', async (t) => {
  for (const path of ordinaryPaths) t.notOk(isCredentialLikePath(path.split('/')), path);
});

t.test('every rule matches whatever the case', async (t) => {
  for (const path of [
    '.SSH/config',
    'Server.Key',
    'certs/server.PEM',
    '.PYTHON_HISTORY',
    'Fish_History',
    '.LessHst',
    '.DBShell',
    '.OCI/config',
    '.Azure/config',
    '.Config/GCloud/creds.json',
    '.Docker/Config.JSON',
    '.Terraform.D/Credentials.TFRC.json',
    'Store.P12',
    'Vault.KDBX',
    '.VAULT-TOKEN',
    '.HTPASSWD',
    '.My.Cnf',
  ]) {
    t.ok(isCredentialLikePath(path.split('/')), path);
  }
});

t.test('a parent/child rule matches only the child directly inside the parent', async (t) => {
  t.ok(isCredentialLikePath(['.docker', 'config.json']));
  t.notOk(isCredentialLikePath(['.docker', 'x', 'config.json']));
  t.notOk(isCredentialLikePath(['config.json', '.docker']));
  t.notOk(isCredentialLikePath(['.docker']), 'the parent alone is not credential-like');
  t.notOk(isCredentialLikePath(['.terraform.d']));
  t.ok(isCredentialLikePath(['.terraform.d', 'credentials.tfrc.json', 'x']), 'and covers what is below');
});

t.test('a one-star name needs room for both its prefix and its suffix', async (t) => {
  t.notOk(isCredentialLikePath(['.']), 'the prefix and the suffix of .*history do not overlap');
  t.ok(isCredentialLikePath(['_history']), 'an empty run is a run');
});

t.test('every pattern is lowercase, with at most one star per name and at most one parent', async (t) => {
  for (const pattern of CREDENTIAL_PATTERNS) {
    const names = pattern.split('/');
    t.equal(pattern, pattern.toLowerCase(), pattern);
    t.ok(names.length <= 2, `${pattern}: one name or a parent and its child`);
    t.ok(
      names.every((name) => name.split('*').length <= 2),
      `${pattern}: at most one star per name`,
    );
    t.ok(!names.includes(''), `${pattern}: no empty name`);
  }
  t.equal(new Set(CREDENTIAL_PATTERNS).size, CREDENTIAL_PATTERNS.length, 'no pattern is listed twice');
});

t.test('docs/protocol.md lists exactly the patterns refused, in order', async (t) => {
  const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');
  const lead = 'is a name `b` directly inside `a`: `';
  const start = doc.indexOf(lead);
  t.not(start, -1, 'the credential sentence is where the test looks for it');
  const listed = doc.slice(start + lead.length, doc.indexOf('`', start + lead.length));
  t.same(listed.trim().split(/\s+/), [...CREDENTIAL_PATTERNS]);
});
