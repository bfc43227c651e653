/**
 * The one list of credential-like path rules. A workspace-relative path is refused when any of its
 * components matches a rule, so a rule naming a directory covers everything beneath it. Matching is
 * case-insensitive throughout: case-folding filesystems resolve `.SSH` to `.ssh`, and nobody keeps a
 * legitimate source file under a name that differs from a credential name only by case.
 *
 * Capture refuses these paths; any other feature that must stay away from credentials reuses this list.
 */

/** Whole component names: credential files, and directories whose every file is off limits. */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  // directories
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.azure',
  '.password-store',
  // the whole git directory: its config can hold credentials and remote URLs with tokens
  '.git',
  // files
  '.netrc',
  '_netrc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.pgpass',
  '.my.cnf',
  '.htpasswd',
  '.dockercfg',
  '.vault-token',
  '.boto',
  '.s3cfg',
  '.terraformrc',
  'credentials',
  'credentials.json',
  'credentials.toml',
  '.bash_history',
  '.zsh_history',
  '.psql_history',
  '.mysql_history',
]);

/** Name prefixes: `.env` and its variants (`.env.local`, `.envrc`), and SSH identities with their suffixes. */
const CREDENTIAL_PREFIXES: readonly string[] = ['.env', 'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519'];

/** Name suffixes: keys, certificates with keys, keystores, and infrastructure state that embeds secrets. */
const CREDENTIAL_SUFFIXES: readonly string[] = [
  '.pem',
  '.key',
  '.p12',
  '.pfx',
  '.jks',
  '.keystore',
  '.ppk',
  '.kdbx',
  '.tfstate',
  '.tfstate.backup',
];

/** A component followed by another: the pair is credential-like where neither name alone is. */
const CREDENTIAL_PAIRS: readonly (readonly [string, string])[] = [
  ['.docker', 'config.json'],
  ['.config', 'gcloud'],
  ['.config', 'gh'],
  ['.config', 'hub'],
  ['.terraform.d', 'credentials.tfrc.json'],
];

export function isCredentialLikeName(component: string): boolean {
  const name = component.toLowerCase();
  return (
    CREDENTIAL_NAMES.has(name) ||
    CREDENTIAL_PREFIXES.some((prefix) => name.startsWith(prefix)) ||
    CREDENTIAL_SUFFIXES.some((suffix) => name.endsWith(suffix))
  );
}

export function isCredentialLikePath(components: readonly string[]): boolean {
  const names = components.map((component) => component.toLowerCase());
  if (names.some(isCredentialLikeName)) return true;
  return names.some((name, index) =>
    CREDENTIAL_PAIRS.some(([parent, child]) => name === parent && names[index + 1] === child),
  );
}
