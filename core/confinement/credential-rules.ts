/**
 * The one list of credential-like path rules. A workspace-relative path is refused when any of its
 * components matches a rule, so a rule naming a directory covers everything beneath it. Matching is
 * case-insensitive throughout: case-folding filesystems resolve `.SSH` to `.ssh`, and nobody keeps a
 * legitimate source file under a name that differs from a credential name only by case.
 *
 * Capture refuses these paths; any other feature that must stay away from credentials reuses this list.
 */

/**
 * Every rule, written as docs/protocol.md lists it: a lowercase component name in which one `*` stands
 * for any run of characters (so `.env*` is a prefix, `*.pem` a suffix, `.*history` both), or
 * `parent/child` for a name directly inside another where neither name alone is credential-like.
 */
export const CREDENTIAL_PATTERNS: readonly string[] = [
  // directories whose every file is off limits; the whole git directory, whose config can hold
  // credentials and remote URLs with tokens
  '.ssh',
  '.aws',
  '.azure',
  '.oci',
  '.gnupg',
  '.kube',
  '.password-store',
  '.git',
  // credential and configuration files
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
  // shell, REPL and database histories: typed passwords and connection strings
  '*_history',
  '.*history',
  '.lesshst',
  '.dbshell',
  // `.env` and its variants (`.env.local`, `.envrc`), SSH identities with their suffixes
  '.env*',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  // keys, certificates with keys, keystores, password databases, infrastructure state that embeds secrets
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  '*.ppk',
  '*.kdbx',
  '*.tfstate',
  '*.tfstate.backup',
  // names that are credential-like only inside their parent
  '.docker/config.json',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.terraform.d/credentials*',
];

type NameMatcher = (name: string) => boolean;

function nameMatcher(pattern: string): NameMatcher {
  const star = pattern.indexOf('*');
  if (star === -1) return (name) => name === pattern;
  const prefix = pattern.slice(0, star);
  const suffix = pattern.slice(star + 1);
  return (name) =>
    name.length >= prefix.length + suffix.length && name.startsWith(prefix) && name.endsWith(suffix);
}

/** Each rule as the matchers of its consecutive components: one, or a parent and its child. */
const RULES: readonly (readonly NameMatcher[])[] = CREDENTIAL_PATTERNS.map((pattern) =>
  pattern.split('/').map(nameMatcher),
);

export function isCredentialLikePath(components: readonly string[]): boolean {
  const names = components.map((component) => component.toLowerCase());
  return names.some((_, start) =>
    RULES.some(
      (rule) =>
        start + rule.length <= names.length &&
        rule.every((matches, offset) => matches(names[start + offset]!)),
    ),
  );
}
